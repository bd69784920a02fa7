#include "distributed/halo_exchange.hpp"

#include <span>
#include <utility>

#include "base/kernel_table.hpp"

namespace simrun::solvers {

namespace {

template <typename T>
std::size_t bytes_of(std::int64_t values) {
    return static_cast<std::size_t>(values) * sizeof(T);
}

template <typename T>
std::span<std::byte> message_bytes(T* at, std::int64_t values) {
    return {reinterpret_cast<std::byte*>(at), bytes_of<T>(values)};
}

// Every neighbour's runs, one index after another.
std::vector<std::int64_t> all_indices(const HaloPlan& plan, bool sent) {
    std::vector<std::int64_t> indices;
    for (const HaloPlan::Neighbour& n : plan.neighbours) {
        const std::vector<std::int64_t> mine = run_indices(sent ? n.sent : n.received);
        indices.insert(indices.end(), mine.begin(), mine.end());
    }
    return indices;
}

}  // namespace

template <typename T>
HaloExchange<T>::HaloExchange(std::shared_ptr<const Backend> backend, HaloPlan plan,
                              Arrival arrival)
    : backend_(std::move(backend)), plan_(std::move(plan)), arrival_(arrival) {
    std::vector<HaloSide> sides;
    for (const HaloPlan::Neighbour& n : plan_.neighbours) {
        const std::int64_t to = run_points(n.sent), from = run_points(n.received);
        send_offset_.push_back(sent_);
        receive_offset_.push_back(received_);
        sent_ += to;
        received_ += from;
        gathered_ = gathered_ || n.sent.size() > 1;
        scattered_ = scattered_ || (arrival_ == Arrival::placed && n.received.size() > 1);
        sides.push_back({n.rank, bytes_of<T>(to), bytes_of<T>(from), sizeof(T)});
    }
    device_ = backend_->open_device_halo(sides);
    // Every rank learns whether another's memory ran out (its exchanges would wait for it).
    // On the device path the halo's kernels read and place by index: no buffers.
    all_or_none(backend_->communicator(), [&] {
        if (gathered_) {
            send_index_ = Array<std::int64_t>::from_host(backend_, all_indices(plan_, true));
            if (!device_) send_buffer_ = Array<T>(backend_, static_cast<std::size_t>(sent_));
        }
        if (scattered_) {
            receive_index_ = Array<std::int64_t>::from_host(backend_, all_indices(plan_, false));
        }
        if (!device_ && (scattered_ || arrival_ == Arrival::kept)) {
            receive_buffer_ = Array<T>(backend_, static_cast<std::size_t>(received_));
        }
        if (!device_ && sent_ + received_ > 0) {
            staging_ = HostStaging<T>(backend_, static_cast<std::size_t>(sent_ + received_));
        }
    });
    device_sends_.resize(plan_.neighbours.size());
    device_receives_.resize(plan_.neighbours.size());
}

template <typename T>
HaloExchange<T>::~HaloExchange() = default;

template <typename T>
void HaloExchange<T>::gather_sent(const T* values) {
    // Traffic: an index and a value read, a value written per value sent.
    if (!gathered_ || sent_ == 0 || device_) return;
    backend_->kernels<T>().gather(*backend_, static_cast<std::size_t>(sent_), send_index_.data(),
                                  values, send_buffer_.data());
}

template <typename T>
void HaloExchange<T>::point_sends(const T* values) {
    for (std::size_t i = 0; i < plan_.neighbours.size(); ++i) {
        const HaloPlan::Neighbour& n = plan_.neighbours[i];
        if (n.sent.empty()) {
            device_sends_[i] = {};
        } else if (n.sent.size() == 1) {
            device_sends_[i] = {values + n.sent.front().first, nullptr};
        } else {
            device_sends_[i] = {values, send_index_.data() + send_offset_[i]};
        }
    }
}

template <typename T>
void HaloExchange<T>::point_receives(T* into) {
    for (std::size_t i = 0; i < plan_.neighbours.size(); ++i) {
        const HaloPlan::Neighbour& n = plan_.neighbours[i];
        if (n.received.empty() || arrival_ == Arrival::kept) {
            device_receives_[i] = {};
        } else if (n.received.size() == 1) {
            device_receives_[i] = {into + n.received.front().first, nullptr};
        } else {
            device_receives_[i] = {into, receive_index_.data() + receive_offset_[i]};
        }
    }
}

template <typename T>
void HaloExchange<T>::start_through_host(const T* values) {
    const Backend& backend = *backend_;
    // The values sent, staged after the work that computes them (one copy of the gathered
    // buffer, else a copy per run): one wait for them all, which also frees the staging of the
    // values received last time, whose copy it waits for.
    if (gathered_) {
        if (sent_ > 0)
            backend.copy_to_host_async(staging_.data(), send_buffer_.data(), bytes_of<T>(sent_));
    } else {
        for (std::size_t i = 0; i < plan_.neighbours.size(); ++i) {
            const std::vector<IndexRun>& runs = plan_.neighbours[i].sent;
            if (runs.empty()) continue;
            backend.copy_to_host_async(staging_.data() + send_offset_[i],
                                       values + runs.front().first,
                                       bytes_of<T>(runs.front().count));
        }
    }
    backend.synchronize();
    const Communicator& ranks = backend.communicator();
    const CommunicationTimer timer(ranks.times().halo, static_cast<double>(bytes_of<T>(sent_)));
    std::vector<Message> sends, receives;
    for (std::size_t i = 0; i < plan_.neighbours.size(); ++i) {
        const HaloPlan::Neighbour& n = plan_.neighbours[i];
        const std::int64_t to = run_points(n.sent), from = run_points(n.received);
        if (to > 0) sends.push_back({n.rank, message_bytes(staging_.data() + send_offset_[i], to)});
        if (from > 0) {
            receives.push_back(
                {n.rank, message_bytes(staging_.data() + sent_ + receive_offset_[i], from)});
        }
    }
    pending_ = ranks.start_exchange(sends, receives);
}

template <typename T>
void HaloExchange<T>::finish_through_host(T* values) {
    const Backend& backend = *backend_;
    const CommunicationTimer timer(backend.communicator().times().halo, 0.0, 0);
    pending_->finish();
    pending_.reset();
    // The values received onto the back-end, in order with the work that reads them (no wait):
    // one copy into the buffer, else a copy per run into the vector.
    if (scattered_ || arrival_ == Arrival::kept) {
        if (received_ > 0) {
            backend.copy_from_host_async(receive_buffer_.data(), staging_.data() + sent_,
                                         bytes_of<T>(received_));
        }
        return;
    }
    for (std::size_t i = 0; i < plan_.neighbours.size(); ++i) {
        const std::vector<IndexRun>& runs = plan_.neighbours[i].received;
        if (runs.empty()) continue;
        backend.copy_from_host_async(values + runs.front().first,
                                     staging_.data() + sent_ + receive_offset_[i],
                                     bytes_of<T>(runs.front().count));
    }
}

template <typename T>
void HaloExchange<T>::scatter_received(T* values) {
    // Traffic: an index and a value read, a value written per value received.
    if (!scattered_ || received_ == 0 || device_) return;
    backend_->kernels<T>().scatter(*backend_, static_cast<std::size_t>(received_),
                                   receive_index_.data(), receive_buffer_.data(), values);
}

template <typename T>
bool HaloExchange<T>::idle() const {
    // A kept exchange goes through its steps also with no neighbour, as the distributed
    // product always has (one exchange counted per product on every rank).
    return plan_.neighbours.empty() && arrival_ == Arrival::placed;
}

template <typename T>
void HaloExchange<T>::begin(const T* values) {
    if (idle()) return;
    gather_sent(values);
    if (device_) {
        point_sends(values);
        device_->send_sides(device_sends_);
        return;
    }
    start_through_host(values);
}

template <typename T>
void HaloExchange<T>::end(T* values) {
    if (idle()) return;
    if (device_) {
        point_receives(values);
        device_->wait_sides(device_receives_);
    } else {
        finish_through_host(values);
    }
    scatter_received(values);
}

template <typename T>
void HaloExchange<T>::exchange(T* values) {
    if (idle()) return;
    gather_sent(values);
    if (device_) {
        point_sends(values);
        point_receives(values);
        device_->exchange_sides(device_sends_, device_receives_);
    } else {
        start_through_host(values);
        finish_through_host(values);
    }
    scatter_received(values);
}

template <typename T>
const T* HaloExchange<T>::received(std::size_t n) const {
    if (device_) return static_cast<const T*>(device_->received(n));
    return receive_buffer_.data() + receive_offset_[n];
}

template class HaloExchange<float>;
template class HaloExchange<double>;

}  // namespace simrun::solvers

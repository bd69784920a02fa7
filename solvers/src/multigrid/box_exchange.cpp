#include "multigrid/box_exchange.hpp"

#include <span>
#include <stdexcept>
#include <utility>

#include "base/kernel_table.hpp"
#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
BoxHalo<T>::BoxHalo(std::shared_ptr<const Backend> backend, const GridBox& box,
                    const std::vector<Box>& parts)
    : backend_(std::move(backend)) {
    const Communicator& ranks = backend_->communicator();
    const auto rank = static_cast<std::size_t>(ranks.rank());
    const Box& own = parts[rank];
    const Box window = grown(own, box, 1);
    // Both sides of a pair list the same points (this rank's in the other's window, or the
    // other's in this one), x fastest: the values travel in that order.
    std::vector<std::int64_t> send, receive;
    std::vector<HaloSide> halo_sides;
    for (std::size_t q = 0; q < parts.size(); ++q) {
        if (q == rank) continue;
        const Box out = intersection(own, grown(parts[q], box, 1));
        const Box in = intersection(window, parts[q]);
        if (out.empty() && in.empty()) continue;
        Side side{static_cast<int>(q), sent_, out.size(), received_, in.size()};
        for_each_point(out, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
            send.push_back(window.index(i, j, k));
        });
        for_each_point(in, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
            receive.push_back(window.index(i, j, k));
        });
        sent_ += side.send_count;
        received_ += side.receive_count;
        sides_.push_back(side);
        halo_sides.push_back({side.rank, static_cast<std::size_t>(side.send_count) * sizeof(T),
                              static_cast<std::size_t>(side.receive_count) * sizeof(T)});
    }
    device_ = backend_->open_device_halo(halo_sides);
    all_or_none(ranks, [&] {
        send_index_ = Array<std::int64_t>::from_host(backend_, send);
        receive_index_ = Array<std::int64_t>::from_host(backend_, receive);
        send_buffer_ = Array<T>(backend_, send.size());
        receive_buffer_ = Array<T>(backend_, receive.size());
        if (!device_ && sent_ + received_ > 0) {
            staging_ = static_cast<T*>(
                backend_->allocate_host(static_cast<std::size_t>(sent_ + received_) * sizeof(T)));
        }
    });
    device_sends_.resize(sides_.size());
    device_receives_.resize(sides_.size());
}

template <typename T>
BoxHalo<T>::~BoxHalo() {
    if (staging_ != nullptr) backend_->release_host(staging_);
}

template <typename T>
void BoxHalo<T>::exchange(T* window) const {
    if (sides_.empty()) return;
    const Backend& backend = *backend_;
    const KernelTable<T>& k = backend.kernels<T>();
    if (sent_ > 0) {
        k.gather(backend, send_index_.size(), send_index_.data(), window, send_buffer_.data());
    }
    if (device_) {
        for (std::size_t s = 0; s < sides_.size(); ++s) {
            const Side& side = sides_[s];
            device_sends_[s] =
                side.send_count > 0 ? send_buffer_.data() + side.send_offset : nullptr;
            device_receives_[s] =
                side.receive_count > 0 ? receive_buffer_.data() + side.receive_offset : nullptr;
        }
        device_->exchange_sides(device_sends_, device_receives_);
    } else {
        const Communicator& ranks = backend.communicator();
        // The points sent, staged after the work that computes them: one wait (it also frees
        // the staging of the points received last time, whose copy it waits for).
        if (sent_ > 0) {
            backend.copy_to_host_async(staging_, send_buffer_.data(),
                                       static_cast<std::size_t>(sent_) * sizeof(T));
        }
        backend.synchronize();
        const CommunicationTimer timer(ranks.times().halo, static_cast<double>(sent_) * sizeof(T));
        std::vector<Message> sends, receives;
        for (const Side& side : sides_) {
            const auto bytes = [](T* at, std::int64_t count) {
                return std::span(reinterpret_cast<std::byte*>(at),
                                 static_cast<std::size_t>(count) * sizeof(T));
            };
            if (side.send_count > 0) {
                sends.push_back({side.rank, bytes(staging_ + side.send_offset, side.send_count)});
            }
            if (side.receive_count > 0) {
                receives.push_back(
                    {side.rank, bytes(staging_ + sent_ + side.receive_offset, side.receive_count)});
            }
        }
        ranks.start_exchange(sends, receives)->finish();
        if (received_ > 0) {
            backend.copy_from_host_async(receive_buffer_.data(), staging_ + sent_,
                                         static_cast<std::size_t>(received_) * sizeof(T));
        }
    }
    if (received_ > 0) {
        k.scatter(backend, receive_index_.size(), receive_index_.data(), receive_buffer_.data(),
                  window);
    }
}

template <typename T>
BoxGather<T>::BoxGather(std::shared_ptr<const Backend> backend, const GridBox& box,
                        const std::vector<Box>& parts, const Box& window)
    : backend_(std::move(backend)) {
    const auto rank = static_cast<std::size_t>(backend_->communicator().rank());
    std::vector<std::int64_t> starts{0};
    for (const Box& part : parts) starts.push_back(starts.back() + part.size());
    own_start_ = starts[rank];
    all_or_none(backend_->communicator(), [&] {
        std::vector<std::int64_t> own, whole(static_cast<std::size_t>(box.size())), in_window;
        for_each_point(parts[rank], [&](std::int64_t i, std::int64_t j, std::int64_t k,
                                        std::int64_t) { own.push_back(window.index(i, j, k)); });
        for (std::size_t q = 0; q < parts.size(); ++q) {
            for_each_point(parts[q],
                           [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t p) {
                               whole[static_cast<std::size_t>(box.row(i, j, k))] = starts[q] + p;
                           });
        }
        for_each_point(window, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
            in_window.push_back(box.row(i, j, k));
        });
        own_index_ = Array<std::int64_t>::from_host(backend_, own);
        whole_index_ = Array<std::int64_t>::from_host(backend_, whole);
        window_index_ = Array<std::int64_t>::from_host(backend_, in_window);
        parts_ = Array<T>(backend_, static_cast<std::size_t>(box.size()));
    });
    gather_ = std::make_unique<LevelGather<T>>(backend_, std::move(starts));
}

template <typename T>
void BoxGather<T>::gather(const T* window, Array<T>& whole) const {
    const KernelTable<T>& k = backend_->kernels<T>();
    k.gather(*backend_, own_index_.size(), own_index_.data(), window, parts_.data() + own_start_);
    gather_->gather(parts_);
    k.gather(*backend_, whole_index_.size(), whole_index_.data(), parts_.data(), whole.data());
}

template <typename T>
void BoxGather<T>::window_of(const Array<T>& whole, T* window) const {
    backend_->kernels<T>().gather(*backend_, window_index_.size(), window_index_.data(),
                                  whole.data(), window);
}

template class BoxHalo<float>;
template class BoxHalo<double>;
template class BoxGather<float>;
template class BoxGather<double>;

}  // namespace simrun::solvers::multigrid

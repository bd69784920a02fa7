#include "multigrid/slab_exchange.hpp"

#include <algorithm>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
SlabHalo<T>::SlabHalo(std::shared_ptr<const Backend> backend, std::int64_t plane,
                      std::int64_t planes, bool before, bool after)
    : backend_(std::move(backend)), plane_(plane), planes_(planes), before_(before), after_(after) {
    const auto plane_bytes = static_cast<std::size_t>(plane_) * sizeof(T);
    const std::size_t before_bytes = before_ ? plane_bytes : 0;
    const std::size_t after_bytes = after_ ? plane_bytes : 0;
    device_ = backend_->open_device_halo({before_bytes, before_bytes, after_bytes, after_bytes});
    // Every rank learns whether another's pinned memory ran out (the next exchange would wait
    // for it otherwise).
    all_or_none(backend_->communicator(), [&] {
        if (!device_ && (before_ || after_)) {
            staging_ = static_cast<T*>(backend_->allocate_host(4 * plane_bytes));
        }
    });
}

template <typename T>
SlabHalo<T>::~SlabHalo() {
    if (staging_ != nullptr) backend_->release_host(staging_);
}

template <typename T>
void SlabHalo<T>::exchange(T* window) const {
    if (!before_ && !after_) return;
    const auto plane_bytes = static_cast<std::size_t>(plane_) * sizeof(T);
    // The window: [halo before] own planes [halo after].
    T* own = window + (before_ ? plane_ : 0);
    T* last = own + (planes_ - 1) * plane_;
    if (device_) {
        device_->exchange(before_ ? own : nullptr, after_ ? last : nullptr,
                          before_ ? window : nullptr, after_ ? last + plane_ : nullptr);
        return;
    }
    const Communicator& ranks = backend_->communicator();
    T* send_before = staging_;
    T* send_after = staging_ + plane_;
    T* receive_before = staging_ + 2 * plane_;
    T* receive_after = staging_ + 3 * plane_;
    // The planes sent, staged after the work that computes them: one wait for both (it also
    // frees the buffers of the planes received last time, whose copy it waits for).
    if (before_) backend_->copy_to_host_async(send_before, own, plane_bytes);
    if (after_) backend_->copy_to_host_async(send_after, last, plane_bytes);
    backend_->synchronize();
    const CommunicationTimer timer(ranks.times().halo,
                                   static_cast<double>((before_ ? 1 : 0) + (after_ ? 1 : 0)) *
                                       static_cast<double>(plane_bytes));
    const auto bytes = [&](bool side, T* buffer) {
        return side ? std::span(reinterpret_cast<std::byte*>(buffer), plane_bytes)
                    : std::span<std::byte>();
    };
    exchange_with_neighbours(ranks, bytes(before_, send_before), bytes(before_, receive_before),
                             bytes(after_, send_after), bytes(after_, receive_after));
    // In order with the work that reads the window (no wait).
    if (before_) backend_->copy_from_host_async(window, receive_before, plane_bytes);
    if (after_) backend_->copy_from_host_async(last + plane_, receive_after, plane_bytes);
}

namespace {

PlaneRange overlap(const PlaneRange& a, const PlaneRange& b) {
    const std::int64_t first = std::max(a.first, b.first), end = std::min(a.end, b.end);
    return {first, std::max(first, end)};
}

}  // namespace

template <typename V>
void move_planes(const Communicator& ranks, const std::vector<PlaneRange>& have,
                 const std::vector<PlaneRange>& want, std::int64_t plane, std::span<const V> from,
                 std::span<V> into) {
    const auto rank = static_cast<std::size_t>(ranks.rank());
    const PlaneRange& mine = have[rank];
    const PlaneRange& wanted = want[rank];
    const auto part = [&](auto values, const PlaneRange& range, const PlaneRange& within) {
        return values.subspan(static_cast<std::size_t>((range.first - within.first) * plane),
                              static_cast<std::size_t>(range.count() * plane));
    };
    std::vector<Message> sends, receives;
    std::int64_t arriving = 0;
    for (std::size_t q = 0; q < have.size(); ++q) {
        const int other = static_cast<int>(q);
        const PlaneRange to_q = overlap(mine, want[q]);
        const PlaneRange from_q = overlap(have[q], wanted);
        arriving += from_q.count();
        if (q == rank) {
            if (to_q.count() > 0) {
                const auto source = part(from, to_q, mine);
                std::copy(source.begin(), source.end(), part(into, to_q, wanted).begin());
            }
            continue;
        }
        if (to_q.count() > 0) {
            const auto source = part(from, to_q, mine);
            sends.push_back({other, std::as_writable_bytes(std::span<V>(
                                        const_cast<V*>(source.data()), source.size()))});
        }
        if (from_q.count() > 0) {
            receives.push_back({other, std::as_writable_bytes(part(into, from_q, wanted))});
        }
    }
    if (arriving != wanted.count()) {
        throw std::logic_error("multigrid: rank " + std::to_string(rank) + " wants planes [" +
                               std::to_string(wanted.first) + ", " + std::to_string(wanted.end) +
                               ") of a level, of which the ranks hold " + std::to_string(arriving));
    }
    if (!sends.empty() || !receives.empty()) ranks.start_exchange(sends, receives)->finish();
}

template <typename T>
LevelHandoff<T>::LevelHandoff(std::shared_ptr<const Backend> backend,
                              std::vector<PlaneRange> restricted, std::vector<PlaneRange> reached,
                              std::vector<PlaneRange> held, std::int64_t plane)
    : backend_(std::move(backend)),
      restricted_(std::move(restricted)),
      reached_(std::move(reached)),
      held_(std::move(held)),
      plane_(plane) {
    const auto rank = static_cast<std::size_t>(backend_->communicator().rank());
    window_ = Array<T>(backend_, static_cast<std::size_t>(reached_[rank].count() * plane_));
    // Zero once: the window's planes no rank restricts (beyond this rank's own) stay finite.
    if (window_.size() > 0) fill(window_, T(0));
    const std::int64_t most =
        std::max({restricted_[rank].count(), reached_[rank].count(), held_[rank].count()});
    sent_.resize(static_cast<std::size_t>(most * plane_));
    received_.resize(static_cast<std::size_t>(most * plane_));
}

template <typename T>
void LevelHandoff<T>::move(const std::vector<PlaneRange>& have, const std::vector<PlaneRange>& want,
                           const T* from, T* into) const {
    const Communicator& ranks = backend_->communicator();
    const auto rank = static_cast<std::size_t>(ranks.rank());
    const auto values = [&](const PlaneRange& range) {
        return static_cast<std::size_t>(range.count() * plane_);
    };
    const std::size_t sending = values(have[rank]), receiving = values(want[rank]);
    if (sending == 0 && receiving == 0) return;
    if (sending > 0) backend_->copy_to_host(sent_.data(), from, sending * sizeof(T));
    const CommunicationTimer timer(ranks.times().gathers, static_cast<double>(sending * sizeof(T)));
    move_planes<T>(ranks, have, want, plane_, std::span<const T>(sent_.data(), sending),
                   std::span<T>(received_.data(), receiving));
    if (receiving > 0) backend_->copy_from_host(into, received_.data(), receiving * sizeof(T));
}

template <typename T>
void LevelHandoff<T>::hand_down(T* into) const {
    const auto rank = static_cast<std::size_t>(backend_->communicator().rank());
    move(restricted_, held_,
         window_.data() + (restricted_[rank].first - reached_[rank].first) * plane_, into);
}

template <typename T>
void LevelHandoff<T>::take_up(const T* from) const {
    move(held_, reached_, from, window_.data());
}

template <typename T>
LevelGather<T>::LevelGather(std::shared_ptr<const Backend> backend,
                            std::vector<std::int64_t> starts)
    : backend_(std::move(backend)), starts_(std::move(starts)) {
    const Communicator& ranks = backend_->communicator();
    for (std::size_t q = 0; q + 1 < starts_.size(); ++q) {
        slot_ = std::max(slot_, starts_[q + 1] - starts_[q]);
    }
    const int rank = ranks.rank(), count = ranks.size();
    const auto bytes = static_cast<std::size_t>(slot_) * sizeof(T);
    const std::size_t before = rank > 0 ? bytes : 0, after = rank + 1 < count ? bytes : 0;
    device_ = backend_->open_device_halo({before, before, after, after});
    if (device_) {
        slots_ = Array<T>(backend_, static_cast<std::size_t>(slot_ * count));
        // Zero once: a slot's points beyond a shorter part travel too.
        if (slots_.size() > 0) fill(slots_, T(0));
    }
}

template <typename T>
LevelGather<T>::~LevelGather() = default;

template <typename T>
void LevelGather<T>::gather(Array<T>& whole) const {
    if (!device_) return gather_through_host(whole);
    const int rank = backend_->communicator().rank();
    const int count = backend_->communicator().size();
    const auto part = [&](int q) { return static_cast<std::size_t>(starts_[q + 1] - starts_[q]); };
    const auto slot = [&](int q) { return slots_.data() + static_cast<std::size_t>(slot_) * q; };
    if (part(rank) > 0) {
        backend_->copy(slot(rank), whole.data() + starts_[rank], part(rank) * sizeof(T));
    }
    // The exchanges are counted as one gather, not as halo exchanges (their waits on the GPU
    // stay with the halo's).
    CommunicationTimes& times = backend_->communicator().times();
    const CommunicationCost halo = times.halo;
    for (int s = 1; s < count; ++s) {
        // To the rank after, the part that came from before (this rank's own at first); to the
        // rank before, the one from after; a side with none to pass sends its own slot, unread.
        const int to_after = rank - s + 1, to_before = rank + s - 1;
        const int from_before = rank - s, from_after = rank + s;
        device_->exchange(slot(to_before < count ? to_before : rank),
                          slot(to_after >= 0 ? to_after : rank),
                          from_before >= 0 ? slot(from_before) : nullptr,
                          from_after < count ? slot(from_after) : nullptr);
    }
    const CommunicationCost exchanges = times.halo - halo;
    times.halo = halo;
    times.gathers += {1, exchanges.seconds, exchanges.bytes_sent};
    for (int q = 0; q < count; ++q) {
        if (q != rank && part(q) > 0) {
            backend_->copy(whole.data() + starts_[q], slot(q), part(q) * sizeof(T));
        }
    }
}

template <typename T>
void LevelGather<T>::gather_through_host(Array<T>& whole) const {
    const Communicator& ranks = backend_->communicator();
    const std::vector<std::int64_t>& starts = starts_;
    const auto rank = static_cast<std::size_t>(ranks.rank());
    const auto first = static_cast<std::size_t>(starts[rank]);
    const auto count = static_cast<std::size_t>(starts[rank + 1] - starts[rank]);
    std::vector<T> own(count);
    if (count > 0) backend_->copy_to_host(own.data(), whole.data() + first, count * sizeof(T));
    const auto all = ranks.all_gather(std::as_bytes(std::span<const T>(own)));
    std::vector<T> values(whole.size());
    for (std::size_t r = 0; r < all.size(); ++r) {
        const auto expected = static_cast<std::size_t>(starts[r + 1] - starts[r]) * sizeof(T);
        if (all[r].size() != expected) {
            throw std::logic_error("multigrid: rank " + std::to_string(r) + " sent " +
                                   std::to_string(all[r].size()) + " bytes of a gathered level, " +
                                   std::to_string(expected) + " expected");
        }
        if (expected > 0) std::memcpy(values.data() + starts[r], all[r].data(), expected);
    }
    whole.copy_from_host(values);
}

template void move_planes(const Communicator&, const std::vector<PlaneRange>&,
                          const std::vector<PlaneRange>&, std::int64_t, std::span<const double>,
                          std::span<double>);
template void move_planes(const Communicator&, const std::vector<PlaneRange>&,
                          const std::vector<PlaneRange>&, std::int64_t, std::span<const float>,
                          std::span<float>);
template class LevelHandoff<float>;
template class LevelHandoff<double>;
template class SlabHalo<float>;
template class SlabHalo<double>;
template class LevelGather<float>;
template class LevelGather<double>;

}  // namespace simrun::solvers::multigrid

#include "multigrid/slab_exchange.hpp"

#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "simrun/solvers/base/communicator.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
SlabHalo<T>::SlabHalo(std::shared_ptr<const Backend> backend, std::int64_t plane,
                      std::int64_t planes, bool before, bool after)
    : backend_(std::move(backend)), plane_(plane), planes_(planes), before_(before), after_(after) {
    if (!before_ && !after_) return;
    const auto plane_bytes = static_cast<std::size_t>(plane_) * sizeof(T);
    const std::size_t before_bytes = before_ ? plane_bytes : 0;
    const std::size_t after_bytes = after_ ? plane_bytes : 0;
    device_ = backend_->open_device_halo({before_bytes, before_bytes, after_bytes, after_bytes});
    // Every rank learns whether another's pinned memory ran out (the next exchange would wait
    // for it otherwise).
    all_or_none(backend_->communicator(), [&] {
        if (!device_) staging_ = static_cast<T*>(backend_->allocate_host(4 * plane_bytes));
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

template <typename T>
void gather_whole(const Backend& backend, const std::vector<std::int64_t>& starts,
                  Array<T>& whole) {
    const Communicator& ranks = backend.communicator();
    const auto rank = static_cast<std::size_t>(ranks.rank());
    const auto first = static_cast<std::size_t>(starts[rank]);
    const auto count = static_cast<std::size_t>(starts[rank + 1] - starts[rank]);
    std::vector<T> own(count);
    if (count > 0) backend.copy_to_host(own.data(), whole.data() + first, count * sizeof(T));
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

template class SlabHalo<float>;
template class SlabHalo<double>;
template void gather_whole(const Backend&, const std::vector<std::int64_t>&, Array<float>&);
template void gather_whole(const Backend&, const std::vector<std::int64_t>&, Array<double>&);

}  // namespace simrun::solvers::multigrid

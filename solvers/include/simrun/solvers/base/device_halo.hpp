#pragma once
// A halo exchange with the neighbouring ranks that stays on the devices: each rank copies the
// rows its neighbours read straight into their memory and the work that reads the rows it
// receives waits for them on the device, so that no host waits and nothing passes through
// host memory. The CUDA back-end makes one where every rank's GPU can reach its neighbours'
// through CUDA IPC (peers over NVLink or PCIe; the same GPU only with SIMRUN_HALO=device);
// elsewhere halos are staged through host memory and sent as MPI messages
// (Backend::open_device_halo gives none).
//
// A halo is opened with its sides: the neighbours, each with the bytes sent to it and received
// from it (a grid's slabs have two, the ranks before and after; a box of a process grid up to
// 26). A halo opened with HaloBytes has the sides of the rank before and the rank after, where
// they take part, and the calls by side below.
#include <algorithm>
#include <array>
#include <cstddef>
#include <span>

namespace simrun::solvers {

// A neighbour's part in an exchange: its rank, the bytes this rank sends it and those it
// receives from it (the neighbour's matching side holds them the other way round). A side of
// no bytes either way takes no part.
struct HaloSide {
    int rank = 0;
    std::size_t to = 0, from = 0;
};

// The bytes of an exchange with the rank before and the rank after (sides of no rank, or of no
// bytes either way, take no part): this rank's `to_after` is the next rank's `from_before`.
struct HaloBytes {
    std::size_t to_before = 0, from_before = 0;
    std::size_t to_after = 0, from_after = 0;
};

class DeviceHalo {
public:
    virtual ~DeviceHalo() = default;

    // Collective with the neighbours, in the order of the back-end's work, returning at once:
    // copies each side's bytes at `to[side]` (device memory of the size opened with; null for a
    // side that sends none) into that neighbour's memory and tells it they are there.
    virtual void send_sides(std::span<const void* const> to) = 0;
    // Makes the work issued after it wait until every neighbour's bytes of the last send have
    // arrived in received(side), and copies them on to `into[side]` (device memory) where that
    // is not null; `into` empty: nothing copied on. Work issued between send and wait (a
    // product's own rows) runs while the neighbours' bytes travel.
    virtual void wait_sides(std::span<void* const> into) = 0;
    // send_sides, then wait_sides (a back-end may do both in one step).
    virtual void exchange_sides(std::span<const void* const> to, std::span<void* const> into) {
        send_sides(to);
        wait_sides(into);
    }
    // The bytes the last send's neighbour on `side` sent (device memory; null for a side that
    // receives none), there for the work issued before the next send: two buffers a side, so
    // that a neighbour one exchange ahead writes into the other. Sends and waits alternate
    // (std::logic_error otherwise); byte counts are multiples of 4 (else no device halo is
    // made).
    virtual const void* received(std::size_t side) const = 0;

    // By side, for a halo opened with HaloBytes: the rank before and the rank after.
    void send(const void* to_before, const void* to_after) {
        const auto to = by_side<const void*>(to_before, to_after);
        send_sides(std::span(to.data(), sides()));
    }
    void wait(void* into_before, void* into_after) {
        const auto into = by_side<void*>(into_before, into_after);
        wait_sides(std::span(into.data(), sides()));
    }
    void wait() { wait(nullptr, nullptr); }
    void exchange(const void* to_before, const void* to_after, void* into_before,
                  void* into_after) {
        const auto to = by_side<const void*>(to_before, to_after);
        const auto into = by_side<void*>(into_before, into_after);
        exchange_sides(std::span(to.data(), sides()), std::span(into.data(), sides()));
    }
    void exchange(const void* to_before, const void* to_after) {
        exchange(to_before, to_after, nullptr, nullptr);
    }
    const void* received_before() const { return before_ < 0 ? nullptr : received(before_); }
    const void* received_after() const { return after_ < 0 ? nullptr : received(after_); }
    // Which sides are the rank before and after (-1: none); set by Backend::open_device_halo.
    void set_line_sides(int before, int after) {
        before_ = before;
        after_ = after;
    }

private:
    std::size_t sides() const { return static_cast<std::size_t>(std::max(before_, after_) + 1); }
    template <typename P>
    std::array<P, 2> by_side(P before, P after) const {
        std::array<P, 2> sides{nullptr, nullptr};
        if (before_ >= 0) sides[static_cast<std::size_t>(before_)] = before;
        if (after_ >= 0) sides[static_cast<std::size_t>(after_)] = after;
        return sides;
    }
    int before_ = -1, after_ = -1;
};

}  // namespace simrun::solvers

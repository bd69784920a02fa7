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
// 26); the distributed product's and every multigrid level's halo exchange take it where the
// back-end opens one.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>

namespace simrun::solvers {

// A neighbour's part in an exchange: its rank, the bytes this rank sends it and those it
// receives from it (the neighbour's matching side holds them the other way round), and the
// bytes of a value (4 or 8: what a side's index counts). A side of no bytes either way takes
// no part.
struct HaloSide {
    int rank = 0;
    std::size_t to = 0, from = 0;
    std::size_t value_bytes = 4;
};

// Where a side's values lie in device memory: its bytes in order from `at` on, or, where
// `index` is given (device memory, an entry a value), the values at[index[k]] for k in order
// (a box's face strided in a vector: gathered as sent, scattered as received, by the exchange's
// own kernels). `at` null: a side that sends (or places) none.
template <typename Pointer>
struct SideValues {
    Pointer at = nullptr;
    const std::int64_t* index = nullptr;
};
using SentValues = SideValues<const void*>;
using PlacedValues = SideValues<void*>;

class DeviceHalo {
public:
    virtual ~DeviceHalo() = default;

    // Collective with the neighbours, in the order of the back-end's work, returning at once:
    // copies each side's values `to[side]` (the bytes opened with) into that neighbour's memory
    // and tells it they are there.
    virtual void send_sides(std::span<const SentValues> to) = 0;
    // Makes the work issued after it wait until every neighbour's bytes of the last send have
    // arrived in received(side), and copies them on to `into[side]` where its `at` is not null;
    // `into` empty: nothing copied on. Work issued between send and wait (a product's own rows)
    // runs while the neighbours' bytes travel.
    virtual void wait_sides(std::span<const PlacedValues> into) = 0;
    // send_sides, then wait_sides (a back-end may do both in one step).
    virtual void exchange_sides(std::span<const SentValues> to,
                                std::span<const PlacedValues> into) {
        send_sides(to);
        wait_sides(into);
    }
    // The same with each side's bytes in order from its pointer (null: none).
    void send_sides(std::span<const void* const> to) {
        std::array<SentValues, most_sides> values;
        send_sides(in_order(to, values));
    }
    void wait_sides(std::span<void* const> into) {
        std::array<PlacedValues, most_sides> values;
        wait_sides(in_order(into, values));
    }
    void exchange_sides(std::span<const void* const> to, std::span<void* const> into) {
        std::array<SentValues, most_sides> sent;
        std::array<PlacedValues, most_sides> placed;
        exchange_sides(in_order(to, sent), in_order(into, placed));
    }
    // The most sides a halo has: a box of a 3D process grid and its 26 neighbours.
    static constexpr std::size_t most_sides = 26;
    // The bytes the last send's neighbour on `side` sent (device memory; null for a side that
    // receives none), there for the work issued before the next send: two buffers a side, so
    // that a neighbour one exchange ahead writes into the other. Sends and waits alternate
    // (std::logic_error otherwise); byte counts are multiples of 4 (else no device halo is
    // made).
    virtual const void* received(std::size_t side) const = 0;

private:
    template <typename Pointer>
    static std::span<const SideValues<Pointer>> in_order(
        std::span<Pointer const> at, std::array<SideValues<Pointer>, most_sides>& values) {
        if (at.size() > most_sides) throw std::logic_error("device halo: more than 26 sides");
        for (std::size_t i = 0; i < at.size(); ++i) values[i] = {at[i], nullptr};
        return std::span<const SideValues<Pointer>>(values.data(), at.size());
    }
};

}  // namespace simrun::solvers

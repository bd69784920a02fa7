#pragma once
// A halo exchange with the neighbouring ranks that stays on the devices: each rank copies the
// rows its neighbours read straight into their memory and the work that reads the rows it
// receives waits for them on the device, so that no host waits and nothing passes through
// host memory. The CUDA back-end makes one where every rank's GPU can reach its neighbours'
// through CUDA IPC (peers over NVLink or PCIe; the same GPU only with SIMRUN_HALO=device);
// elsewhere halos are staged through host memory and sent as MPI messages
// (Backend::open_device_halo gives none).
#include <cstddef>

namespace simrun::solvers {

// The bytes of one exchange, fixed when it is opened: those this rank sends to the rank
// before and after it, and those it receives from them (the neighbour's matching sizes:
// this rank's `to_after` is the next rank's `from_before`). A side with no rank, or no bytes
// either way, takes no part.
struct HaloBytes {
    std::size_t to_before = 0, from_before = 0;
    std::size_t to_after = 0, from_after = 0;
};

class DeviceHalo {
public:
    virtual ~DeviceHalo() = default;
    // Collective with the neighbours, in the order of the back-end's work, returning at once:
    // copies the bytes at `to_before` and `to_after` (device memory of the sizes opened with;
    // null for a side of no bytes) into the neighbours' memory and tells them they are there.
    virtual void send(const void* to_before, const void* to_after) = 0;
    // Makes the work issued after it wait until the neighbours' bytes of the last send have
    // arrived in received_before() and received_after(), and copies them on to `into_before`
    // and `into_after` (device memory) where those are not null. Work issued between send and
    // wait (a product's own rows) runs while the neighbours' bytes travel.
    virtual void wait(void* into_before, void* into_after) = 0;
    void wait() { wait(nullptr, nullptr); }
    // send, then wait (a back-end may do both in one step).
    virtual void exchange(const void* to_before, const void* to_after, void* into_before,
                          void* into_after) {
        send(to_before, to_after);
        wait(into_before, into_after);
    }
    void exchange(const void* to_before, const void* to_after) {
        exchange(to_before, to_after, nullptr, nullptr);
    }
    // The bytes the last send's neighbours sent (device memory; null for a side of no bytes),
    // there for the work issued before the next send: two buffers a side, so that a neighbour
    // one exchange ahead writes into the other. Sends and waits alternate (std::logic_error
    // otherwise); byte counts are multiples of 4 (else no device halo is made).
    virtual const void* received_before() const = 0;
    virtual const void* received_after() const = 0;
};

}  // namespace simrun::solvers

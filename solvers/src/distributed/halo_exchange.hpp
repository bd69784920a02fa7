#pragma once
// One halo exchange, made once per layout from its plan (halo_plan.hpp) and begun and ended
// around the work that does not read the halo (the own rows of a product), as AMReX's FillBoundary
// and Ginkgo's RowGatherer are: the distributed product and every multigrid level use it.
//
// The values sent to a neighbour are copied straight from the vector where they are one run of
// it (a slab's plane), else read by index (a box's face strided in the vector); the values
// received go straight into their run of the vector, else are placed by index. On the GPUs,
// where Backend::open_device_halo gives a device halo (a side per neighbour), the values travel
// into the neighbours' memory with no host wait, each neighbour's read or placed by index (or
// not) by the halo's own kernels; else through pinned host memory, gathered into a buffer and
// scattered from one by a kernel each where some neighbour's values are not one run: the values
// sent to the host (one wait for the back-end, which also frees the staging of the values received
// last time), the messages, the values received back onto the back-end in order with the work
// after, the time from that wait on counted in the communicator's halo cost (Communicator::times),
// one exchange per begin.
#include <cstdint>
#include <memory>
#include <vector>

#include "distributed/halo_plan.hpp"
#include "distributed/host_staging.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/base/device_halo.hpp"

namespace simrun::solvers {

template <typename T>
class HaloExchange {
public:
    // Where the values received go: into the vector given to end() at the plan's received
    // indices (placed), or left in the exchange, read through received() (kept: the plan's
    // received runs count the values only).
    enum class Arrival { placed, kept };

    // Collective: every rank makes its exchange at the same point (a device halo is opened with
    // the neighbours), also a rank of no neighbours.
    HaloExchange(std::shared_ptr<const Backend> backend, HaloPlan plan,
                 Arrival arrival = Arrival::placed);
    ~HaloExchange();
    HaloExchange(const HaloExchange&) = delete;
    HaloExchange& operator=(const HaloExchange&) = delete;

    // Sends the neighbours their values of `values`, for the back-end's work issued before it;
    // returns with them under way. Collective with the neighbours.
    void begin(const T* values);
    // Waits (on the device, or on the host) for the neighbours' values and places them in
    // `values` (null where kept), for the back-end's work issued after it.
    void end(T* values);
    // begin then end (on the GPUs one kernel for both).
    void exchange(T* values);
    // After end(), where kept: the values received from neighbour `n` of the plan.
    const T* received(std::size_t n) const;

    const HaloPlan& plan() const { return plan_; }

private:
    bool idle() const;
    void gather_sent(const T* values);
    // The device halo's sides: where each neighbour's values are sent from and received into
    // (by index where they are not one run).
    void point_sends(const T* values);
    void point_receives(T* into);
    void start_through_host(const T* values);
    void finish_through_host(T* values);
    void scatter_received(T* values);

    std::shared_ptr<const Backend> backend_;
    HaloPlan plan_;
    Arrival arrival_;
    // Per neighbour: where its values start in the buffers and in the index arrays.
    std::vector<std::int64_t> send_offset_, receive_offset_;
    std::int64_t sent_ = 0, received_ = 0;
    bool gathered_ = false;   // some neighbour's values sent are not one run
    bool scattered_ = false;  // some neighbour's values received are not one run (placed)
    // Every neighbour's indices, at its offset (where some neighbour's are not one run); the
    // buffers gathered into and scattered from on the host path.
    Array<std::int64_t> send_index_, receive_index_;
    Array<T> send_buffer_, receive_buffer_;
    std::unique_ptr<DeviceHalo> device_;
    std::vector<SentValues> device_sends_;
    std::vector<PlacedValues> device_receives_;
    // Pinned host: the values sent, then those received; declared before the messages into
    // it, which die first.
    HostStaging<T> staging_;
    std::unique_ptr<PendingExchange> pending_;
};

}  // namespace simrun::solvers

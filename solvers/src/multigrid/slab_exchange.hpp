#pragma once
// What the ranks of a multigrid hierarchy split in slabs (slab_levels.hpp) send each other at
// every cycle: a level's halo planes, and a level gathered whole on every rank. Through host
// memory (pinned on a GPU); on one rank neither is made.
#include <cstdint>
#include <memory>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"

namespace simrun::solvers::multigrid {

// A vector of a level's window: the plane before this rank's planes (where a rank before it
// exists), its own planes, the plane after (where one after it exists). The planes travel on
// the GPUs where the back-end opens a device halo (device_halo.hpp), else through host memory.
template <typename T>
class SlabHalo {
public:
    // Collective where `before` or `after` (a level split over the ranks: every rank has a
    // neighbour): every rank makes its level's halo at the same point.
    SlabHalo(std::shared_ptr<const Backend> backend, std::int64_t plane, std::int64_t planes,
             bool before, bool after);
    ~SlabHalo();
    SlabHalo(const SlabHalo&) = delete;
    SlabHalo& operator=(const SlabHalo&) = delete;

    // Collective with the neighbours: the window's halo planes take the neighbours' planes next
    // to this rank's, for the back-end's work issued after it. Traffic per neighbour, on the
    // GPUs: a plane each way (a peer copy) and a plane copied into the window, no host wait;
    // through the host: a plane each way (device to host, the message, host to device) and one
    // wait for the back-end (its earlier work and the copies to the host), the time from that
    // wait on counted in the communicator's halo cost.
    void exchange(T* window) const;

private:
    std::shared_ptr<const Backend> backend_;
    std::int64_t plane_, planes_;
    bool before_, after_;
    std::unique_ptr<DeviceHalo> device_;
    T* staging_ = nullptr;  // pinned: send before, send after, receive before, receive after
};

// Assembles a level gathered whole on every rank (collective): each rank's own points are
// right in `whole` at starts[rank] .. starts[rank + 1] (starts: size ranks + 1, in points); on
// return every rank's are, on every rank. Traffic: the own points to the host, every rank's
// back (the whole level), and an all-gather of the whole level.
template <typename T>
void gather_whole(const Backend& backend, const std::vector<std::int64_t>& starts, Array<T>& whole);

}  // namespace simrun::solvers::multigrid

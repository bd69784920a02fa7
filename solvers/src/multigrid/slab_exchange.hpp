#pragma once
// What the ranks of a multigrid hierarchy split in slabs (slab_levels.hpp) send each other at
// every cycle: a level's halo planes, a level handed to fewer ranks than the level above, and a
// level gathered whole on every rank. Through host memory (pinned on a GPU), the halo on the
// GPUs where the back-end can; on one rank none is made.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "distributed/halo_exchange.hpp"
#include "distributed/redistribution.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/communicator.hpp"

namespace simrun::solvers::multigrid {

// Planes [first, end) along a level's last axis (the axis its slabs split).
struct PlaneRange {
    std::int64_t first = 0, end = 0;
    std::int64_t count() const { return end - first; }
};

// Moves planes between the ranks (host memory): every rank holds the planes `have[rank]` of a
// level (disjoint ranges, `plane` values each, in `from`) and receives the planes `want[rank]`
// (in `into`) from the ranks that hold them; a rank's planes that it wants itself are copied.
// Point to point only: ranks that neither send nor receive take no part. Throws
// std::logic_error where a wanted plane is held by no rank.
template <typename V>
void move_planes(const Communicator& ranks, const std::vector<PlaneRange>& have,
                 const std::vector<PlaneRange>& want, std::int64_t plane, std::span<const V> from,
                 std::span<V> into);

// A vector of a level's window: the plane before this rank's planes (where a rank before it
// exists), its own planes, the plane after (where one after it exists). The planes travel on
// the GPUs where the back-end opens a device halo (device_halo.hpp), else through host memory.
template <typename T>
class SlabHalo {
public:
    // Collective: every rank makes its level's halo at the same point, also a rank that holds
    // none of the level (no `before`, no `after`: a level split over fewer ranks).
    SlabHalo(std::shared_ptr<const Backend> backend, std::int64_t plane, std::int64_t planes,
             bool before, bool after);

    // Collective with the neighbours: the window's halo planes take the neighbours' planes next
    // to this rank's, for the back-end's work issued after it. Traffic per neighbour, on the
    // GPUs: a plane each way (a peer copy) and a plane copied into the window, no host wait;
    // through the host: a plane each way (device to host, the message, host to device) and one
    // wait for the back-end (its earlier work and the copies to the host), the time from that
    // wait on counted in the communicator's halo cost (HaloExchange: a plane is one run,
    // copied straight).
    void exchange(T* window) const { halo_->exchange(window); }

private:
    std::unique_ptr<HaloExchange<T>> halo_;
};

// A level split over fewer ranks than the level above (slab_levels.hpp's SlabHandoff): the
// level above restricts into window() (the coarse planes its window reaches, on this rank's
// split of the level above), hand_down() moves the planes each rank restricted rightly (those
// on its own planes) to the ranks that hold them now, and take_up() brings the coarse
// corrections back into window() for the interpolation. Traffic per call: this rank's planes
// to the host, the messages, the planes received onto the back-end (the level is small: it
// was re-split because its slabs got thin).
template <typename T>
class LevelHandoff {
public:
    LevelHandoff(std::shared_ptr<const Backend> backend, std::vector<PlaneRange> restricted,
                 std::vector<PlaneRange> reached, std::vector<PlaneRange> held, std::int64_t plane);
    ~LevelHandoff();
    T* window() const { return window_.data(); }
    std::size_t window_points() const { return window_.size(); }
    // `into`: this rank's planes of the coarse level (its window's own part).
    void hand_down(T* into) const;
    // `from`: this rank's planes of the coarse level's correction.
    void take_up(const T* from) const;

private:
    std::int64_t offset_ = 0;  // where this rank's restricted planes start in the window
    mutable Array<T> window_;
    std::unique_ptr<Redistribution<T>> down_, up_;
};

// Assembles a level gathered whole on every rank (collective): each rank's own points are
// right in `whole` at starts[rank] .. starts[rank + 1] (starts: size ranks + 1, in points); after
// gather() every rank's are, on every rank, for the back-end's work issued after it.
//   On the GPUs, where the back-end opens a device halo (device_halo.hpp), the parts flow
// along the line of ranks with no host wait: in exchange s = 1 .. ranks - 1 each rank passes
// on to each neighbour the part it received from the other side in the exchange before (its
// own in the first), so that after ranks - 1 exchanges every rank holds every part. Traffic
// per rank: its part copied into a staging array of `ranks` slots of the largest part, ranks -
// 1 exchanges of a slot each way (counted as one gather), every slot copied on into `whole`.
// Otherwise through the host: the own points to the host (a wait for the back-end), an
// all-gather of the whole level, the whole level back.
template <typename T>
class LevelGather {
public:
    // Collective (every rank opens its device halo at the same point).
    LevelGather(std::shared_ptr<const Backend> backend, std::vector<std::int64_t> starts);
    ~LevelGather();
    LevelGather(const LevelGather&) = delete;
    LevelGather& operator=(const LevelGather&) = delete;
    void gather(Array<T>& whole) const { gather_->run(whole.data(), whole.data()); }
    const std::vector<std::int64_t>& starts() const { return starts_; }

private:
    std::vector<std::int64_t> starts_;
    std::unique_ptr<Redistribution<T>> gather_;  // each rank's points, in place, to every rank
};

}  // namespace simrun::solvers::multigrid

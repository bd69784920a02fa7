#pragma once
// What the ranks of a multigrid hierarchy split over a process grid (box_levels.hpp) send each
// other at every cycle: a level's halo (the points around each rank's part, from the ranks
// that hold them), and a level gathered whole on every rank. Through host memory (pinned on a
// GPU), the halo on the GPUs where the back-end can; on one rank none is made.
#include <cstdint>
#include <memory>
#include <vector>

#include "distributed/halo_exchange.hpp"
#include "distributed/redistribution.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/boxes/box.hpp"

namespace simrun::solvers::multigrid {

// A vector of a level's window (this rank's part grown by a point inside the level's box, x
// fastest): the window's halo points take the values of the ranks that hold them. Each rank's
// points in another's window (a face, an edge or a corner of its part) are gathered into one
// buffer, sent (on the GPUs straight into the neighbour's memory where the back-end opens a
// device halo with a side per neighbour, device_halo.hpp; else through the host), and
// scattered into the neighbour's window on arrival.
template <typename T>
class BoxHalo {
public:
    // Collective (a device halo is opened with the neighbours): every rank makes its level's
    // halo at the same point. `parts`: every rank's part of `box`, in rank order.
    BoxHalo(std::shared_ptr<const Backend> backend, const GridBox& box,
            const std::vector<Box>& parts);

    // Collective with the neighbours: the window's halo points take the neighbours' values,
    // for the back-end's work issued after it. Traffic (HaloExchange): the points sent gathered
    // (an index and a value read, a value written each; copied straight where a side is one
    // run of the window), sent, and the points received scattered (the same); through the
    // host, both staged with one wait for the back-end, counted in the communicator's halo
    // cost from that wait on.
    void exchange(T* window) const { halo_->exchange(window); }

private:
    std::unique_ptr<HaloExchange<T>> halo_;
};

// A level gathered whole on every rank, from each rank's part of it (in `window`, the part
// grown by a point, or the part itself on the finest level): gather() takes each rank's part
// from its window into `whole` on every rank, window_of() gives a window's values back from
// `whole` (Redistribution). Traffic per gather: the part gathered into its segment (the ranks'
// parts in rank order), the segments gathered as LevelGather's, the whole level put in order
// (an index and a value read, a value written per point; no pass where the parts are in the
// whole's order); per window_of: a window of indices and values read.
template <typename T>
class BoxGather {
public:
    // Collective (the gather opens a device halo).
    BoxGather(std::shared_ptr<const Backend> backend, const GridBox& box,
              const std::vector<Box>& parts, const Box& window);
    ~BoxGather();
    void gather(const T* window, Array<T>& whole) const { gather_->run(window, whole.data()); }
    void window_of(const Array<T>& whole, T* window) const {
        window_of_->run(whole.data(), window);
    }
    std::size_t window_points() const { return window_points_; }

private:
    std::size_t window_points_ = 0;
    // Each rank's part from its window to the whole on every rank; the whole to the window.
    std::unique_ptr<Redistribution<T>> gather_, window_of_;
};

}  // namespace simrun::solvers::multigrid

#pragma once
// The plan of a multigrid hierarchy whose rows are split over ranks (host, double), which the
// one build over a partition (build_partitioned.cpp) makes levels of: every level's Partition
// (each rank's part, possibly empty where the level is held by fewer ranks, its window the
// part grown by a point), this rank's rows on its window, its transfer to the next level and
// where that transfer's coarse points lie in the next level's vectors; then the first level
// gathered whole on every rank.
#include <cstdint>
#include <optional>
#include <vector>

#include "distributed/redistribution.hpp"
#include "multigrid/level_transfer.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/distributed/partition.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"

namespace simrun::solvers::multigrid {

// Where the next level is split over fewer ranks than this one: the transfer's coarse points
// are a window of their own (`window_points`), in which each rank restricts rightly the points
// `restricted` (its own, from `offset` on); `held` is every rank's part of the next level and
// `reached` every rank's window, in the next level's global numbering.
struct HandoffPlan {
    VectorLayout restricted, held, reached;
    std::int64_t offset = 0;
    std::int64_t window_points = 0;
};

// One level, as one rank holds it (a rank that holds none of it: an empty part and window).
struct PartitionedLevel {
    Partition partition = Partition::whole(GridBox{1, {1, 1, 1}});
    // The window's rows: the part's rows whole, the halo rows' entries that reach outside the
    // window zeroed (the halo's values come from the other ranks; its rows are never used).
    DiaData<double> window_operator;
    bool along_axes = true;   // every rank's couplings lie along the axes (two colours suffice)
    unsigned split_axes = 0;  // bit a: the level is split along axis a
    int holders = 1;          // the ranks that hold points of the level
    // The transfer on the window (level_transfer.hpp's layout) and its weights.
    BoxCoarsening transfer;
    std::vector<double> weights;
    // Where the transfer's coarse points lie: in the next level's vectors from `coarse_offset`
    // on (its window, or the whole gathered level); in vectors of their own of
    // `coarse_window_points` (> 0) that the next level, gathered, is gathered from; or in the
    // handoff's window.
    std::int64_t coarse_offset = 0;
    std::int64_t coarse_window_points = 0;
    std::optional<HandoffPlan> handoff;

    const GridBox& box() const { return partition.box(); }
    Box window() const { return partition.window(); }
    bool holds() const { return !partition.part().empty(); }
};

// The first level that is not split: its rows whole, on every rank, and every rank's points of
// it in the vector it gives the gather (local: positions in that vector), which is the level's
// own whole vector (each rank's points at their place: gathered in place), or, where `window`
// is given, a window of the level whose values the gather gives back.
struct GatheredPlan {
    GridBox box;
    DiaData<double> rows;
    VectorLayout sources;
    std::optional<Box> window;
};

struct PartitionedHierarchy {
    std::vector<PartitionedLevel> levels;  // split over the ranks (none: the finest gathered)
    GatheredPlan gathered;
};

}  // namespace simrun::solvers::multigrid

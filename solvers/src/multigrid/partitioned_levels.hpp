#pragma once
// The levels of a multigrid hierarchy whose rows are split over ranks (host, double), planned
// once over a partition of the box (slabs are its 1 x ... x K case) into the plan the one build
// makes them from (level_plan.hpp, build_partitioned.cpp): every level's Partition (each
// rank's part, empty where the level is held by fewer ranks, its window the part grown by a
// point), this rank's rows on its window, its transfer to the next level and where that
// transfer's coarse points lie in the next level's vectors; then the first level gathered whole
// on every rank.
//   A rank computes its part of each next level itself, from its rows and `ghost_layers` layers
// of the other ranks' rows around its part (the same step as one process's, coarse_step.hpp,
// on its part with those layers around it: the rows of its part come out as one process makes
// them; rows move as runs of values where the parts are whole planes).
// The coarsening is decided once from every rank's measures, so all ranks coarsen alike. A
// rank's part of a coarse level is the coarse points that lie on its fine points; the transfer
// reaches the next level's window (its part grown by a point). Where some rank's part would be
// thinner than ghost_layers points along an axis the level splits, the level is split anew
// over fewer ranks: along that axis as many as can hold that many each, the parts even, held by
// the first ranks (the others hold none of it and of the levels below, and only take part in
// their collectives), and the rows each rank computed go to the ranks that hold them. Once
// that is a single rank, or the level has at most MultigridParameters::gather_size points
// (none: 0; the hierarchy passes the back-end's choice, gather_size_on), or is small enough to
// stop, the level is gathered whole on every rank, and the rest of the hierarchy is one
// process's (whole_levels.hpp), repeated on each rank. (The finest level, whose split is the
// caller's, is gathered where its parts are too thin.)
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "multigrid/level_plan.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/distributed/part_rows.hpp"
#include "simrun/solvers/distributed/partition.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/multigrid/multigrid_parameters.hpp"

namespace simrun::solvers::multigrid {

// The rows of the other ranks a rank reads around its part to compute its part of the next
// level exactly: a coarse row sums fine rows up to 3 points from its point along each axis,
// whose weights read rows up to 3 points further (the collapsed weights one, and near a
// coefficient jump the local bases of the coarse points one step away, which reach 2 points past
// them in 2D: level_transfer.hpp). Also the fewest points a part has along a split axis.
inline constexpr std::int64_t ghost_layers = 6;

// Whether `part` is one run of `layout`'s points (whole lines of it: one plane, or whole
// planes, as a slab's part of its window is).
bool one_run_of(const Box& part, const Box& layout);
// A's lower corner and size in B's coordinates.
Box relative_to(const Box& a, const Box& b);

// The ranks are the back-end's; each rank's step to the next level is made by its back-end
// (coarse_step.hpp).
// Over a process grid: this rank's part and its rows on the part's window (part_rows.hpp).
// Collective. Throws std::invalid_argument, on every rank alike, where the parts do not tile
// the box, a window is not its part's, or the rows couple points that are not neighbours in
// the box (as MultigridHierarchy does).
PartitionedHierarchy plan_partitioned_levels(const std::shared_ptr<const Backend>& backend,
                                             const PartRows<double>& rows,
                                             const MultigridParameters& parameters);
// Over slabs (the process grid 1 x ... x K): `block`, this rank's rows of a matrix on the
// points of `box`, in the block's numbering with the entries that reach the neighbouring
// ranks' rows kept (distributed_matrix.hpp). Collective. Throws std::invalid_argument, on every
// rank alike, where a block is not whole planes of the box or the rows couple points that are
// not neighbours in it.
PartitionedHierarchy plan_partitioned_levels(const std::shared_ptr<const Backend>& backend,
                                             const DiaData<double>& block, const GridBox& box,
                                             const MultigridParameters& parameters);

}  // namespace simrun::solvers::multigrid

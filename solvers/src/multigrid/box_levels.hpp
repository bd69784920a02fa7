#pragma once
// The levels of a multigrid hierarchy whose rows are split over a process grid (host, double):
// every level's box is split in parts, one per rank, as the finest is (PartRows), each rank
// holding the rows of its part's points. A rank computes its part of each next level itself,
// from its rows and `box_ghost_layers` layers of the other ranks' rows around its part (the
// same formulas as one process, level_transfer.hpp, on its part with those layers around it:
// the rows of its part come out as one process makes them). The coarsening is decided once from
// every rank's measures, so all ranks coarsen alike. A rank's part of a coarse level is the
// coarse points that lie on its fine points, so the parts stay a process grid. Once some rank's
// part would be thinner than 2 points along an axis, or the level has at most
// MultigridParameters::gather_size points (the hierarchy passes the back-end's choice), or is
// small enough to stop, the level is gathered whole on every rank, and the rest of the
// hierarchy is one process's, repeated on each rank. Slabs (parts of whole planes) are the
// process grid along the last axis: slab_levels.hpp holds them, with levels split anew over
// fewer ranks where their slabs get thin.
#include <array>
#include <cstdint>
#include <vector>

#include "multigrid/level_transfer.hpp"
#include "multigrid/partitioned_levels.hpp"
#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/distributed/part_rows.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/multigrid/multigrid_parameters.hpp"

namespace simrun::solvers::multigrid {

// The other ranks' rows a rank reads around its part to compute its part of the next level
// exactly (as slab_ghost_planes: a coarse row sums fine rows up to 3 points away along each
// axis, whose weights read rows up to 3 points further).
inline constexpr std::int64_t box_ghost_layers = 6;

// Collective. Throws std::invalid_argument, on every rank alike, where the parts do not tile
// the box, a window is not its part's, or the rows couple points that are not neighbours in
// the box (as MultigridHierarchy does).
PartitionedHierarchy plan_box_hierarchy(const Communicator& ranks, const PartRows<double>& rows,
                                        const MultigridParameters& parameters);

}  // namespace simrun::solvers::multigrid

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
#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/multigrid/multigrid_parameters.hpp"
#include "simrun/solvers/distributed/part_rows.hpp"

namespace simrun::solvers::multigrid {

// The other ranks' rows a rank reads around its part to compute its part of the next level
// exactly (as slab_ghost_planes: a coarse row sums fine rows up to 3 points away along each
// axis, whose weights read rows up to 3 points further).
inline constexpr std::int64_t box_ghost_layers = 6;

// One level, as one rank holds it.
struct BoxLevel {
    GridBox box;                 // the whole level
    std::vector<Box> parts;  // every rank's part, in rank order
    Box own, window;         // this rank's part, and it grown by a point (its halo)
    // The window's rows (its neighbour offsets): the part's rows whole, the halo rows' entries
    // that reach outside the window zeroed (the halo's values come from the other ranks; its
    // rows are never used).
    DiaData<double> window_operator;
    bool along_axes = true;  // every rank's couplings lie along the axes (two colours suffice)
    // The axes along which the level is split (bit a: some part is not the whole box's extent).
    unsigned split_axes = 0;
    // To the next level: the transfer on the window, whose coarse box is the next level's
    // window (coarse_window: this rank's part of the next level grown by a point, in the next
    // level's coordinates), and its weights (level_transfer.hpp's layout). A coarse window point
    // may lie a fine point beyond the window (first -1 along an axis).
    BoxCoarsening transfer;
    std::vector<double> weights;
    Box coarse_window;
};

struct BoxHierarchy {
    std::vector<BoxLevel> levels;  // split over the ranks (none where the finest is gathered)
    // The first level that is not: its rows whole, on every rank; every rank's part of it.
    GridBox gathered_box;
    DiaData<double> gathered;
    std::vector<Box> gathered_parts;
};

// Collective. Throws std::invalid_argument, on every rank alike, where the parts do not tile
// the box, a window is not its part's, or the rows couple points that are not neighbours in
// the box (as MultigridHierarchy does).
BoxHierarchy plan_box_hierarchy(const Communicator& ranks, const PartRows<double>& rows,
                                const MultigridParameters& parameters);

}  // namespace simrun::solvers::multigrid

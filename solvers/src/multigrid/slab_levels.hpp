#pragma once
// The levels of a multigrid hierarchy whose rows are split over ranks (host, double): every
// level's box is split in slabs of whole planes along its last axis, each rank holding the
// rows of its planes. A rank computes its part of each next level itself, from its rows and
// `slab_ghost_planes` of its neighbours' on each side (the same formulas as one process,
// level_transfer.hpp, on its slab with those planes around it: the rows of its part come out
// as one process makes them). The coarsening is decided once from every rank's measures, so
// all ranks coarsen alike. A rank's part of a coarse level is the coarse planes that lie on
// its fine planes. Where some rank would then hold fewer than slab_ghost_planes planes, the
// level is split anew over fewer ranks, as many as can hold that many each (the first ones;
// the others hold none of it and of the levels below, and wait), and the rows each rank
// computed go to the ranks that hold them. Once that is a single rank, or the level has at
// most MultigridParameters::gather_size points (none: 0; the hierarchy passes the back-end's
// choice, gather_size_on), or is small enough to stop, the level is gathered whole on every
// rank, and the rest of the hierarchy is one process's, repeated on each rank. (The finest
// level, whose split is the caller's, is gathered where its slabs are too thin.)
#include <cstdint>
#include <optional>
#include <vector>

#include "multigrid/level_transfer.hpp"
#include "multigrid/slab_exchange.hpp"
#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/multigrid/multigrid_parameters.hpp"

namespace simrun::solvers::multigrid {

// The neighbours' planes a rank reads on each side to compute its part of the next level
// exactly: a coarse row sums fine rows up to 3 planes from its point, whose weights read rows
// up to 3 planes further (the collapsed weights one, and near a coefficient jump the local bases
// of the coarse points one step away, which reach 2 planes past them in 2D: level_transfer.cpp).
inline constexpr std::int64_t slab_ghost_planes = 6;

// Where the next level is split over fewer ranks than this one: every rank's coarse planes that
// lie on its own planes (those its restriction computes rightly), those on its window (those
// its transfer reaches), and its part of the next level (LevelHandoff moves the planes).
struct SlabHandoff {
    std::vector<PlaneRange> restricted, reached, held;
    std::int64_t plane = 1;  // points per coarse plane
};

// One level, as one rank holds it (a rank that holds none of it: no planes, an empty window).
struct SlabLevel {
    GridBox box;                   // the whole level
    std::int64_t plane = 1;        // points per plane
    std::int64_t first_plane = 0;  // this rank's planes: [first_plane, first_plane + planes)
    std::int64_t planes = 0;
    // The window: this rank's planes with the plane next to them on each side where there is
    // one (its halo: what its rows reach).
    bool halo_before = false, halo_after = false;
    GridBox window;
    // The window's rows: this rank's rows whole, the halo rows' entries that reach outside the
    // window zeroed (the halo's values come from the neighbours; its rows are never used).
    DiaData<double> window_operator;
    bool along_axes = true;  // every rank's couplings lie along the axes (two colours suffice)
    // To the next level: the transfer on the window, whose coarse box is the next level's
    // points that lie on the window's planes, with their weights (level_transfer.hpp's
    // layout), and where those points start in the next level's vectors (a window, or the
    // whole gathered level).
    BoxCoarsening transfer;
    std::vector<double> weights;
    std::int64_t coarse_offset = 0;
    // Where the next level is split over fewer ranks: the transfer's coarse points are a
    // window of their own (coarse_offset 0 in it) that the handoff fills and empties.
    std::optional<SlabHandoff> handoff;
    int holders = 1;  // the ranks that hold planes of the level (the first ones)
    bool holds() const { return planes > 0; }
    // The plane of the window's first point in the whole box (colours are the whole box's).
    std::int64_t window_first_plane() const { return first_plane - (halo_before ? 1 : 0); }
};

struct SlabHierarchy {
    std::vector<SlabLevel> levels;  // split over the ranks (none where the finest is gathered)
    // The first level that is not: its rows whole, on every rank; where each rank's own
    // points start in it (size ranks + 1).
    GridBox gathered_box;
    DiaData<double> gathered;
    std::vector<std::int64_t> gathered_starts;
};

// `block`: this rank's rows of a matrix on the points of `box`, in the block's numbering with
// the entries that reach the neighbouring ranks' rows kept (distributed_matrix.hpp). Collective.
// Throws std::invalid_argument, on every rank alike, where a block is not whole planes of the
// box or the rows couple points that are not neighbours in it (as MultigridHierarchy does).
SlabHierarchy plan_slab_hierarchy(const Communicator& ranks, const DiaData<double>& block,
                                  const GridBox& box, const MultigridParameters& parameters);

}  // namespace simrun::solvers::multigrid

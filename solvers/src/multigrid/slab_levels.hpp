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
#include "multigrid/partitioned_levels.hpp"
#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/multigrid/multigrid_parameters.hpp"

namespace simrun::solvers::multigrid {

// The neighbours' planes a rank reads on each side to compute its part of the next level
// exactly: a coarse row sums fine rows up to 3 planes from its point, whose weights read rows
// up to 3 planes further (the collapsed weights one, and near a coefficient jump the local bases
// of the coarse points one step away, which reach 2 planes past them in 2D: level_transfer.cpp).
inline constexpr std::int64_t slab_ghost_planes = 6;

// `block`: this rank's rows of a matrix on the points of `box`, in the block's numbering with
// the entries that reach the neighbouring ranks' rows kept (distributed_matrix.hpp). Collective.
// Throws std::invalid_argument, on every rank alike, where a block is not whole planes of the
// box or the rows couple points that are not neighbours in it (as MultigridHierarchy does).
PartitionedHierarchy plan_slab_hierarchy(const Communicator& ranks, const DiaData<double>& block,
                                         const GridBox& box, const MultigridParameters& parameters);

}  // namespace simrun::solvers::multigrid

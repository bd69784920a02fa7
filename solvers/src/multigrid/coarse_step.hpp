#pragma once
// The step from a multigrid level to the next on the rows of a region of the level (double, on
// the host or made by the back-end): the whole level's coarsening on the region, the transfer's
// weights there and the Galerkin product P^T A P on the region's coarse points
// (level_transfer.hpp's formulas). The region is the whole box on one process (whole_levels.hpp), a
// rank's part with the ghost layers around it over ranks (partitioned_levels.hpp): the same
// formulas on the same rows, the same bits.
#include <memory>
#include <vector>

#include "multigrid/level_transfer.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"

namespace simrun::solvers::multigrid {

// The coarse points on the fine points of `part` (in the coarse level's coordinates; empty for
// an empty part).
Box coarse_part(const Box& part, const BoxCoarsening& coarsening);

// The whole level's coarsening on the points of `window`, onto the coarse points
// `coarse_window` (in the coarse level's coordinates): those on the window's points
// (coarse_part), or the next level's window, which may start a fine point before it.
BoxCoarsening window_transfer(const BoxCoarsening& whole, const Box& window,
                              const Box& coarse_window, int dimension);

struct CoarseStep {
    Box coarse_region;            // the coarse points on the region's points
    BoxCoarsening transfer;       // the coarsening on the region, onto them
    std::vector<double> weights;  // its weights, on them
    DiaData<double> coarse;       // P^T A P, their rows
};

// The step on `rows` (a matrix on the points of `region`, x fastest) for the whole level's
// `coarsening`. On the whole box the transfer is `coarsening` itself.
CoarseStep coarse_step(const DiaData<double>& rows, const Box& region,
                       const BoxCoarsening& coarsening);
// The same without its coarse rows (`coarse` empty), which coarse_rows then gives from the
// same rows: one process makes a level between the two.
CoarseStep coarse_transfer(const DiaData<double>& rows, const Box& region,
                           const BoxCoarsening& coarsening);
DiaData<double> coarse_rows(const DiaData<double>& rows, const Box& region, const CoarseStep& step);

// The same step made by the back-end's set-up kernels (backend_rows.hpp: the rows copied there,
// the weights and coarse rows read back), as one process's levels are made there: over ranks a
// part's rows then come out as one process makes them on that back-end (on the CPU to the bit;
// on the GPU to rounding where a rank's region and the whole level differ on using the host's
// weights at a jump). The weights at a
// coefficient jump (local bases) are the host's; a region in which some diagonal is not one step
// takes the host's step.
CoarseStep coarse_step(const std::shared_ptr<const Backend>& backend, const DiaData<double>& rows,
                       const Box& region, const BoxCoarsening& coarsening);

}  // namespace simrun::solvers::multigrid

// The Galerkin operator P^T A P on the coarse box (level_transfer.hpp), summed point by point by
// box_setup_points.hpp's galerkin_row (each back-end's box_galerkin runs the same): a table of
// where each term goes for the coarse points inside the box, the general sum at its ends.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <vector>

#include "kernels/unified/box_setup_points.hpp"
#include "multigrid/box_entries.hpp"
#include "multigrid/galerkin_table.hpp"
#include "multigrid/level_transfer.hpp"

namespace simrun::solvers::multigrid {

GalerkinTable::GalerkinTable(const DiagonalSteps& steps, const GridBox& fine,
                             const BoxCoarsening& coarsening) {
    const GridBox& coarse = coarsening.coarse;
    int reach[3];
    for (std::size_t axis = 0; axis < 3; ++axis) {
        reach[axis] = coarsening.axes[axis].step == 2 ? 1 : 0;
    }
    for (int fz = -reach[2]; fz <= reach[2]; ++fz) {
        for (int fy = -reach[1]; fy <= reach[1]; ++fy) {
            for (int fx = -reach[0]; fx <= reach[0]; ++fx) {
                fine_slot.push_back(transfer_slot(fine.dimension, fx, fy, fz));
                fine_offset.push_back(fx + fine.points[0] * (fy + fine.points[1] * fz));
                const int from_centre[3] = {fx, fy, fz};
                for (const Coordinates& s : steps.steps) {
                    begin.push_back(static_cast<std::int64_t>(reach_step.size()));
                    int count[3], dj[3][2], off[3][2];
                    for (std::size_t axis = 0; axis < 3; ++axis) {
                        count[axis] =
                            coarse_reaches(from_centre[axis] + static_cast<int>(s[axis]),
                                           coarsening.axes[axis].step, dj[axis], off[axis]);
                    }
                    for (int p = 0; p < count[0]; ++p) {
                        for (int q = 0; q < count[1]; ++q) {
                            for (int r = 0; r < count[2]; ++r) {
                                reach_step.push_back((dj[0][p] + 1) + 3 * (dj[1][q] + 1) +
                                                     9 * (dj[2][r] + 1));
                                reach_column.push_back(
                                    dj[0][p] +
                                    coarse.points[0] * (dj[1][q] + coarse.points[1] * dj[2][r]));
                                reach_slot.push_back(
                                    transfer_slot(fine.dimension, off[0][p], off[1][q], off[2][r]));
                            }
                        }
                    }
                }
            }
        }
    }
    begin.push_back(static_cast<std::int64_t>(reach_step.size()));
}

namespace {

// The view of a table's arrays, wherever they are (host vectors or back-end arrays).
template <typename Table>
GalerkinTableView view_of(const Table& t) {
    return {static_cast<int>(t.fine_slot.size()),
            t.fine_slot.data(),
            t.fine_offset.data(),
            t.begin.data(),
            t.reach_step.data(),
            t.reach_column.data(),
            t.reach_slot.data()};
}

}  // namespace

GalerkinTableView GalerkinTable::view() const { return view_of(*this); }

GalerkinTableOnBackend::GalerkinTableOnBackend(const std::shared_ptr<const Backend>& backend,
                                               const GalerkinTable& table)
    : fine_slot(Array<int>::from_host(backend, table.fine_slot)),
      fine_offset(Array<std::int64_t>::from_host(backend, table.fine_offset)),
      begin(Array<std::int64_t>::from_host(backend, table.begin)),
      reach_step(Array<int>::from_host(backend, table.reach_step)),
      reach_column(Array<std::int64_t>::from_host(backend, table.reach_column)),
      reach_slot(Array<int>::from_host(backend, table.reach_slot)) {}

GalerkinTableView GalerkinTableOnBackend::view() const { return view_of(*this); }

std::vector<int> galerkin_layout(const GridBox& coarse, GalerkinLayout& layout) {
    // The coarse stencil's steps (those the coarse box has room for) and their DIA offsets; in
    // a box of 2 points along an axis two steps may share an offset (they never meet in one
    // row), so each step maps to the diagonal of its offset.
    std::vector<int> offsets = neighbour_offsets(coarse);
    std::map<std::int64_t, int> diagonal_of;
    for (std::size_t d = 0; d < offsets.size(); ++d) {
        diagonal_of.emplace(offsets[d], static_cast<int>(d));
    }
    std::fill(std::begin(layout.step_diagonal), std::end(layout.step_diagonal), -1);
    for_each_box_step(coarse, [&](const Coordinates& step, std::int64_t offset) {
        layout.step_diagonal[(step[0] + 1) + 3 * (step[1] + 1) + 9 * (step[2] + 1)] =
            diagonal_of.at(offset);
    });
    layout.diagonals = static_cast<int>(offsets.size());
    return offsets;
}

DiaData<double> galerkin_operator(const DiaData<double>& a, const GridBox& fine,
                                  const BoxCoarsening& coarsening,
                                  const std::vector<double>& weights) {
    const std::int64_t nc = coarsening.coarse.size();
    DiaData<double> result;
    GalerkinLayout layout{};
    result.n = nc;
    result.offsets = galerkin_layout(coarsening.coarse, layout);
    result.values.assign(static_cast<std::size_t>(result.num_diagonals() * nc), 0.0);
    const DiagonalSteps steps(a, fine);
    const GalerkinTable table(steps, fine, coarsening);
    const DiaView<double> rows = rows_view(a);
    const BoxDiagonalSteps box_steps = steps.view();
    const BoxTransferView<double> t = transfer_view(fine, coarsening, weights.data());
    const GalerkinTableView table_view = table.view();
    double* coarse = result.values.data();
#pragma omp parallel for schedule(static)
    for (std::int64_t point = 0; point < nc; ++point) {
        galerkin_row(rows, box_steps, t, table_view, layout, point, coarse);
    }
    return result;
}

}  // namespace simrun::solvers::multigrid

// The Galerkin operator P^T A P on the coarse box (level_transfer.hpp), summed point by point:
// a table of where each term goes for the coarse points inside the box, the general sum at its
// ends.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <vector>

#include "multigrid/box_entries.hpp"
#include "multigrid/level_transfer.hpp"

namespace simrun::solvers::multigrid {
namespace {

// Along one axis, the coarse points whose P weights reach fine point g, g lying delta fine
// points from coarse point I's (|delta| <= 2): on a coarse line (delta even, or the axis kept)
// coarse point I + delta / 2 at slot offset 0; else I + (delta - 1) / 2 (g one step above it,
// offset 1) and I + (delta + 1) / 2 (one below, offset -1). No division by the box's sizes.
// Returns how many (1 or 2), as steps from I (dj) and slot offsets (off).
int coarse_reaches(int delta, int step, int (&dj)[2], int (&off)[2]) {
    if (step == 1 || delta % 2 == 0) {
        dj[0] = step == 1 ? delta : delta / 2;
        off[0] = 0;
        return 1;
    }
    dj[0] = (delta - 1) / 2;
    off[0] = 1;
    dj[1] = (delta + 1) / 2;
    off[1] = -1;
    return 2;
}

// Where the terms of a Galerkin row go, for a coarse point inside the box (at least one point
// from each end of every coarsened axis): for each fine point f its weights reach (f at offset
// fo from the coarse point's fine point) and each diagonal d of A (step s), the coarse points
// J near g = f + s that P's row g reaches, as (coarse stencil step t, J's row offset from I,
// P's weight slot of g at J). The same order as the general sum, so the same bits.
struct GalerkinReaches {
    struct Reach {
        int step;             // (dx + 1) + 3 (dy + 1) + 9 (dz + 1)
        std::int64_t column;  // J - I
        int slot;
    };
    struct FinePoint {
        int slot;             // fo's slot in I's weights
        std::int64_t offset;  // f's row - the row of I's fine point
    };
    std::vector<FinePoint> fine_points;
    std::vector<std::size_t> begin;  // reaches of (fine point p, diagonal d): begin[p * D + d]
    std::vector<Reach> reaches;

    GalerkinReaches(const DiaData<double>& a, const DiagonalSteps& steps, const GridBox& fine,
                    const BoxCoarsening& coarsening) {
        const GridBox& coarse = coarsening.coarse;
        int reach[3];
        for (std::size_t axis = 0; axis < 3; ++axis) {
            reach[axis] = coarsening.axes[axis].step == 2 ? 1 : 0;
        }
        for (int fz = -reach[2]; fz <= reach[2]; ++fz) {
            for (int fy = -reach[1]; fy <= reach[1]; ++fy) {
                for (int fx = -reach[0]; fx <= reach[0]; ++fx) {
                    fine_points.push_back({transfer_slot(fine.dimension, fx, fy, fz),
                                           fx + fine.points[0] * (fy + fine.points[1] * fz)});
                    const int from_centre[3] = {fx, fy, fz};
                    for (int d = 0; d < a.num_diagonals(); ++d) {
                        begin.push_back(reaches.size());
                        const Coordinates& s = steps.steps[static_cast<std::size_t>(d)];
                        int count[3], dj[3][2], off[3][2];
                        for (std::size_t axis = 0; axis < 3; ++axis) {
                            count[axis] =
                                coarse_reaches(from_centre[axis] + static_cast<int>(s[axis]),
                                               coarsening.axes[axis].step, dj[axis], off[axis]);
                        }
                        for (int p = 0; p < count[0]; ++p) {
                            for (int q = 0; q < count[1]; ++q) {
                                for (int r = 0; r < count[2]; ++r) {
                                    reaches.push_back(
                                        {(dj[0][p] + 1) + 3 * (dj[1][q] + 1) + 9 * (dj[2][r] + 1),
                                         dj[0][p] + coarse.points[0] *
                                                        (dj[1][q] + coarse.points[1] * dj[2][r]),
                                         transfer_slot(fine.dimension, off[0][p], off[1][q],
                                                       off[2][r])});
                                }
                            }
                        }
                    }
                }
            }
        }
        begin.push_back(reaches.size());
    }
};

// The coarse operator's layout, its values zero: the coarse box's neighbour offsets, and per
// coarse stencil step (dx + 1) + 3 (dy + 1) + 9 (dz + 1) its diagonal (-1 where there is no
// room for it).
DiaData<double> coarse_operator_layout(const GridBox& coarse, int (&step_diagonal)[27]) {
    const std::int64_t nc = coarse.size();
    // The coarse stencil's steps (those the coarse box has room for) and their DIA offsets; in
    // a box of 2 points along an axis two steps may share an offset (they never meet in one
    // row), so each step maps to the diagonal of its offset.
    DiaData<double> result;
    result.n = nc;
    result.offsets = neighbour_offsets(coarse);
    std::map<std::int64_t, int> offsets;
    for (int d = 0; d < result.num_diagonals(); ++d) {
        offsets.emplace(result.offsets[static_cast<std::size_t>(d)], d);
    }
    std::fill(std::begin(step_diagonal), std::end(step_diagonal), -1);
    for_each_box_step(coarse, [&](const Coordinates& step, std::int64_t offset) {
        step_diagonal[(step[0] + 1) + 3 * (step[1] + 1) + 9 * (step[2] + 1)] = offsets.at(offset);
    });
    result.values.assign(static_cast<std::size_t>(result.num_diagonals() * nc), 0.0);
    return result;
}

// Coarse row `point` (at at_coarse) of P^T A P term by term, each fine and coarse point checked
// against its box (the rows at the box's ends): sums[coarse stencil step].
void general_galerkin_row(const DiaData<double>& a, const DiagonalSteps& steps, const GridBox& fine,
                          const BoxCoarsening& coarsening, const std::vector<double>& weights,
                          std::int64_t point, const Coordinates& at_coarse, double (&sums)[27]) {
    const GridBox& coarse = coarsening.coarse;
    const std::int64_t nc = coarse.size();
    const int dimension = fine.dimension;
    Coordinates at{};
    int reach[3];
    for (std::size_t axis = 0; axis < 3; ++axis) {
        const AxisCoarsening& ax = coarsening.axes[axis];
        at[axis] = ax.first + ax.step * at_coarse[axis];
        reach[axis] = ax.step == 2 ? 1 : 0;
    }
    // R = P^T: the fine points f that coarse point I's weights reach ...
    for (int fz = -reach[2]; fz <= reach[2]; ++fz) {
        for (int fy = -reach[1]; fy <= reach[1]; ++fy) {
            for (int fx = -reach[0]; fx <= reach[0]; ++fx) {
                const Coordinates f{at[0] + fx, at[1] + fy, at[2] + fz};
                bool within = true;
                for (std::size_t axis = 0; axis < 3; ++axis) {
                    within = within && f[axis] >= 0 && f[axis] < fine.points[axis];
                }
                if (!within) continue;
                const double w_f = weights[static_cast<std::size_t>(
                    transfer_slot(dimension, fx, fy, fz) * nc + point)];
                if (w_f == 0.0) continue;
                // ... times A's row f, times P's rows g of its stencil (coarse_reaches).
                const std::int64_t row = fine.row(f[0], f[1], f[2]);
                const int from_centre[3] = {fx, fy, fz};
                for_each_entry(
                    a, steps, fine, row, f, [&](std::int64_t, double value, const Coordinates& s) {
                        int count[3], dj[3][2], off[3][2];
                        for (std::size_t axis = 0; axis < 3; ++axis) {
                            int all_dj[2], all_off[2];
                            const int all =
                                coarse_reaches(from_centre[axis] + static_cast<int>(s[axis]),
                                               coarsening.axes[axis].step, all_dj, all_off);
                            count[axis] = 0;
                            for (int e = 0; e < all; ++e) {  // those inside the coarse box
                                const std::int64_t j = at_coarse[axis] + all_dj[e];
                                if (j < 0 || j >= coarse.points[axis]) continue;
                                dj[axis][count[axis]] = all_dj[e];
                                off[axis][count[axis]++] = all_off[e];
                            }
                        }
                        const double w_fa = w_f * value;
                        for (int p = 0; p < count[0]; ++p) {
                            for (int q = 0; q < count[1]; ++q) {
                                for (int r = 0; r < count[2]; ++r) {
                                    const std::int64_t column =
                                        point + dj[0][p] +
                                        coarse.points[0] * (dj[1][q] + coarse.points[1] * dj[2][r]);
                                    const int slot =
                                        transfer_slot(dimension, off[0][p], off[1][q], off[2][r]);
                                    const double w_g =
                                        weights[static_cast<std::size_t>(slot * nc + column)];
                                    sums[(dj[0][p] + 1) + 3 * (dj[1][q] + 1) +
                                         9 * (dj[2][r] + 1)] += w_fa * w_g;
                                }
                            }
                        }
                    });
            }
        }
    }
}

}  // namespace

DiaData<double> galerkin_operator(const DiaData<double>& a, const GridBox& fine,
                                  const BoxCoarsening& coarsening,
                                  const std::vector<double>& weights) {
    const GridBox& coarse = coarsening.coarse;
    const std::int64_t nc = coarse.size();
    int step_diagonal[27];
    DiaData<double> result = coarse_operator_layout(coarse, step_diagonal);
    const DiagonalSteps steps(a, fine);
    const GalerkinReaches table(a, steps, fine, coarsening);
    const int diagonals = a.num_diagonals();
    const auto store = [&](std::int64_t point, const double(&sums)[27]) {
        for (int step = 0; step < 27; ++step) {
            if (sums[step] == 0.0 || step_diagonal[step] < 0) continue;
            result.at(step_diagonal[step], point) = sums[step];
        }
    };

    // A coarse point at least one point from each end of every axis that has room: every
    // term's fine and coarse points exist, and the table gives them.
    const auto inside = [&](const Coordinates& at_coarse) {
        for (std::size_t axis = 0; axis < 3; ++axis) {
            if (coarse.points[axis] == 1) continue;
            if (at_coarse[axis] < 1 || at_coarse[axis] > coarse.points[axis] - 2) return false;
        }
        return steps.decoded;
    };
    const auto tabled_row = [&](std::int64_t point, std::int64_t centre_row) {
        double sums[27] = {};
        for (std::size_t p = 0; p < table.fine_points.size(); ++p) {
            const GalerkinReaches::FinePoint& f = table.fine_points[p];
            const double w_f = weights[static_cast<std::size_t>(f.slot * nc + point)];
            if (w_f == 0.0) continue;
            const std::int64_t row = centre_row + f.offset;
            for (int d = 0; d < diagonals; ++d) {
                const double value = a.at(d, row);
                if (value == 0.0) continue;
                const double w_fa = w_f * value;
                const std::size_t first = table.begin[p * static_cast<std::size_t>(diagonals) + d];
                const std::size_t last =
                    table.begin[p * static_cast<std::size_t>(diagonals) + d + 1];
                for (std::size_t k = first; k < last; ++k) {
                    const GalerkinReaches::Reach& reach = table.reaches[k];
                    sums[reach.step] +=
                        w_fa *
                        weights[static_cast<std::size_t>(reach.slot * nc + point + reach.column)];
                }
            }
        }
        store(point, sums);
    };
    const auto general_row = [&](std::int64_t point, const Coordinates& at_coarse) {
        double sums[27] = {};
        general_galerkin_row(a, steps, fine, coarsening, weights, point, at_coarse, sums);
        store(point, sums);
    };

    // By coarse lines (fixed y, z), so no point's coordinates need a division.
    const std::int64_t lines = coarse.points[1] * coarse.points[2];
#pragma omp parallel for schedule(static)
    for (std::int64_t line = 0; line < lines; ++line) {
        Coordinates at_coarse{0, line % coarse.points[1], line / coarse.points[1]};
        for (at_coarse[0] = 0; at_coarse[0] < coarse.points[0]; ++at_coarse[0]) {
            const std::int64_t point = at_coarse[0] + coarse.points[0] * line;
            if (!inside(at_coarse)) {
                general_row(point, at_coarse);
                continue;
            }
            std::int64_t centre_row = 0;
            for (int axis = 2; axis >= 0; --axis) {
                const AxisCoarsening& ax = coarsening.axes[static_cast<std::size_t>(axis)];
                centre_row = centre_row * fine.points[static_cast<std::size_t>(axis)] + ax.first +
                             ax.step * at_coarse[static_cast<std::size_t>(axis)];
            }
            tabled_row(point, centre_row);
        }
    }
    return result;
}

}  // namespace simrun::solvers::multigrid

// The operator-dependent interpolation P (level_transfer.hpp): Dendy's collapsed black-box
// weights, corrected by local bases where the couplings jump (local_bases.hpp), and P as a
// sparse matrix for checks.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

#include "multigrid/box_entries.hpp"
#include "multigrid/level_transfer.hpp"
#include "multigrid/local_bases.hpp"

namespace simrun::solvers::multigrid {
namespace {

// Dendy's black-box weights (operator_interpolation's first pass, level_transfer.hpp).
std::vector<double> collapsed_interpolation(const DiaData<double>& a, const GridBox& fine,
                                            const BoxCoarsening& coarsening) {
    const GridBox& coarse = coarsening.coarse;
    const std::int64_t nc = coarse.size();
    const int slots = transfer_slots(fine.dimension);
    const int centre = transfer_slot(fine.dimension, 0, 0, 0);
    const DiagonalSteps steps(a, fine);
    std::vector<double> w(static_cast<std::size_t>(slots * nc), 0.0);
    for (std::int64_t point = 0; point < nc; ++point) {
        w[static_cast<std::size_t>(centre * nc + point)] = 1.0;
    }
    // The points fine on k axes take their weights from neighbours fine on fewer, so the
    // classes go in order; within a class each point writes its own slots. By lines (fixed y,
    // z), so no point's coordinates need a division.
    const std::int64_t lines = fine.points[1] * fine.points[2];
    for (int k = 1; k <= fine.dimension; ++k) {
#pragma omp parallel for schedule(static)
        for (std::int64_t line = 0; line < lines; ++line) {
            Coordinates c{0, line % fine.points[1], line / fine.points[1]};
            const int line_class = std::popcount(fine_axes(c, coarsening) & ~1u);  // y, z
            if (line_class > k || line_class < k - 1) continue;
            for (c[0] = 0; c[0] < fine.points[0]; ++c[0]) {
                const std::int64_t row = c[0] + fine.points[0] * line;
                const unsigned mask = fine_axes(c, coarsening);
                if (std::popcount(mask) != k) continue;
                double diagonal = 0, sum = 0;
                // Left uninitialised: only the first `count` are written and read (a
                // value-initialised array of pairs cost 2 KB of zeroing per point).
                struct Term {
                    Coordinates at;
                    double value;
                };
                Term terms[64];
                int count = 0;
                for_each_entry(a, steps, fine, row, c,
                               [&](std::int64_t, double value, const Coordinates& s) {
                                   Coordinates h = c;
                                   bool moves = false;
                                   for (std::size_t axis = 0; axis < 3; ++axis) {
                                       if (((mask >> axis) & 1u) != 0 && s[axis] != 0) {
                                           h[axis] += s[axis];
                                           moves = true;
                                       }
                                   }
                                   if (!moves || value > 0 || count == 64) {
                                       diagonal += value;
                                   } else {
                                       terms[count++] = {h, value};
                                       sum += value;
                                   }
                               });
                if (count == 0) continue;            // no coupling to interpolate from
                if (diagonal <= 0) diagonal = -sum;  // weights that sum to 1
                for (int t = 0; t < count; ++t) {
                    const double scale = -terms[t].value / diagonal;
                    visit_coarse_neighbours(
                        terms[t].at, fine, coarsening,
                        [&](std::int64_t point, const Coordinates& at_coarse, int slot) {
                            const double weight_h = w[static_cast<std::size_t>(slot * nc + point)];
                            if (weight_h == 0.0) return;
                            // c's slot relative to the same coarse point.
                            int offset[3];
                            for (std::size_t axis = 0; axis < 3; ++axis) {
                                const AxisCoarsening& ax = coarsening.axes[axis];
                                offset[axis] = static_cast<int>(
                                    c[axis] - (ax.first + ax.step * at_coarse[axis]));
                            }
                            const int own =
                                transfer_slot(fine.dimension, offset[0], offset[1], offset[2]);
                            w[static_cast<std::size_t>(own * nc + point)] += scale * weight_h;
                        });
                }
            }
        }
    }
    return w;
}

}  // namespace

std::vector<double> operator_interpolation(const DiaData<double>& a, const GridBox& fine,
                                           const BoxCoarsening& coarsening) {
    std::vector<double> w = collapsed_interpolation(a, fine, coarsening);
    follow_strong_couplings(a, fine, coarsening, w);
    return w;
}

CsrData<double> interpolation_matrix(const std::vector<double>& weights, const GridBox& fine,
                                     const BoxCoarsening& coarsening) {
    const std::int64_t nc = coarsening.coarse.size();
    CsrData<double> p;
    p.rows = static_cast<std::int32_t>(fine.size());
    p.cols = static_cast<std::int32_t>(nc);
    p.row_ptr.assign(1, 0);
    std::vector<std::pair<std::int32_t, double>> row;
    for (std::int64_t f = 0; f < fine.size(); ++f) {
        row.clear();
        visit_coarse_neighbours(fine.coordinates(f), fine, coarsening,
                                [&](std::int64_t point, const Coordinates&, int slot) {
                                    const double value =
                                        weights[static_cast<std::size_t>(slot * nc + point)];
                                    if (value != 0.0)
                                        row.emplace_back(static_cast<std::int32_t>(point), value);
                                });
        std::sort(row.begin(), row.end());
        for (const auto& [column, value] : row) {
            p.col.push_back(column);
            p.values.push_back(value);
        }
        p.row_ptr.push_back(static_cast<std::int32_t>(p.col.size()));
    }
    return p;
}

}  // namespace simrun::solvers::multigrid

// The operator-dependent interpolation P (level_transfer.hpp): Dendy's collapsed black-box
// weights, corrected by local bases where the couplings jump (local_bases.hpp), and P as a
// sparse matrix for checks.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/unified/box_setup_points.hpp"
#include "multigrid/box_entries.hpp"
#include "multigrid/level_transfer.hpp"
#include "multigrid/local_bases.hpp"

namespace simrun::solvers::multigrid {
namespace {

// Dendy's black-box weights (operator_interpolation's first pass, level_transfer.hpp), point by
// point by box_setup_points.hpp's collapsed_weights_at (each back-end's box_collapsed_weights
// runs the same).
std::vector<double> collapsed_interpolation(const DiaData<double>& a, const GridBox& fine,
                                            const BoxCoarsening& coarsening) {
    const std::int64_t nc = coarsening.coarse.size();
    const int slots = transfer_slots(fine.dimension);
    const int centre = transfer_slot(fine.dimension, 0, 0, 0);
    std::vector<double> w(static_cast<std::size_t>(slots * nc), 0.0);
    for (std::int64_t point = 0; point < nc; ++point) {
        w[static_cast<std::size_t>(centre * nc + point)] = 1.0;
    }
    const DiaView<double> rows = rows_view(a);
    const BoxDiagonalSteps steps = DiagonalSteps(a, fine).view();
    const BoxTransferView<double> t = transfer_view(fine, coarsening, w.data());
    // The points fine on k axes take their weights from neighbours fine on fewer, so the
    // classes go in order; within a class each point writes its own slots. By lines (fixed y,
    // z), so no point's coordinates need a division.
    const std::int64_t lines = fine.points[1] * fine.points[2];
    for (int k = 1; k <= fine.dimension; ++k) {
#pragma omp parallel for schedule(static)
        for (std::int64_t line = 0; line < lines; ++line) {
            std::int64_t c[3] = {0, line % fine.points[1], line / fine.points[1]};
            const int line_class = axes_count(fine_axes_of(c, t) & ~1u);  // y, z
            if (line_class > k || line_class < k - 1) continue;
            for (c[0] = 0; c[0] < fine.points[0]; ++c[0]) {
                const unsigned mask = fine_axes_of(c, t);
                if (axes_count(mask) != k) continue;
                collapsed_weights_at(rows, steps, t, w.data(), c[0] + fine.points[0] * line, c,
                                     mask);
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

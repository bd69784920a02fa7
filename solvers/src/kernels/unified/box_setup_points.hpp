#pragma once
// The per-point arithmetic of a multigrid level's set-up on a box (multigrid/level_transfer.hpp's
// formulas, double), host-device: a row's entries with their steps in the box, the collapsed
// interpolation weights of a fine point, and the Galerkin row P^T A P of a coarse point. The host
// loops of multigrid/ and each back-end's set-up kernels call these same functions, so every
// back-end computes the host's bits.
#include <cstdint>

#include "base/kernel_table.hpp"
#include "kernels/unified/row_products.hpp"
#include "simrun/solvers/base/host_device.hpp"
#include "simrun/solvers/base/matrix_views.hpp"

namespace simrun::solvers {

// Calls f(j, value, s) for each nonzero entry of row i (at coordinates c) whose column j lies in
// the matrix, s the step from i to j per axis, in diagonal order.
template <typename F>
SIMRUN_HOST_DEVICE inline void for_each_box_entry(const DiaView<double>& a,
                                                  const BoxDiagonalSteps& steps,
                                                  const BoxShape& box, std::int64_t i,
                                                  const std::int64_t (&c)[3], F&& f) {
    const unsigned key = dia_row_key(a, i);
    for (int d = 0; d < a.num_diagonals; ++d) {
        const double value = dia_entry(a, key, d, i);
        if (value == 0.0) continue;
        const std::int64_t j = i + a.offsets[d];
        if (j < 0 || j >= a.n) continue;
        int s[3];
        if (steps.decoded) {
            for (int axis = 0; axis < 3; ++axis) s[axis] = steps.step[d][axis];
        } else {
            const std::int64_t line = j / box.points[0];
            const std::int64_t cj[3] = {j - line * box.points[0], line % box.points[1],
                                        line / box.points[1]};
            for (int axis = 0; axis < 3; ++axis) s[axis] = static_cast<int>(cj[axis] - c[axis]);
        }
        f(j, value, s);
    }
}

// The axes on which fine point c lies between coarse points of the transfer t (bit a set).
template <typename T>
SIMRUN_HOST_DEVICE inline unsigned fine_axes_of(const std::int64_t (&c)[3],
                                                const BoxTransferView<T>& t) {
    unsigned mask = 0;
    for (int axis = 0; axis < 3; ++axis) {
        if (t.step[axis] == 2 && ((c[axis] - t.first[axis]) & 1) != 0) mask |= 1u << axis;
    }
    return mask;
}

SIMRUN_HOST_DEVICE inline int axes_count(unsigned mask) {
    return static_cast<int>((mask & 1u) + ((mask >> 1) & 1u) + ((mask >> 2) & 1u));
}

// Black-box weights of fine point c (row `row`), fine on the axes `mask`: it takes
// -sum_h c_h w_h / c_0 from its neighbours h one step away along those axes (the stencil
// collapsed onto them; c_0 collects the rest and the positive couplings), adding to its own
// slot of each coarse point whose weights reach h (weights: slot s of coarse point I at
// s * nc + I). The neighbours are fine on fewer axes, so their weights are final when the
// points fine on |mask| axes are done after those fine on fewer; each point writes its own
// slots only. At most 64 terms follow the neighbours (the rest join c_0).
SIMRUN_HOST_DEVICE inline void collapsed_weights_at(const DiaView<double>& a,
                                                    const BoxDiagonalSteps& steps,
                                                    const BoxTransferView<double>& t, double* w,
                                                    std::int64_t row, const std::int64_t (&c)[3],
                                                    unsigned mask) {
    constexpr int max_terms = 64;
    const auto moves = [&](const int(&s)[3]) {
        bool any = false;
        for (int axis = 0; axis < 3; ++axis) any = any || (((mask >> axis) & 1u) && s[axis] != 0);
        return any;
    };
    double diagonal = 0, sum = 0;
    int count = 0;
    for_each_box_entry(a, steps, t.fine, row, c, [&](std::int64_t, double value, const int(&s)[3]) {
        if (!moves(s) || value > 0 || count == max_terms) {
            diagonal += value;
        } else {
            ++count;
            sum += value;
        }
    });
    if (count == 0) return;              // no coupling to interpolate from
    if (diagonal <= 0) diagonal = -sum;  // weights that sum to 1
    const std::int64_t nc = t.coarse.size();
    int seen = 0;  // the same terms again, in the same order
    for_each_box_entry(a, steps, t.fine, row, c, [&](std::int64_t, double value, const int(&s)[3]) {
        if (!moves(s) || value > 0 || seen == max_terms) return;
        ++seen;
        std::int64_t h[3];
        for (int axis = 0; axis < 3; ++axis) {
            h[axis] = c[axis] + (((mask >> axis) & 1u) ? s[axis] : 0);
        }
        const double scale = -value / diagonal;
        for_each_coarse_neighbour(
            h, t.step, t.first, t.coarse,
            [&](std::int64_t point, std::int64_t i, std::int64_t j, std::int64_t k, int slot) {
                const double weight_h = w[slot * nc + point];
                if (weight_h == 0.0) return;
                const std::int64_t at[3] = {i, j, k};
                int offset[3];
                for (int axis = 0; axis < 3; ++axis) {
                    offset[axis] =
                        static_cast<int>(c[axis] - (t.first[axis] + t.step[axis] * at[axis]));
                }
                const int own = transfer_slot(t.fine.dimension, offset[0], offset[1], offset[2]);
                w[own * nc + point] += scale * weight_h;
            });
    });
}

// Along one axis, the coarse points whose weights reach fine point g lying delta fine points
// from coarse point I's (|delta| <= 2): on a coarse line (delta even, or the axis kept) coarse
// point I + delta / 2 at slot offset 0; else I + (delta - 1) / 2 (g one step above it, offset
// 1) and I + (delta + 1) / 2 (one below, offset -1). Returns how many, as steps from I (dj) and
// slot offsets (off).
SIMRUN_HOST_DEVICE inline int coarse_reaches(int delta, int step, int (&dj)[2], int (&off)[2]) {
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

// Coarse row `point` (at coordinates at) of P^T A P term by term, each fine and coarse point
// checked against its box (the rows at the box's ends): sums[coarse stencil step].
SIMRUN_HOST_DEVICE inline void general_galerkin_row(const DiaView<double>& a,
                                                    const BoxDiagonalSteps& steps,
                                                    const BoxTransferView<double>& t,
                                                    std::int64_t point, const std::int64_t (&at)[3],
                                                    double (&sums)[27]) {
    const BoxShape& coarse = t.coarse;
    const BoxShape& fine = t.fine;
    const std::int64_t nc = coarse.size();
    std::int64_t centre[3];
    int reach[3];
    for (int axis = 0; axis < 3; ++axis) {
        centre[axis] = t.first[axis] + t.step[axis] * at[axis];
        reach[axis] = t.step[axis] == 2 ? 1 : 0;
    }
    // R = P^T: the fine points f that coarse point I's weights reach ...
    for (int fz = -reach[2]; fz <= reach[2]; ++fz) {
        for (int fy = -reach[1]; fy <= reach[1]; ++fy) {
            for (int fx = -reach[0]; fx <= reach[0]; ++fx) {
                const std::int64_t f[3] = {centre[0] + fx, centre[1] + fy, centre[2] + fz};
                bool within = true;
                for (int axis = 0; axis < 3; ++axis) {
                    within = within && f[axis] >= 0 && f[axis] < fine.points[axis];
                }
                if (!within) continue;
                const double w_f =
                    t.weights[transfer_slot(fine.dimension, fx, fy, fz) * nc + point];
                if (w_f == 0.0) continue;
                // ... times A's row f, times P's rows g of its stencil (coarse_reaches).
                const std::int64_t row = f[0] + fine.points[0] * (f[1] + fine.points[1] * f[2]);
                const int from_centre[3] = {fx, fy, fz};
                for_each_box_entry(
                    a, steps, fine, row, f, [&](std::int64_t, double value, const int(&s)[3]) {
                        int count[3], dj[3][2], off[3][2];
                        for (int axis = 0; axis < 3; ++axis) {
                            int all_dj[2], all_off[2];
                            const int all = coarse_reaches(from_centre[axis] + s[axis],
                                                           t.step[axis], all_dj, all_off);
                            count[axis] = 0;
                            for (int e = 0; e < all; ++e) {  // those inside the coarse box
                                const std::int64_t j = at[axis] + all_dj[e];
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
                                    const int slot = transfer_slot(fine.dimension, off[0][p],
                                                                   off[1][q], off[2][r]);
                                    const double w_g = t.weights[slot * nc + column];
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

// The same row by the table, for a coarse point inside the box whose fine point is row
// centre_row: the same terms in the same order, so the same bits.
SIMRUN_HOST_DEVICE inline void tabled_galerkin_row(const DiaView<double>& a,
                                                   const BoxTransferView<double>& t,
                                                   const GalerkinTableView& table,
                                                   std::int64_t point, std::int64_t centre_row,
                                                   double (&sums)[27]) {
    const std::int64_t nc = t.coarse.size();
    const int diagonals = a.num_diagonals;
    for (int p = 0; p < table.fine_points; ++p) {
        const double w_f = t.weights[table.fine_slot[p] * nc + point];
        if (w_f == 0.0) continue;
        const std::int64_t row = centre_row + table.fine_offset[p];
        const unsigned key = dia_row_key(a, row);
        for (int d = 0; d < diagonals; ++d) {
            const double value = dia_entry(a, key, d, row);
            if (value == 0.0) continue;
            const double w_fa = w_f * value;
            const std::int64_t last = table.begin[p * diagonals + d + 1];
            for (std::int64_t k = table.begin[p * diagonals + d]; k < last; ++k) {
                sums[table.reach_step[k]] +=
                    w_fa * t.weights[table.reach_slot[k] * nc + point + table.reach_column[k]];
            }
        }
    }
}

// Coarse row `point` of P^T A P into `coarse` (DIA in `layout`, d * nc + point): by the table
// where the point is inside the box and the steps are decoded, else term by term; its other
// entries zero.
SIMRUN_HOST_DEVICE inline void galerkin_row(const DiaView<double>& a, const BoxDiagonalSteps& steps,
                                            const BoxTransferView<double>& t,
                                            const GalerkinTableView& table,
                                            const GalerkinLayout& layout, std::int64_t point,
                                            double* coarse) {
    const BoxShape& shape = t.coarse;
    const std::int64_t line = point / shape.points[0];
    const std::int64_t at[3] = {point - line * shape.points[0], line % shape.points[1],
                                line / shape.points[1]};
    bool inside = steps.decoded;
    for (int axis = 0; axis < 3; ++axis) {
        if (shape.points[axis] == 1) continue;
        inside = inside && at[axis] >= 1 && at[axis] <= shape.points[axis] - 2;
    }
    double sums[27] = {};
    if (inside) {
        std::int64_t centre_row = 0;
        for (int axis = 2; axis >= 0; --axis) {
            centre_row = centre_row * t.fine.points[axis] + t.first[axis] + t.step[axis] * at[axis];
        }
        tabled_galerkin_row(a, t, table, point, centre_row, sums);
    } else {
        general_galerkin_row(a, steps, t, point, at, sums);
    }
    const std::int64_t nc = shape.size();
    for (int d = 0; d < layout.diagonals; ++d) coarse[d * nc + point] = 0.0;
    for (int step = 0; step < 27; ++step) {
        if (sums[step] == 0.0 || layout.step_diagonal[step] < 0) continue;
        coarse[layout.step_diagonal[step] * nc + point] = sums[step];
    }
}

}  // namespace simrun::solvers

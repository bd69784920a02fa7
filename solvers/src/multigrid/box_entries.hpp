#pragma once
// The transfer's view of a box operator's entries (level_transfer's files, host): each DIA
// diagonal's step in the box, a row's nonzero entries with their steps, the axes on which a
// fine point lies between coarse points, and the coarse points whose weights reach it.
#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/kernel_table.hpp"
#include "boxes/box_steps.hpp"
#include "multigrid/level_transfer.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"

namespace simrun::solvers::multigrid {

using Coordinates = std::array<std::int64_t, 3>;

// Each diagonal's step in the box, where every DIA offset is one step and one only (the box
// has at least 3 points along each axis it uses): the entries' steps are then known without
// the columns' coordinates. Otherwise (`decoded` false) they are computed entry by entry.
struct DiagonalSteps {
    bool decoded = true;
    std::vector<Coordinates> steps;

    // `a`: DiaData or rows that read as it does (ClassRows).
    template <typename Rows>
    DiagonalSteps(const Rows& a, const GridBox& box) {
        for (const int offset : a.offsets) {
            int found = 0;
            Coordinates step{};
            for_each_box_step(box, [&](const Coordinates& s, std::int64_t s_offset) {
                if (s_offset != offset) return;
                ++found;
                step = s;
            });
            decoded = decoded && found == 1;
            steps.push_back(step);
        }
    }
    // As the set-up's point functions read them (box_setup_points.hpp). Throws
    // std::invalid_argument beyond max_dia_diagonals.
    BoxDiagonalSteps view() const {
        if (steps.size() > static_cast<std::size_t>(max_dia_diagonals)) {
            throw std::invalid_argument("multigrid: more than " +
                                        std::to_string(max_dia_diagonals) + " diagonals");
        }
        BoxDiagonalSteps view;
        view.decoded = decoded;
        for (std::size_t d = 0; d < steps.size(); ++d) {
            for (std::size_t axis = 0; axis < 3; ++axis) {
                view.step[d][axis] = static_cast<int>(steps[d][axis]);
            }
        }
        return view;
    }
};

// Host rows as the set-up's point functions read them: general storage over a's values. Throws
// std::invalid_argument beyond max_dia_diagonals.
inline DiaView<double> rows_view(const DiaData<double>& a) {
    if (a.num_diagonals() > max_dia_diagonals) {
        throw std::invalid_argument("multigrid: more than " + std::to_string(max_dia_diagonals) +
                                    " diagonals");
    }
    DiaView<double> view{};
    view.n = a.n;
    view.num_diagonals = a.num_diagonals();
    std::copy(a.offsets.begin(), a.offsets.end(), view.offsets);
    view.values = a.values.data();
    return view;
}

// The transfer of `coarsening` from `fine` with `weights` (in t's layout; on the host or the
// back-end) as the transfer kernels and the set-up's point functions read it.
inline BoxTransferView<double> transfer_view(const GridBox& fine, const BoxCoarsening& coarsening,
                                             const double* weights) {
    BoxTransferView<double> t{};
    const GridBox& coarse = coarsening.coarse;
    t.fine = {fine.dimension, {fine.points[0], fine.points[1], fine.points[2]}};
    t.coarse = {fine.dimension, {coarse.points[0], coarse.points[1], coarse.points[2]}};
    for (std::size_t axis = 0; axis < 3; ++axis) {
        t.step[axis] = coarsening.axes[axis].step;
        t.first[axis] = coarsening.axes[axis].first;
    }
    t.weights = weights;
    return t;
}

// The nonzero entries of row i (at coordinates c) as (column, value, step from i to the
// column per axis); f is called for each. The matrix must couple only neighbours
// (check_box_couplings), unless the steps are computed entry by entry.
template <typename Rows, typename F>
void for_each_entry(const Rows& a, const DiagonalSteps& diagonal_steps, const GridBox& box,
                    std::int64_t i, const Coordinates& c, F&& f) {
    for (int d = 0; d < a.num_diagonals(); ++d) {
        const double value = a.at(d, i);
        if (value == 0.0) continue;
        const std::int64_t j = i + a.offsets[static_cast<std::size_t>(d)];
        if (j < 0 || j >= a.n) continue;
        if (diagonal_steps.decoded) {
            f(j, value, diagonal_steps.steps[static_cast<std::size_t>(d)]);
            continue;
        }
        const Coordinates cj = box.coordinates(j);
        f(j, value, Coordinates{cj[0] - c[0], cj[1] - c[1], cj[2] - c[2]});
    }
}

// The axes on which point c lies between coarse points (bit a set).
inline unsigned fine_axes(const Coordinates& c, const BoxCoarsening& coarsening) {
    unsigned mask = 0;
    for (std::size_t axis = 0; axis < 3; ++axis) {
        const AxisCoarsening& ax = coarsening.axes[axis];
        if (ax.step == 2 && ((c[axis] - ax.first) & 1) != 0) mask |= 1u << axis;
    }
    return mask;
}

// Calls visit(coarse point, its coordinates, slot of c relative to it) for each coarse point
// whose weights reach fine point c (as the transfer kernels visit them).
template <typename Visit>
void visit_coarse_neighbours(const Coordinates& c, const GridBox& fine,
                             const BoxCoarsening& coarsening, Visit&& visit) {
    const std::int64_t f[3] = {c[0], c[1], c[2]};
    const int step[3] = {coarsening.axes[0].step, coarsening.axes[1].step, coarsening.axes[2].step};
    const int first[3] = {coarsening.axes[0].first, coarsening.axes[1].first,
                          coarsening.axes[2].first};
    const GridBox& coarse = coarsening.coarse;
    const BoxShape shape{fine.dimension, {coarse.points[0], coarse.points[1], coarse.points[2]}};
    for_each_coarse_neighbour(
        f, step, first, shape,
        [&](std::int64_t point, std::int64_t i, std::int64_t j, std::int64_t k, int slot) {
            visit(point, Coordinates{i, j, k}, slot);
        });
}

}  // namespace simrun::solvers::multigrid

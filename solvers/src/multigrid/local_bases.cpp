// The interpolation's correction at coefficient jumps (local_bases.hpp): the rows at a jump,
// each coarse point's basis function from a small local solve, and the weights replaced where
// the basis and the collapsed weights disagree.
#include "multigrid/local_bases.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "multigrid/box_entries.hpp"

namespace simrun::solvers::multigrid {
namespace {

// A row whose couplings towards the two sides of an axis differ by more than this factor sits at
// a coefficient jump, where the collapsed weights may follow a weak coupling (on the aligned
// checkerboard at 513^2 they took 14 MG-PCG iterations for a contrast of 10, 21 for 30, 33 for
// 100; the local bases 11 to 12).
constexpr double jump_ratio = local_basis_jump_ratio;
// A fine point takes the local basis's weights where one differs from the collapsed weight by
// more than this share of their sum (the collapsed weights stay wherever they are about right,
// so smooth and constant coefficients keep them to the bit).
constexpr double basis_disagreement = 0.1;
// How far the local bases reach: two steps in 2D (16 unknowns; one step, 8, gave PCG 29
// iterations on the aligned checkerboard at 513^2 against 18), one in 3D (26 unknowns; two
// would be 98, some 300,000 operations per coarse point).
int basis_reach(int dimension) { return dimension <= 2 ? 2 : 1; }
// The most unknowns that makes (3D: 3^3 - 1; 2D: 5^2 less its 9 coarse points), and the places
// of the largest region (5^3).
constexpr int max_basis_unknowns = 26;
constexpr int max_basis_places = 125;
using BasisSystem = std::array<double, max_basis_unknowns*(max_basis_unknowns + 1)>;

// Adds a negative off-diagonal entry of step s to the couplings towards each side it moves.
void add_to_sides(double (&side)[3][2], double value, const Coordinates& s) {
    for (std::size_t axis = 0; axis < 3; ++axis) {
        if (s[axis] != 0) side[axis][s[axis] > 0 ? 1 : 0] -= value;
    }
}

// Whether the couplings towards the two sides along some axis differ by more than jump_ratio.
bool sides_jump(const double (&side)[3][2]) {
    for (const auto& [below, above] : side) {
        const double weaker = std::min(below, above), stronger = std::max(below, above);
        if (weaker > 0 && stronger > jump_ratio * weaker) return true;
    }
    return false;
}

// Whether the row's couplings towards the two sides along some axis (each side's negative
// entries summed) differ by more than jump_ratio: a coefficient jump at the point. (A side
// without couplings, at a wall, is none.)
bool row_at_jump(const DiaData<double>& a, const DiagonalSteps& steps, const GridBox& fine,
                 std::int64_t row, const Coordinates& c) {
    double side[3][2] = {};
    for_each_entry(a, steps, fine, row, c, [&](std::int64_t j, double value, const Coordinates& s) {
        if (j == row || value >= 0) return;
        add_to_sides(side, value, s);
    });
    return sides_jump(side);
}

// The m x m system [A | b] stored by rows (m + 1 values a row) solved in place by elimination
// with partial pivoting, then back substitution into phi (0 where a pivot is zero).
void solve_by_elimination(BasisSystem& system, int m, std::array<double, max_basis_unknowns>& phi) {
    const auto entry = [&](int r, int c) -> double& {
        return system[static_cast<std::size_t>(r * (m + 1) + c)];
    };
    for (int col = 0; col < m; ++col) {
        int pivot = col;
        for (int r = col + 1; r < m; ++r) {
            if (std::abs(entry(r, col)) > std::abs(entry(pivot, col))) pivot = r;
        }
        if (entry(pivot, col) == 0.0) continue;
        if (pivot != col) {
            for (int k = 0; k <= m; ++k) std::swap(entry(pivot, k), entry(col, k));
        }
        for (int r = col + 1; r < m; ++r) {
            const double factor = entry(r, col) / entry(col, col);
            if (factor == 0.0) continue;
            for (int k = col; k <= m; ++k) entry(r, k) -= factor * entry(col, k);
        }
    }
    for (int r = m - 1; r >= 0; --r) {
        double value = entry(r, m);
        for (int k = r + 1; k < m; ++k) value -= entry(r, k) * phi[static_cast<std::size_t>(k)];
        phi[static_cast<std::size_t>(r)] = entry(r, r) != 0.0 ? value / entry(r, r) : 0.0;
    }
}

// Coarse point `point`'s basis function near it: A phi = 0 on the fine points up to `reach`
// steps from it along each coarsened axis, phi = 1 at the point, 0 at the other coarse points
// and beyond (a principal submatrix of A, solved by elimination with partial pivoting). Its
// values on the weights' slots (one step) go to raw[slot * nc + point]; the points further out
// only let the basis follow the couplings past them (oversampling).
void local_basis(const DiaData<double>& a, const DiagonalSteps& steps, const GridBox& fine,
                 const BoxCoarsening& coarsening, int reach, std::int64_t point,
                 std::vector<double>& raw) {
    const std::int64_t nc = coarsening.coarse.size();
    const int dimension = fine.dimension;
    const Coordinates at_coarse = coarsening.coarse.coordinates(point);
    Coordinates at{};
    int reaches[3];
    for (std::size_t axis = 0; axis < 3; ++axis) {
        const AxisCoarsening& ax = coarsening.axes[axis];
        at[axis] = ax.first + ax.step * at_coarse[axis];
        reaches[axis] = ax.step == 2 ? reach : 0;
    }
    // The unknowns: the fine points of the region, each with its place in the region (a cube
    // of side 2 reach + 1) and its weight slot (-1 beyond one step). On the stack: this runs
    // for every coarse point near a jump.
    const int side = 2 * reach + 1;
    const auto place = [&](const int(&offset)[3]) {
        return (offset[0] + reach) + side * ((offset[1] + reach) + side * (offset[2] + reach));
    };
    std::array<int, max_basis_places> unknown_of;
    unknown_of.fill(-1);
    std::array<int, max_basis_unknowns> slot_of{};
    std::array<Coordinates, max_basis_unknowns> position{};
    int m = 0;
    int offset[3];
    for (offset[2] = -reaches[2]; offset[2] <= reaches[2]; ++offset[2]) {
        for (offset[1] = -reaches[1]; offset[1] <= reaches[1]; ++offset[1]) {
            for (offset[0] = -reaches[0]; offset[0] <= reaches[0]; ++offset[0]) {
                bool inside = true, coarse_point = true, near = true;
                Coordinates g{};
                for (std::size_t axis = 0; axis < 3; ++axis) {
                    g[axis] = at[axis] + offset[axis];
                    inside = inside && g[axis] >= 0 && g[axis] < fine.points[axis];
                    coarse_point = coarse_point && offset[axis] % 2 == 0;
                    near = near && offset[axis] >= -1 && offset[axis] <= 1;
                }
                if (!inside || coarse_point) continue;
                unknown_of[static_cast<std::size_t>(place(offset))] = m;
                slot_of[static_cast<std::size_t>(m)] =
                    near ? transfer_slot(dimension, offset[0], offset[1], offset[2]) : -1;
                position[static_cast<std::size_t>(m++)] = g;
            }
        }
    }
    // [A_ff | -A_f,point] by rows.
    BasisSystem system{};
    const auto entry = [&](int r, int c) -> double& {
        return system[static_cast<std::size_t>(r * (m + 1) + c)];
    };
    for (int r = 0; r < m; ++r) {
        const Coordinates& g = position[static_cast<std::size_t>(r)];
        for_each_entry(a, steps, fine, fine.row(g[0], g[1], g[2]), g,
                       [&](std::int64_t, double value, const Coordinates& s) {
                           int to[3];
                           bool centre = true;
                           for (std::size_t axis = 0; axis < 3; ++axis) {
                               to[axis] = static_cast<int>(g[axis] + s[axis] - at[axis]);
                               if (to[axis] < -reaches[axis] || to[axis] > reaches[axis]) {
                                   return;  // beyond the region: phi = 0
                               }
                               centre = centre && to[axis] == 0;
                           }
                           if (centre) {
                               entry(r, m) -= value;
                               return;
                           }
                           const int c = unknown_of[static_cast<std::size_t>(place(to))];
                           if (c >= 0) entry(r, c) += value;  // (other coarse points: phi = 0)
                       });
    }
    std::array<double, max_basis_unknowns> phi{};
    solve_by_elimination(system, m, phi);
    for (int r = 0; r < m; ++r) {
        const int slot = slot_of[static_cast<std::size_t>(r)];
        if (slot >= 0) {
            raw[static_cast<std::size_t>(slot * nc + point)] = phi[static_cast<std::size_t>(r)];
        }
    }
}

// The fine points that take a basis (takes_basis) get their coarse points' bases (raw), scaled to
// the collapsed weights' sum, where one differs from its collapsed weight in w by more than
// basis_disagreement of that sum.
void take_bases(const GridBox& fine, const BoxCoarsening& coarsening,
                const std::vector<std::uint8_t>& takes_basis, const std::vector<double>& raw,
                std::vector<double>& w) {
    const std::int64_t nc = coarsening.coarse.size();
#pragma omp parallel for schedule(static)
    for (std::int64_t row = 0; row < fine.size(); ++row) {
        if (takes_basis[static_cast<std::size_t>(row)] == 0) continue;
        std::size_t index[8];
        int count = 0;
        double collapsed_sum = 0, basis_sum = 0;
        visit_coarse_neighbours(fine.coordinates(row), fine, coarsening,
                                [&](std::int64_t point, const Coordinates&, int slot) {
                                    const auto i = static_cast<std::size_t>(slot * nc + point);
                                    index[count++] = i;
                                    collapsed_sum += w[i];
                                    basis_sum += raw[i];
                                });
        if (!(basis_sum > 0) || !(collapsed_sum > 0)) continue;
        const double scale = collapsed_sum / basis_sum;
        double largest_difference = 0;
        for (int k = 0; k < count; ++k) {
            largest_difference =
                std::max(largest_difference, std::abs(raw[index[k]] * scale - w[index[k]]));
        }
        if (largest_difference <= basis_disagreement * collapsed_sum) continue;
        for (int k = 0; k < count; ++k) w[index[k]] = raw[index[k]] * scale;
    }
}

}  // namespace

bool classes_at_jump(const ClassRows& rows, const DiagonalSteps& steps) {
    const std::size_t diagonals = rows.offsets.size();
    for (std::size_t c = 0; c < rows.classes(); ++c) {
        double side[3][2] = {};
        for (std::size_t d = 0; d < diagonals; ++d) {
            const double value = rows.table[c * diagonals + d];
            if (rows.offsets[d] == 0 || value >= 0) continue;
            add_to_sides(side, value, steps.steps[d]);
        }
        if (sides_jump(side)) return true;
    }
    return false;
}

bool steps_along_one_axis(const DiagonalSteps& steps) {
    return steps.decoded && std::all_of(steps.steps.begin(), steps.steps.end(), [](const auto& s) {
               return std::count(s.begin(), s.end(), 0) >= 2;
           });
}

bool collapsed_weights_final(const DiaData<double>& rows, const DiagonalSteps& steps,
                             const GridBox& fine) {
    if (!steps.decoded) return false;
    // Along the axes a side's coupling is one entry: has_coefficient_jumps finds the rows.
    if (steps_along_one_axis(steps)) return !has_coefficient_jumps(rows, jump_ratio);
    bool any = false;
#pragma omp parallel for schedule(static) reduction(|| : any)
    for (std::int64_t row = 0; row < fine.size(); ++row) {
        any = any || row_at_jump(rows, steps, fine, row, fine.coordinates(row));
    }
    return !any;
}

void follow_strong_couplings(const DiaData<double>& a, const GridBox& fine,
                             const BoxCoarsening& coarsening, std::vector<double>& w) {
    const GridBox& coarse = coarsening.coarse;
    const std::int64_t nc = coarse.size();
    const DiagonalSteps steps(a, fine);
    // Where every diagonal steps along one axis, a side's coupling is one entry, and the rows
    // at a jump are those has_coefficient_jumps finds (none for constant coefficients).
    if (steps_along_one_axis(steps) && !has_coefficient_jumps(a, jump_ratio)) return;
    std::vector<std::uint8_t> at_jump(static_cast<std::size_t>(fine.size()), 0);
    bool any = false;
#pragma omp parallel for schedule(static) reduction(|| : any)
    for (std::int64_t row = 0; row < fine.size(); ++row) {
        const bool jump = row_at_jump(a, steps, fine, row, fine.coordinates(row));
        at_jump[static_cast<std::size_t>(row)] = jump ? 1 : 0;
        any = any || jump;
    }
    if (!any) return;
    // The fine points next to a jump, and the coarse points their weights come from.
    const auto next_to_jump = [&](const Coordinates& c) {
        bool found = false;
        for_each_box_step(fine, [&](const Coordinates& s, std::int64_t) {
            Coordinates g{};
            bool inside = true;
            for (std::size_t axis = 0; axis < 3; ++axis) {
                g[axis] = c[axis] + s[axis];
                inside = inside && g[axis] >= 0 && g[axis] < fine.points[axis];
            }
            found = found ||
                    (inside && at_jump[static_cast<std::size_t>(fine.row(g[0], g[1], g[2]))] != 0);
        });
        return found;
    };
    std::vector<std::uint8_t> takes_basis(static_cast<std::size_t>(fine.size()), 0);
    std::vector<std::uint8_t> needs_basis(static_cast<std::size_t>(nc), 0);
#pragma omp parallel for schedule(static)
    for (std::int64_t row = 0; row < fine.size(); ++row) {
        const Coordinates c = fine.coordinates(row);
        if (fine_axes(c, coarsening) == 0 || !next_to_jump(c)) continue;
        takes_basis[static_cast<std::size_t>(row)] = 1;
        visit_coarse_neighbours(
            c, fine, coarsening, [&](std::int64_t point, const Coordinates&, int) {
                std::atomic_ref<std::uint8_t>(needs_basis[static_cast<std::size_t>(point)])
                    .store(1);
            });
    }
    std::vector<double> raw(w.size(), 0.0);
#pragma omp parallel for schedule(dynamic, 64)
    for (std::int64_t point = 0; point < nc; ++point) {
        if (needs_basis[static_cast<std::size_t>(point)] != 0) {
            local_basis(a, steps, fine, coarsening, basis_reach(fine.dimension), point, raw);
        }
    }
    take_bases(fine, coarsening, takes_basis, raw, w);
}

}  // namespace simrun::solvers::multigrid

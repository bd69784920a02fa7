#include "multigrid/level_transfer.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "base/kernel_table.hpp"
#include "boxes/box_steps.hpp"
#include "matrices/value_classes.hpp"

namespace simrun::solvers::multigrid {
namespace {

using Coordinates = std::array<std::int64_t, 3>;

std::string point_text(const GridBox& box, std::int64_t row) {
    const Coordinates c = box.coordinates(row);
    std::string text = "row " + std::to_string(row) + " (" + std::to_string(c[0]);
    for (int axis = 1; axis < box.dimension; ++axis) text += ", " + std::to_string(c[axis]);
    return text + ")";
}


// Each diagonal's step in the box, where every DIA offset is one step and one only (the box
// has at least 3 points along each axis it uses): the entries' steps are then known without
// the columns' coordinates. Otherwise (`decoded` false) they are computed entry by entry.
struct DiagonalSteps {
    bool decoded = true;
    std::vector<Coordinates> steps;

    DiagonalSteps(const DiaData<double>& a, const GridBox& box) {
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
};

// The nonzero entries of row i (at coordinates c) as (column, value, step from i to the
// column per axis); f is called for each. The matrix must couple only neighbours
// (check_box_couplings), unless the steps are computed entry by entry.
template <typename F>
void for_each_entry(const DiaData<double>& a, const DiagonalSteps& diagonal_steps,
                    const GridBox& box, std::int64_t i, const Coordinates& c, F&& f) {
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
unsigned fine_axes(const Coordinates& c, const BoxCoarsening& coarsening) {
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

}  // namespace

template <typename V>
bool has_coefficient_jumps(const DiaData<V>& a, double ratio) {
    bool jumps = false;
    for (int d = 0; d < a.num_diagonals(); ++d) {
        const int offset = a.offsets[static_cast<std::size_t>(d)];
        const int opposite = offset > 0 ? a.find_diagonal(-offset) : -1;
        if (opposite < 0) continue;
#pragma omp parallel for schedule(static) reduction(|| : jumps)
        for (std::int64_t i = 0; i < a.n; ++i) {
            const double up = -static_cast<double>(a.at(d, i)),
                         down = -static_cast<double>(a.at(opposite, i));
            if (up > 0 && down > 0 && std::max(up, down) > ratio * std::min(up, down)) {
                jumps = true;
            }
        }
    }
    return jumps;
}

template bool has_coefficient_jumps(const DiaData<float>&, double);
template bool has_coefficient_jumps(const DiaData<double>&, double);

int transfer_slots(int dimension) { return dimension == 1 ? 3 : dimension == 2 ? 9 : 27; }

DiaData<double> without_empty_diagonals(DiaData<double> a) {
    a.keep_diagonals([&](int d) {
        if (a.offsets[static_cast<std::size_t>(d)] == 0) return true;
        const auto begin = a.values.begin() + d * a.n;
        return std::any_of(begin, begin + a.n, [](double v) { return v != 0.0; });
    });
    return a;
}

std::optional<WeightClasses> weight_classes(const std::vector<double>& weights,
                                            std::int64_t coarse_points, int slots) {
    return classify_values<double>(
        coarse_points, slots, max_transfer_slots, [&](int slot, std::int64_t i) {
            return weights[static_cast<std::size_t>(slot * coarse_points + i)];
        });
}

bool check_box_couplings(const DiaData<double>& a, const GridBox& box) {
    if (a.n != box.size()) {
        throw std::invalid_argument("multigrid: the matrix has " + std::to_string(a.n) +
                                    " rows but the box " + box.describe() + " has " +
                                    std::to_string(box.size()) + " points");
    }
    // Every entry's step from the coordinates: the check cannot assume what it checks. Where
    // each offset is one step of the box, an entry couples a neighbour exactly when its row's
    // point plus that step lies in the box (otherwise the offset wraps round to another line):
    // only the rows on the faces the step leaves by can fail, and a diagonal whose step moves
    // along several axes is read for a nonzero entry; else each column's coordinates are
    // computed, entry by entry.
    const DiagonalSteps decoded(a, box);
    DiagonalSteps exact = decoded;
    exact.decoded = false;
    std::int64_t first_bad = a.n;
    bool along_axes = true;
    if (decoded.decoded) {
        for (int d = 0; d < a.num_diagonals(); ++d) {
            const Coordinates& s = decoded.steps[static_cast<std::size_t>(d)];
            const std::int64_t offset = a.offsets[static_cast<std::size_t>(d)];
            // The rows whose entry on this diagonal has a column in the matrix.
            const std::int64_t begin = std::max<std::int64_t>(0, -offset),
                               end = std::min(a.n, a.n - offset);
            const auto entry = [&](std::int64_t i) {
                return i >= begin && i < end && a.at(d, i) != 0.0;
            };
            // (Read until its first nonzero entry: a Galerkin level's come first.)
            if (along_axes &&
                std::count_if(s.begin(), s.end(), [](std::int64_t v) { return v != 0; }) > 1) {
                const auto first = a.values.begin() + d * a.n;
                along_axes = std::all_of(first + begin, first + end,
                                         [](double value) { return value == 0.0; });
            }
            for (std::size_t axis = 0; axis < 3; ++axis) {
                if (s[axis] == 0) continue;
                // The face the step leaves by: its rows, by the other two axes.
                const std::size_t u = axis == 0 ? 1 : 0, v = axis == 2 ? 1 : 2;
                Coordinates c{};
                c[axis] = s[axis] < 0 ? 0 : box.points[axis] - 1;
                for (c[v] = 0; c[v] < box.points[v]; ++c[v]) {
                    for (c[u] = 0; c[u] < box.points[u]; ++c[u]) {
                        const std::int64_t i = box.row(c[0], c[1], c[2]);
                        if (entry(i)) first_bad = std::min(first_bad, i);
                    }
                }
            }
        }
    } else {
        const std::int64_t lines = box.points[1] * box.points[2];
#pragma omp parallel for schedule(static) reduction(min : first_bad) reduction(&& : along_axes)
        for (std::int64_t line = 0; line < lines; ++line) {
            Coordinates c{0, line % box.points[1], line / box.points[1]};
            for (c[0] = 0; c[0] < box.points[0]; ++c[0]) {
                const std::int64_t i = c[0] + box.points[0] * line;
                const auto visit = [&](std::int64_t, double, const Coordinates& s) {
                    int moves = 0;
                    for (std::size_t axis = 0; axis < 3; ++axis) {
                        const std::int64_t to = c[axis] + s[axis];
                        if (s[axis] < -1 || s[axis] > 1 || to < 0 || to >= box.points[axis]) {
                            first_bad = std::min(first_bad, i);
                        }
                        moves += s[axis] != 0 ? 1 : 0;
                    }
                    along_axes = along_axes && moves <= 1;
                };
                for_each_entry(a, exact, box, i, c, visit);
            }
        }
    }
    if (first_bad < a.n) {
        const Coordinates c = box.coordinates(first_bad);
        for_each_entry(
            a, exact, box, first_bad, c, [&](std::int64_t j, double, const Coordinates& s) {
                const Coordinates cj = box.coordinates(j);
                for (std::size_t axis = 0; axis < 3; ++axis) {
                    if (s[axis] >= -1 && s[axis] <= 1 && cj[axis] == c[axis] + s[axis]) continue;
                    throw std::invalid_argument(
                        "multigrid: " + point_text(box, first_bad) + " couples to " +
                        point_text(box, j) + ", which is not its neighbour in the " +
                        box.describe() + " box: the rows are not the box's points, x fastest");
                }
            });
    }
    return along_axes;
}

CoarseningMeasures measure_coarsening(const DiaData<double>& a, const GridBox& box,
                                      const Box& own, const Coordinates& origin,
                                      const GridBox& whole) {
    const DiagonalSteps steps(a, box);
    double strength[3] = {0, 0, 0};
    double end_rows[6] = {0, 0, 0, 0, 0, 0}, end_identity[6] = {0, 0, 0, 0, 0, 0};
    double end_weight[6] = {0, 0, 0, 0, 0, 0};
    const std::int64_t lines = own.points(1) * own.points(2);
#pragma omp parallel for schedule(static) reduction(+ : strength[:3], end_rows[:6], \
                                                        end_identity[:6], end_weight[:6])
    for (std::int64_t line = 0; line < lines; ++line) {
        Coordinates c{0, own.lower[1] + line % own.points(1), own.lower[2] + line / own.points(1)};
        for (c[0] = own.lower[0]; c[0] < own.upper[0]; ++c[0]) {
            const std::int64_t i = box.row(c[0], c[1], c[2]);
            double same_line[3] = {0, 0, 0}, inward[3] = {0, 0, 0};
            bool identity = true;
            for_each_entry(a, steps, box, i, c,
                           [&](std::int64_t j, double value, const Coordinates& s) {
                               if (j != i) identity = false;
                               for (std::size_t axis = 0; axis < 3; ++axis) {
                                   if (s[axis] != 0) strength[axis] += std::abs(value);
                                   if (s[axis] == 0 || value > 0) {
                                       same_line[axis] += value;
                                   } else {
                                       inward[axis] += value;
                                   }
                               }
                           });
            for (std::size_t axis = 0; axis < 3; ++axis) {
                // The point's position in the whole box.
                const std::int64_t at = c[axis] + origin[axis];
                const std::int64_t points = whole.points[axis];
                if (points < 2) continue;
                const int side = at == 0 ? 0 : at == points - 1 ? 1 : -1;
                if (side < 0) continue;
                const std::size_t end = 2 * axis + static_cast<std::size_t>(side);
                end_rows[end] += 1;
                if (identity) {
                    end_identity[end] += 1;
                } else if (same_line[axis] > 0) {
                    end_weight[end] += std::min(1.0, -inward[axis] / same_line[axis]);
                }
            }
        }
    }
    CoarseningMeasures measures;
    std::copy_n(strength, 3, measures.values.begin());
    std::copy_n(end_rows, 6, measures.values.begin() + 3);
    std::copy_n(end_identity, 6, measures.values.begin() + 9);
    std::copy_n(end_weight, 6, measures.values.begin() + 15);
    return measures;
}

BoxCoarsening decide_coarsening(const CoarseningMeasures& measures, const GridBox& box) {
    const double* strength = measures.values.data();
    const double* end_rows = strength + 3;
    const double* end_identity = strength + 9;
    const double* end_weight = strength + 15;
    double strongest = 0;
    for (std::size_t axis = 0; axis < 3; ++axis) {
        if (box.points[axis] >= 3) strongest = std::max(strongest, strength[axis]);
    }
    BoxCoarsening coarsening;
    coarsening.coarse = box;
    for (std::size_t axis = 0; axis < 3; ++axis) {
        const std::int64_t n = box.points[axis];
        if (n < 3 || strongest == 0 || !(strength[axis] >= 0.25 * strongest)) continue;
        // An end wants to be coarse when its rows are identity rows or kept their coupling.
        bool wants_coarse[2];
        for (std::size_t side = 0; side < 2; ++side) {
            const std::size_t end = 2 * axis + side;
            const double coupled = end_rows[end] - end_identity[end];
            wants_coarse[side] = 2 * end_identity[end] >= end_rows[end] ||
                                 (coupled > 0 && end_weight[end] / coupled > 0.75);
        }
        int best_first = 1, best_score = -1;
        for (const int first : {1, 0}) {
            const bool low_coarse = first == 0;
            const bool high_coarse = ((n - 1 - first) & 1) == 0;
            const int score =
                (low_coarse == wants_coarse[0] ? 1 : 0) + (high_coarse == wants_coarse[1] ? 1 : 0);
            if (score > best_score) best_score = score, best_first = first;
        }
        coarsening.axes[axis] = {2, best_first};
        coarsening.coarse.points[axis] = (n - 1 - best_first) / 2 + 1;
    }
    return coarsening;
}

BoxCoarsening choose_coarsening(const DiaData<double>& a, const GridBox& box) {
    return decide_coarsening(measure_coarsening(a, box, whole_part(box), {0, 0, 0}, box), box);
}

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

// A row whose couplings towards the two sides of an axis differ by more than this factor sits at
// a coefficient jump, where the collapsed weights may follow a weak coupling (on the aligned
// checkerboard at 513^2 they took 14 MG-PCG iterations for a contrast of 10, 21 for 30, 33 for
// 100; the local bases 11 to 12).
constexpr double jump_ratio = 16.0;
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

// Whether the row's couplings towards the two sides along some axis (each side's negative
// entries summed) differ by more than jump_ratio: a coefficient jump at the point. (A side
// without couplings, at a wall, is none.)
bool row_at_jump(const DiaData<double>& a, const DiagonalSteps& steps, const GridBox& fine,
                 std::int64_t row, const Coordinates& c) {
    double side[3][2] = {};
    for_each_entry(a, steps, fine, row, c, [&](std::int64_t j, double value, const Coordinates& s) {
        if (j == row || value >= 0) return;
        for (std::size_t axis = 0; axis < 3; ++axis) {
            if (s[axis] != 0) side[axis][s[axis] > 0 ? 1 : 0] -= value;
        }
    });
    for (const auto& [below, above] : side) {
        const double weaker = std::min(below, above), stronger = std::max(below, above);
        if (weaker > 0 && stronger > jump_ratio * weaker) return true;
    }
    return false;
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
    std::array<double, max_basis_unknowns*(max_basis_unknowns + 1)> system{};
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
    std::array<double, max_basis_unknowns> phi{};
    for (int r = m - 1; r >= 0; --r) {
        double value = entry(r, m);
        for (int k = r + 1; k < m; ++k) value -= entry(r, k) * phi[static_cast<std::size_t>(k)];
        phi[static_cast<std::size_t>(r)] = entry(r, r) != 0.0 ? value / entry(r, r) : 0.0;
    }
    for (int r = 0; r < m; ++r) {
        const int slot = slot_of[static_cast<std::size_t>(r)];
        if (slot >= 0) {
            raw[static_cast<std::size_t>(slot * nc + point)] = phi[static_cast<std::size_t>(r)];
        }
    }
}

// Where the collapsed weights follow a weak coupling: at a coefficient jump along a grid line
// (a point tied by 1000 to the cell beside it and by 1 to both coarse points on its line gets
// 1/2 from each, the coarse point of the other material included), the interpolation joins
// materials the operator keeps apart, and no smoother mends it (two-grid factor 0.93 on an
// aligned checkerboard of 1000 and 1). A fine point next to a row at a jump (or on one) is
// given the local bases of its coarse points (local_basis), scaled to the collapsed weights'
// sum (which keeps the constants and the walls' zeros as they were), where they differ from the
// collapsed weights. A point's weights read the rows up to basis_reach + 1 points from it.
void follow_strong_couplings(const DiaData<double>& a, const GridBox& fine,
                             const BoxCoarsening& coarsening, std::vector<double>& w) {
    const GridBox& coarse = coarsening.coarse;
    const std::int64_t nc = coarse.size();
    const DiagonalSteps steps(a, fine);
    // Where every diagonal steps along one axis, a side's coupling is one entry, and the rows
    // at a jump are those has_coefficient_jumps finds: one pass over the diagonals says whether
    // there are any (none for constant coefficients).
    const bool along_axes =
        steps.decoded && std::all_of(steps.steps.begin(), steps.steps.end(), [](const auto& s) {
            return std::count(s.begin(), s.end(), 0) >= 2;
        });
    if (along_axes && !has_coefficient_jumps(a, jump_ratio)) return;
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

}  // namespace

DiaData<double> galerkin_operator(const DiaData<double>& a, const GridBox& fine,
                                  const BoxCoarsening& coarsening,
                                  const std::vector<double>& weights) {
    const GridBox& coarse = coarsening.coarse;
    const std::int64_t nc = coarse.size();
    const int dimension = fine.dimension;
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
    int step_diagonal[27];
    std::fill(std::begin(step_diagonal), std::end(step_diagonal), -1);
    for_each_box_step(coarse, [&](const Coordinates& step, std::int64_t offset) {
        step_diagonal[(step[0] + 1) + 3 * (step[1] + 1) + 9 * (step[2] + 1)] = offsets.at(offset);
    });
    result.values.assign(static_cast<std::size_t>(result.num_diagonals() * nc), 0.0);
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
        Coordinates at{};
        int reach[3];
        for (std::size_t axis = 0; axis < 3; ++axis) {
            const AxisCoarsening& ax = coarsening.axes[axis];
            at[axis] = ax.first + ax.step * at_coarse[axis];
            reach[axis] = ax.step == 2 ? 1 : 0;
        }
        double sums[27] = {};
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
                        a, steps, fine, row, f,
                        [&](std::int64_t, double value, const Coordinates& s) {
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
                                            coarse.points[0] *
                                                (dj[1][q] + coarse.points[1] * dj[2][r]);
                                        const int slot = transfer_slot(dimension, off[0][p],
                                                                       off[1][q], off[2][r]);
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

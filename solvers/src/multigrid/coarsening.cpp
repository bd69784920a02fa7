// Which axes of a box coarsen and where the coarse points lie (level_transfer.hpp): the check
// that the operator couples only neighbours, the measures summed over rows and the decision
// made from them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "multigrid/box_entries.hpp"
#include "multigrid/class_rows.hpp"
#include "multigrid/level_transfer.hpp"

namespace simrun::solvers::multigrid {
namespace {

std::string point_text(const GridBox& box, std::int64_t row) {
    const Coordinates c = box.coordinates(row);
    std::string text = "row " + std::to_string(row) + " (" + std::to_string(c[0]);
    for (int axis = 1; axis < box.dimension; ++axis) text += ", " + std::to_string(c[axis]);
    return text + ")";
}

// check_box_couplings where each diagonal is one step of the box: the first row (a.n if none)
// with an entry on a face its step leaves by; along_axes cleared where a diagonal that moves
// along several axes holds a nonzero entry.
std::int64_t first_bad_on_faces(const DiaData<double>& a, const GridBox& box,
                                const DiagonalSteps& decoded, bool& along_axes) {
    std::int64_t first_bad = a.n;
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
            along_axes =
                std::all_of(first + begin, first + end, [](double value) { return value == 0.0; });
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
    return first_bad;
}

// check_box_couplings from each entry's column coordinates: the first row (a.n if none) with an
// entry that couples no neighbour; along_axes cleared where an entry moves along several axes.
std::int64_t first_bad_by_entries(const DiaData<double>& a, const GridBox& box,
                                  const DiagonalSteps& exact, bool& along_axes) {
    std::int64_t first_bad = a.n;
    bool along = along_axes;
    const std::int64_t lines = box.points[1] * box.points[2];
#pragma omp parallel for schedule(static) reduction(min : first_bad) reduction(&& : along)
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
                along = along && moves <= 1;
            };
            for_each_entry(a, exact, box, i, c, visit);
        }
    }
    along_axes = along;
    return first_bad;
}

// Throws std::invalid_argument naming the entry of row first_bad that couples no neighbour.
void throw_bad_coupling(const DiaData<double>& a, const GridBox& box, const DiagonalSteps& exact,
                        std::int64_t first_bad) {
    const Coordinates c = box.coordinates(first_bad);
    for_each_entry(a, exact, box, first_bad, c, [&](std::int64_t j, double, const Coordinates& s) {
        const Coordinates cj = box.coordinates(j);
        for (std::size_t axis = 0; axis < 3; ++axis) {
            if (s[axis] >= -1 && s[axis] <= 1 && cj[axis] == c[axis] + s[axis]) continue;
            throw std::invalid_argument("multigrid: " + point_text(box, first_bad) +
                                        " couples to " + point_text(box, j) +
                                        ", which is not its neighbour in the " + box.describe() +
                                        " box: the rows are not the box's points, x fastest");
        }
    });
}

}  // namespace

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
    bool along_axes = true;
    const std::int64_t first_bad = decoded.decoded
                                       ? first_bad_on_faces(a, box, decoded, along_axes)
                                       : first_bad_by_entries(a, box, exact, along_axes);
    if (first_bad < a.n) throw_bad_coupling(a, box, exact, first_bad);
    return along_axes;
}

namespace {

// The sums the coarsening is decided from (CoarseningMeasures' layout).
struct MeasureSums {
    double strength[3] = {0, 0, 0};
    double end_rows[6] = {0, 0, 0, 0, 0, 0}, end_identity[6] = {0, 0, 0, 0, 0, 0};
    double end_weight[6] = {0, 0, 0, 0, 0, 0};

    void add(const MeasureSums& other) {
        for (std::size_t k = 0; k < 3; ++k) strength[k] += other.strength[k];
        for (std::size_t k = 0; k < 6; ++k) {
            end_rows[k] += other.end_rows[k];
            end_identity[k] += other.end_identity[k];
            end_weight[k] += other.end_weight[k];
        }
    }
    CoarseningMeasures measures() const {
        CoarseningMeasures m;
        std::copy_n(strength, 3, m.values.begin());
        std::copy_n(end_rows, 6, m.values.begin() + 3);
        std::copy_n(end_identity, 6, m.values.begin() + 9);
        std::copy_n(end_weight, 6, m.values.begin() + 15);
        return m;
    }
};

// Row i's (at c) share of the measures: its couplings' strength along each axis (where
// `strength`), and where it lies at an end of the whole box along an axis, whether it is an
// identity row or how much of its coupling along the axis points inwards.
template <typename Rows>
void measure_row(const Rows& a, const DiagonalSteps& steps, const GridBox& box, std::int64_t i,
                 const Coordinates& c, const Coordinates& origin, const GridBox& whole,
                 bool strength, MeasureSums& sums) {
    double same_line[3] = {0, 0, 0}, inward[3] = {0, 0, 0};
    bool identity = true;
    for_each_entry(a, steps, box, i, c, [&](std::int64_t j, double value, const Coordinates& s) {
        if (j != i) identity = false;
        for (std::size_t axis = 0; axis < 3; ++axis) {
            if (strength && s[axis] != 0) sums.strength[axis] += std::abs(value);
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
        sums.end_rows[end] += 1;
        if (identity) {
            sums.end_identity[end] += 1;
        } else if (same_line[axis] > 0) {
            sums.end_weight[end] += std::min(1.0, -inward[axis] / same_line[axis]);
        }
    }
}

// Rows kept as classes whose diagonals are one step each (`steps` decoded): the strength from
// each class's entries times its rows among `own` (a class's entries whose column lies outside
// the rows are zero, as class storage holds them), and the ends from the rows on the whole
// box's ends alone (a face's points, not the part's).
CoarseningMeasures measure_classes(const ClassRows& a, const DiagonalSteps& steps,
                                   const GridBox& box, const Box& own, const Coordinates& origin,
                                   const GridBox& whole) {
    MeasureSums sums;
    std::vector<double> rows_of_class(a.classes(), 0.0);
    {
        std::vector<std::int64_t> count(256, 0);
        for_each_point(own, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
            ++count[a.of_row[static_cast<std::size_t>(box.row(i, j, k))]];
        });
        for (std::size_t c = 0; c < rows_of_class.size(); ++c) {
            rows_of_class[c] = static_cast<double>(count[c]);
        }
    }
    const auto diagonals = static_cast<std::size_t>(a.num_diagonals());
    for (std::size_t c = 0; c < rows_of_class.size(); ++c) {
        for (std::size_t d = 0; d < diagonals; ++d) {
            const double value = a.table[c * diagonals + d];
            for (std::size_t axis = 0; axis < 3; ++axis) {
                if (steps.steps[d][axis] != 0) {
                    sums.strength[axis] += rows_of_class[c] * std::abs(value);
                }
            }
        }
    }
    // The own points on each end of the whole box (a face of the part, where it reaches one).
    for (std::size_t axis = 0; axis < 3; ++axis) {
        if (whole.points[axis] < 2) continue;
        for (const std::int64_t at : {std::int64_t{0}, whole.points[axis] - 1}) {
            Box face = own;
            face.lower[axis] = at - origin[axis];
            face.upper[axis] = face.lower[axis] + 1;
            face = intersection(face, own);
            if (face.empty()) continue;
            MeasureSums end;
            for_each_point(face, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
                measure_row(a, steps, box, box.row(i, j, k), Coordinates{i, j, k}, origin, whole,
                            false, end);
            });
            // (A point at ends along several axes is on several faces: each face adds its own
            // axis's end only.)
            const std::size_t e = 2 * axis + (at == 0 ? 0 : 1);
            sums.end_rows[e] += end.end_rows[e];
            sums.end_identity[e] += end.end_identity[e];
            sums.end_weight[e] += end.end_weight[e];
        }
    }
    return sums.measures();
}

}  // namespace

template <typename Rows>
CoarseningMeasures measure_coarsening(const Rows& a, const GridBox& box, const Box& own,
                                      const Coordinates& origin, const GridBox& whole) {
    const DiagonalSteps steps(a, box);
    // Classes whose diagonals are one step each: class by class (a box too thin for that:
    // entry by entry, as rows).
    if constexpr (std::is_same_v<Rows, ClassRows>) {
        if (steps.decoded) return measure_classes(a, steps, box, own, origin, whole);
    }
    MeasureSums sums;
    const std::int64_t lines = own.points(1) * own.points(2);
#pragma omp parallel
    {
        MeasureSums mine;
#pragma omp for schedule(static)
        for (std::int64_t line = 0; line < lines; ++line) {
            Coordinates c{0, own.lower[1] + line % own.points(1),
                          own.lower[2] + line / own.points(1)};
            for (c[0] = own.lower[0]; c[0] < own.upper[0]; ++c[0]) {
                measure_row(a, steps, box, box.row(c[0], c[1], c[2]), c, origin, whole, true, mine);
            }
        }
#pragma omp critical
        sums.add(mine);
    }
    return sums.measures();
}

template CoarseningMeasures measure_coarsening(const DiaData<double>&, const GridBox&, const Box&,
                                               const Coordinates&, const GridBox&);
template CoarseningMeasures measure_coarsening(const ClassRows&, const GridBox&, const Box&,
                                               const Coordinates&, const GridBox&);

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

}  // namespace simrun::solvers::multigrid

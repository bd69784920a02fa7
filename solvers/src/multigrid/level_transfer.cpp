#include "multigrid/level_transfer.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "base/kernel_table.hpp"

namespace simrun::solvers::multigrid {
namespace {

using Coordinates = std::array<std::int64_t, 3>;

std::string point_text(const GridBox& box, std::int64_t row) {
    const Coordinates c = box.coordinates(row);
    std::string text = "row " + std::to_string(row) + " (" + std::to_string(c[0]);
    for (int axis = 1; axis < box.dimension; ++axis) text += ", " + std::to_string(c[axis]);
    return text + ")";
}

// The axes on which point c lies between coarse points (bit a set).
unsigned fine_axes(const Coordinates& c, const BoxCoarsening& coarsening) {
    unsigned mask = 0;
    for (int axis = 0; axis < 3; ++axis) {
        const AxisCoarsening& ax = coarsening.axes[static_cast<std::size_t>(axis)];
        if (ax.step == 2 && ((c[static_cast<std::size_t>(axis)] - ax.first) & 1) != 0) {
            mask |= 1u << axis;
        }
    }
    return mask;
}

// Calls visit(coarse point, slot of c relative to it) for each coarse point whose weights
// reach fine point c: per axis the coarse point on c's line, or the two around it.
template <typename Visit>
void for_each_coarse_neighbour(const Coordinates& c, const GridBox& fine,
                               const BoxCoarsening& coarsening, Visit&& visit) {
    std::int64_t index[3][2];
    int offset[3][2];
    int count[3];
    for (std::size_t axis = 0; axis < 3; ++axis) {
        const AxisCoarsening& ax = coarsening.axes[axis];
        count[axis] = coarse_neighbours_on_axis(
            c[axis], ax.step, ax.first, coarsening.coarse.points[axis], index[axis], offset[axis]);
    }
    for (int a = 0; a < count[0]; ++a) {
        for (int b = 0; b < count[1]; ++b) {
            for (int k = 0; k < count[2]; ++k) {
                visit(coarsening.coarse.row(index[0][a], index[1][b], index[2][k]),
                      transfer_slot(fine.dimension, offset[0][a], offset[1][b], offset[2][k]));
            }
        }
    }
}

}  // namespace

int transfer_slots(int dimension) { return dimension == 1 ? 3 : dimension == 2 ? 9 : 27; }

bool check_box_couplings(const CsrData<double>& a, const GridBox& box) {
    if (a.rows != box.size() || a.cols != box.size()) {
        throw std::invalid_argument("multigrid: the matrix has " + std::to_string(a.rows) +
                                    " rows but the box " + box.describe() + " has " +
                                    std::to_string(box.size()) + " points");
    }
    bool along_axes = true;
    for (std::int32_t row = 0; row < a.rows; ++row) {
        const Coordinates c = box.coordinates(row);
        for (std::int32_t k = a.row_ptr[row]; k < a.row_ptr[row + 1]; ++k) {
            const Coordinates d = box.coordinates(a.col[k]);
            int steps = 0;
            for (std::size_t axis = 0; axis < 3; ++axis) {
                const std::int64_t delta = d[axis] - c[axis];
                if (delta < -1 || delta > 1) {
                    throw std::invalid_argument(
                        "multigrid: " + point_text(box, row) + " couples to " +
                        point_text(box, a.col[k]) + ", which is not its neighbour in the " +
                        box.describe() + " box: the rows are not the box's points, x fastest");
                }
                steps += delta != 0 ? 1 : 0;
            }
            along_axes = along_axes && steps <= 1;
        }
    }
    return along_axes;
}

BoxCoarsening choose_coarsening(const CsrData<double>& a, const GridBox& box) {
    // Per axis: the coupling strength, and per end (low, high) how many rows it has, how many
    // are identity rows, and the sum of their collapsed inward weights.
    std::array<double, 3> strength{};
    struct End {
        std::int64_t rows = 0;
        std::int64_t identity = 0;
        double weight = 0;
    };
    std::array<std::array<End, 2>, 3> ends{};
    for (std::int32_t row = 0; row < a.rows; ++row) {
        const Coordinates c = box.coordinates(row);
        for (std::size_t axis = 0; axis < 3; ++axis) {
            double same_line = 0, inward = 0;  // collapsed onto the axis
            bool identity = true;
            const int side = c[axis] == 0 ? 0 : c[axis] == box.points[axis] - 1 ? 1 : -1;
            for (std::int32_t k = a.row_ptr[row]; k < a.row_ptr[row + 1]; ++k) {
                const std::int64_t delta = box.coordinates(a.col[k])[axis] - c[axis];
                const double value = a.values[static_cast<std::size_t>(k)];
                if (a.col[k] != row && value != 0.0) identity = false;
                if (delta != 0) strength[axis] += std::abs(value);
                if (delta == 0 || value > 0) {
                    same_line += value;
                } else {
                    inward += value;
                }
            }
            if (side < 0 || box.points[axis] < 2) continue;
            End& end = ends[axis][static_cast<std::size_t>(side)];
            ++end.rows;
            if (identity) {
                ++end.identity;
            } else if (same_line > 0) {
                end.weight += std::min(1.0, -inward / same_line);
            }
        }
    }
    double strongest = 0;
    for (std::size_t axis = 0; axis < 3; ++axis) {
        if (box.points[axis] >= 3) strongest = std::max(strongest, strength[axis]);
    }
    BoxCoarsening coarsening;
    coarsening.coarse = box;
    for (std::size_t axis = 0; axis < 3; ++axis) {
        const std::int64_t n = box.points[axis];
        if (n < 3 || !(strength[axis] >= 0.25 * strongest) || strongest == 0) continue;
        // An end wants to be coarse when its rows are identity rows or kept their coupling.
        bool wants_coarse[2];
        for (int side = 0; side < 2; ++side) {
            const End& end = ends[axis][static_cast<std::size_t>(side)];
            const std::int64_t coupled = end.rows - end.identity;
            wants_coarse[side] = 2 * end.identity >= end.rows ||
                                 (coupled > 0 && end.weight / static_cast<double>(coupled) > 0.75);
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

Interpolation operator_interpolation(const CsrData<double>& a, const GridBox& fine,
                                     const BoxCoarsening& coarsening) {
    const GridBox& coarse = coarsening.coarse;
    const std::int64_t nc = coarse.size();
    const int slots = transfer_slots(fine.dimension);
    const int centre = transfer_slot(fine.dimension, 0, 0, 0);
    Interpolation result;
    std::vector<double>& w = result.weights;
    w.assign(static_cast<std::size_t>(slots * nc), 0.0);
    for (std::int64_t point = 0; point < nc; ++point) {
        w[static_cast<std::size_t>(centre * nc + point)] = 1.0;
    }
    // The points fine on k axes take their weights from neighbours fine on fewer, so the
    // classes go in order; within a class each point writes its own slots.
    const auto n = static_cast<std::int64_t>(a.rows);
    for (int k = 1; k <= fine.dimension; ++k) {
#pragma omp parallel for schedule(static)
        for (std::int64_t row = 0; row < n; ++row) {
            const Coordinates c = fine.coordinates(row);
            const unsigned mask = fine_axes(c, coarsening);
            if (std::popcount(mask) != k) continue;
            double diagonal = 0, sum = 0;
            std::pair<std::int64_t, double> terms[27];
            int count = 0;
            for (std::int32_t e = a.row_ptr[row]; e < a.row_ptr[row + 1]; ++e) {
                const Coordinates d = fine.coordinates(a.col[e]);
                const double value = a.values[static_cast<std::size_t>(e)];
                Coordinates h = c;
                bool moves = false;
                for (std::size_t axis = 0; axis < 3; ++axis) {
                    if ((mask >> axis) & 1u) {
                        h[axis] = d[axis];
                        moves = moves || d[axis] != c[axis];
                    }
                }
                if (!moves || value > 0) {
                    diagonal += value;
                } else if (count < 27) {
                    terms[count++] = {fine.row(h[0], h[1], h[2]), value};
                    sum += value;
                }
            }
            if (count == 0) continue;            // no coupling to interpolate from
            if (diagonal <= 0) diagonal = -sum;  // weights that sum to 1
            for (int t = 0; t < count; ++t) {
                const double scale = -terms[t].second / diagonal;
                const Coordinates h = fine.coordinates(terms[t].first);
                for_each_coarse_neighbour(h, fine, coarsening, [&](std::int64_t point, int slot) {
                    const double weight_h = w[static_cast<std::size_t>(slot * nc + point)];
                    if (weight_h == 0.0) return;
                    // c's slot relative to the same coarse point.
                    int offset[3] = {0, 0, 0};
                    for (std::size_t axis = 0; axis < 3; ++axis) {
                        const AxisCoarsening& ax = coarsening.axes[axis];
                        const std::int64_t at =
                            ax.first + ax.step * coarse.coordinates(point)[axis];
                        offset[axis] = static_cast<int>(c[axis] - at);
                    }
                    const int own = transfer_slot(fine.dimension, offset[0], offset[1], offset[2]);
                    w[static_cast<std::size_t>(own * nc + point)] += scale * weight_h;
                });
            }
        }
    }
    // P as a matrix, row by row.
    CsrData<double>& p = result.p;
    p.rows = static_cast<std::int32_t>(fine.size());
    p.cols = static_cast<std::int32_t>(nc);
    p.row_ptr.assign(1, 0);
    std::vector<std::pair<std::int32_t, double>> row;
    for (std::int64_t f = 0; f < fine.size(); ++f) {
        row.clear();
        for_each_coarse_neighbour(
            fine.coordinates(f), fine, coarsening, [&](std::int64_t point, int slot) {
                const double value = w[static_cast<std::size_t>(slot * nc + point)];
                if (value != 0.0) {
                    row.emplace_back(static_cast<std::int32_t>(point), value);
                }
            });
        std::sort(row.begin(), row.end());
        for (const auto& [column, value] : row) {
            p.col.push_back(column);
            p.values.push_back(value);
        }
        p.row_ptr.push_back(static_cast<std::int32_t>(p.col.size()));
    }
    return result;
}

}  // namespace simrun::solvers::multigrid

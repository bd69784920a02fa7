#pragma once
// A grid's matrix split over a process grid of boxes, as a distributed run over boxes would
// give it to each rank (distributed_matrix.hpp): rank r holds box r (boxes numbered x fastest),
// and the ranks' numbering takes the boxes in turn, each box's points x fastest.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <vector>

#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/distributed/distributed_matrix.hpp"
#include "simrun/solvers/distributed/part_rows.hpp"

namespace simrun::testing {

// A step to a neighbouring point: -1, 0 or 1 along each axis.
using GridStep = std::array<int, 3>;

// Every step of a stencil reaching its 3^d - 1 neighbours and the point itself (dimension d; z
// steps 0 in 2D), or only the 2d + 1 of the faces, ordered so that their offsets ascend.
inline std::vector<GridStep> grid_steps(int dimension, bool diagonals) {
    std::vector<GridStep> steps;
    const int z = dimension == 3 ? 1 : 0;
    for (int dz = -z; dz <= z; ++dz) {
        for (int dy = -1; dy <= 1; ++dy) {
            for (int dx = -1; dx <= 1; ++dx) {
                const int reach = std::abs(dx) + std::abs(dy) + std::abs(dz);
                if (diagonals || reach <= 1) steps.push_back({dx, dy, dz});
            }
        }
    }
    return steps;
}

struct GridBoxes {
    std::array<std::int64_t, 3> points{1, 1, 1};
    std::array<int, 3> parts{1, 1, 1};  // boxes along each axis

    int ranks() const { return parts[0] * parts[1] * parts[2]; }
    std::int64_t size() const { return points[0] * points[1] * points[2]; }
    // The first point of part p along an axis (the first points mod parts parts one longer).
    std::int64_t start(int axis, int p) const {
        const std::int64_t n = points[axis], k = parts[axis];
        return p * (n / k) + std::min<std::int64_t>(p, n % k);
    }
    int part_of(int axis, std::int64_t i) const {
        int p = 0;
        while (p + 1 < parts[axis] && start(axis, p + 1) <= i) ++p;
        return p;
    }
    std::array<int, 3> box_of_rank(int rank) const {
        return {rank % parts[0], rank / parts[0] % parts[1], rank / (parts[0] * parts[1])};
    }
    std::array<std::int64_t, 3> box_points(int rank) const {
        const auto box = box_of_rank(rank);
        std::array<std::int64_t, 3> n{};
        for (int a = 0; a < 3; ++a) n[a] = start(a, box[a] + 1) - start(a, box[a]);
        return n;
    }
    // The ranks' first rows, the last entry the whole size.
    std::vector<std::int64_t> firsts() const {
        std::vector<std::int64_t> first{0};
        for (int r = 0; r < ranks(); ++r) {
            const auto n = box_points(r);
            first.push_back(first.back() + n[0] * n[1] * n[2]);
        }
        return first;
    }
    // The grid's index (x fastest) of point (i, j, k) in the ranks' numbering.
    std::int64_t renumbered(std::int64_t i, std::int64_t j, std::int64_t k) const {
        const std::array<std::int64_t, 3> at{i, j, k};
        std::array<int, 3> box{};
        for (int a = 0; a < 3; ++a) box[a] = part_of(a, at[a]);
        const int rank = box[0] + parts[0] * (box[1] + parts[1] * box[2]);
        const auto n = box_points(rank);
        return firsts()[static_cast<std::size_t>(rank)] + (i - start(0, box[0])) +
               n[0] * ((j - start(1, box[1])) + n[1] * (k - start(2, box[2])));
    }
    // The ranks' numbering of each of the grid's points, in the grid's order.
    std::vector<std::int64_t> renumbering() const {
        std::vector<std::int64_t> to;
        for (std::int64_t k = 0; k < points[2]; ++k) {
            for (std::int64_t j = 0; j < points[1]; ++j) {
                for (std::int64_t i = 0; i < points[0]; ++i) to.push_back(renumbered(i, j, k));
            }
        }
        return to;
    }
};

// The grid's matrix on `steps`: entry value(point, step) couples the point (the grid's index)
// to its neighbour one step away, zero where that leaves the grid. Offsets ascend with the
// steps where every axis has at least 3 points.
inline solvers::DiaData<double> grid_matrix(const GridBoxes& grid,
                                            const std::vector<GridStep>& steps,
                                            const std::function<double(std::int64_t, int)>& value) {
    const auto& n = grid.points;
    solvers::DiaData<double> a{grid.size(), {}, {}};
    for (const GridStep& s : steps) {
        a.offsets.push_back(static_cast<int>(s[0] + n[0] * (s[1] + n[1] * s[2])));
    }
    a.values.assign(steps.size() * static_cast<std::size_t>(a.n), 0.0);
    for (std::int64_t k = 0; k < n[2]; ++k) {
        for (std::int64_t j = 0; j < n[1]; ++j) {
            for (std::int64_t i = 0; i < n[0]; ++i) {
                const std::int64_t p = i + n[0] * (j + n[1] * k);
                for (std::size_t d = 0; d < steps.size(); ++d) {
                    const std::array<std::int64_t, 3> q{i + steps[d][0], j + steps[d][1],
                                                        k + steps[d][2]};
                    bool inside = true;
                    for (int axis = 0; axis < 3; ++axis) {
                        inside = inside && q[axis] >= 0 && q[axis] < n[axis];
                    }
                    if (inside) a.at(static_cast<int>(d), p) = value(p, static_cast<int>(d));
                }
            }
        }
    }
    return a;
}

// Rank `rank`'s block of `a` (grid_matrix on `steps`): its box's own couplings as DIA rows of
// the box, the others as couplings outside it in the ranks' numbering. Boxes need at least 3
// points along each axis, so that the steps' offsets in the box ascend.
inline solvers::SplitBlock<double> box_block(const solvers::DiaData<double>& a,
                                             const GridBoxes& grid,
                                             const std::vector<GridStep>& steps, int rank) {
    const auto box = grid.box_of_rank(rank);
    const auto b = grid.box_points(rank);
    for (int axis = 0; axis < 3; ++axis) {
        if (b[axis] < 3 && grid.points[axis] > 1) throw std::invalid_argument("box under 3 points");
    }
    const std::int64_t first = grid.firsts()[static_cast<std::size_t>(rank)];
    const std::array<std::int64_t, 3> lo{grid.start(0, box[0]), grid.start(1, box[1]),
                                         grid.start(2, box[2])};
    solvers::SplitBlock<double> split;
    split.inner.n = b[0] * b[1] * b[2];
    for (const GridStep& s : steps) {
        split.inner.offsets.push_back(static_cast<int>(s[0] + b[0] * (s[1] + b[1] * s[2])));
    }
    split.inner.values.assign(steps.size() * static_cast<std::size_t>(split.inner.n), 0.0);
    const auto& n = grid.points;
    for (std::int64_t k = 0; k < b[2]; ++k) {
        for (std::int64_t j = 0; j < b[1]; ++j) {
            for (std::int64_t i = 0; i < b[0]; ++i) {
                const std::int64_t row = i + b[0] * (j + b[1] * k);
                const std::array<std::int64_t, 3> p{lo[0] + i, lo[1] + j, lo[2] + k};
                const std::int64_t whole = p[0] + n[0] * (p[1] + n[1] * p[2]);
                for (std::size_t d = 0; d < steps.size(); ++d) {
                    const double v = a.at(static_cast<int>(d), whole);
                    if (v == 0.0) continue;
                    const std::array<std::int64_t, 3> local{i + steps[d][0], j + steps[d][1],
                                                            k + steps[d][2]};
                    bool inside = true;
                    for (int axis = 0; axis < 3; ++axis) {
                        inside = inside && local[axis] >= 0 && local[axis] < b[axis];
                    }
                    if (inside) {
                        split.inner.at(static_cast<int>(d), row) = v;
                    } else {
                        split.outside.add(row,
                                          grid.renumbered(p[0] + steps[d][0], p[1] + steps[d][1],
                                                          p[2] + steps[d][2]) -
                                              first,
                                          v);
                    }
                }
            }
        }
    }
    return split;
}

// Rank `rank`'s part of the grid as a process grid's multigrid and solver take it
// (part_rows.hpp): its box, and the rows of its points on its window (the box grown by a point
// inside the grid), from `a`, any matrix on the grid's points whose rows couple neighbours
// (each entry's step read from the coordinates of its two points: in a grid of 2 points along
// an axis an offset names several steps).
inline solvers::PartRows<double> part_rows(const solvers::DiaData<double>& a, const GridBoxes& grid,
                                           int dimension, int rank) {
    const auto& n = grid.points;
    const auto box = grid.box_of_rank(rank);
    solvers::PartRows<double> rows;
    rows.box = {dimension, n};
    for (std::size_t axis = 0; axis < 3; ++axis) {
        rows.part.lower[axis] = grid.start(static_cast<int>(axis), box[axis]);
        rows.part.upper[axis] = grid.start(static_cast<int>(axis), box[axis] + 1);
    }
    const solvers::Box window = rows.window_part();
    const solvers::GridBox shape = window.shape(dimension);
    rows.window.n = window.size();
    const auto diagonal = [&](const GridStep& s) {
        const auto offset =
            static_cast<int>(s[0] + shape.points[0] * (s[1] + shape.points[1] * s[2]));
        int at = rows.window.find_diagonal(offset);
        if (at < 0) {
            at = rows.window.num_diagonals();
            rows.window.offsets.push_back(offset);
            rows.window.values.resize(
                rows.window.offsets.size() * static_cast<std::size_t>(window.size()), 0.0);
        }
        return at;
    };
    diagonal({0, 0, 0});
    solvers::for_each_point(
        rows.part, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
            const std::int64_t whole = i + n[0] * (j + n[1] * k);
            for (int d = 0; d < a.num_diagonals(); ++d) {
                const double v = a.at(d, whole);
                const std::int64_t column = whole + a.offsets[static_cast<std::size_t>(d)];
                if (v == 0.0 || column < 0 || column >= a.n) continue;
                const std::array<std::int64_t, 3> c{column % n[0], column / n[0] % n[1],
                                                    column / (n[0] * n[1])};
                const GridStep s{static_cast<int>(c[0] - i), static_cast<int>(c[1] - j),
                                 static_cast<int>(c[2] - k)};
                if (std::abs(s[0]) > 1 || std::abs(s[1]) > 1 || std::abs(s[2]) > 1) {
                    throw std::invalid_argument("an entry that couples no neighbours");
                }
                rows.window.at(diagonal(s), window.index(i, j, k)) += v;
            }
        });
    rows.window.sort_diagonals();
    return rows;
}

}  // namespace simrun::testing

#pragma once
// The shape of a structured box of unknowns, as hypre's Struct interface has it: the rows of a
// matrix are the box's points, x fastest (point (i, j, k) is row i + nx (j + ny k)), and each
// row couples only to the point itself and its neighbours (at most one step along each axis).
// The solver layer knows boxes, never PDEs: this is all multigrid needs to coarsen.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace simrun::solvers {

struct GridBox {
    int dimension = 2;                            // 1, 2 or 3
    std::array<std::int64_t, 3> points{1, 1, 1};  // per axis; 1 beyond the dimension

    std::int64_t size() const { return points[0] * points[1] * points[2]; }
    // "NX", "NXxNY" or "NXxNYxNZ".
    std::string describe() const;
    // The box's coordinates of a row.
    std::array<std::int64_t, 3> coordinates(std::int64_t row) const {
        return {row % points[0], (row / points[0]) % points[1], row / (points[0] * points[1])};
    }
    std::int64_t row(std::int64_t i, std::int64_t j, std::int64_t k) const {
        return i + points[0] * (j + points[1] * k);
    }
};

// The points [lower, upper) of a box along each axis (x fastest within them): the part of a box
// one rank of a process grid holds, a window around it, or the part of a grid's nodes a rank
// assembles. Values on a box are numbered x fastest within it (index()).
struct Box {
    std::array<std::int64_t, 3> lower{0, 0, 0}, upper{1, 1, 1};

    std::int64_t points(std::size_t axis) const { return upper[axis] - lower[axis]; }
    std::int64_t size() const { return empty() ? 0 : points(0) * points(1) * points(2); }
    bool empty() const { return points(0) <= 0 || points(1) <= 0 || points(2) <= 0; }
    // Stride between neighbours along an axis in the box's numbering.
    std::int64_t stride(std::size_t axis) const {
        return axis == 0 ? 1 : axis == 1 ? points(0) : points(0) * points(1);
    }
    bool contains(std::int64_t i, std::int64_t j, std::int64_t k = 0) const {
        return i >= lower[0] && i < upper[0] && j >= lower[1] && j < upper[1] && k >= lower[2] &&
               k < upper[2];
    }
    bool contains(const Box& inner) const {
        for (std::size_t a = 0; a < 3; ++a) {
            if (inner.lower[a] < lower[a] || inner.upper[a] > upper[a]) return false;
        }
        return true;
    }
    // The index within the box (x fastest) of the point (i, j, k).
    std::int64_t index(std::int64_t i, std::int64_t j, std::int64_t k = 0) const {
        return (i - lower[0]) + points(0) * ((j - lower[1]) + points(1) * (k - lower[2]));
    }
    // The point (i, j, k) of the box's index `index`.
    std::array<std::int64_t, 3> node(std::int64_t index) const {
        return {lower[0] + index % points(0), lower[1] + index / points(0) % points(1),
                lower[2] + index / (points(0) * points(1))};
    }
    // Whether this box (inside `outer`) holds consecutive points of outer's numbering: outer's
    // extent along the axes before the first one it cuts, one point along the axes after it.
    bool run_of(const Box& outer) const {
        bool cut = false;
        for (std::size_t a = 0; a < 3; ++a) {
            if (cut && points(a) != 1) return false;
            if (points(a) != outer.points(a)) cut = true;
        }
        return true;
    }
    // The box as a box of its own (its points, x fastest), of the given dimension.
    GridBox shape(int dimension) const { return {dimension, {points(0), points(1), points(2)}}; }
    bool operator==(const Box&) const = default;
};

// The whole box as a part of itself.
Box whole_part(const GridBox& box);
// The points both parts hold (empty where none).
Box intersection(const Box& a, const Box& b);
// `part` with `layers` points more on each side, as far as the box goes.
Box grown(const Box& part, const GridBox& box, std::int64_t layers);
// Calls f(i, j, k, index in the part) for each point of the part, x fastest.
template <typename F>
void for_each_point(const Box& part, F&& f) {
    std::int64_t index = 0;
    for (std::int64_t k = part.lower[2]; k < part.upper[2]; ++k) {
        for (std::int64_t j = part.lower[1]; j < part.upper[1]; ++j) {
            for (std::int64_t i = part.lower[0]; i < part.upper[0]; ++i) f(i, j, k, index++);
        }
    }
}

// Reads "NXxNY" or "NXxNYxNZ" (each at least 1; "NX" alone for one dimension). Throws
// std::invalid_argument naming the text and what was expected.
GridBox parse_grid_box(std::string_view text);

}  // namespace simrun::solvers

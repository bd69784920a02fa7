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

// Reads "NXxNY" or "NXxNYxNZ" (each at least 1; "NX" alone for one dimension). Throws
// std::invalid_argument naming the text and what was expected.
GridBox parse_grid_box(std::string_view text);

}  // namespace simrun::solvers

#pragma once
// The steps from a point of a box to its neighbours (-1, 0 or 1 along each axis) and the DIA
// offsets they make in the box's numbering: what multigrid's transfers and the distributed
// rows read to find which entry couples which points.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "simrun/solvers/boxes/box.hpp"

namespace simrun::solvers {

// Calls f(step, DIA offset) for each step to a neighbour the box has room for (none along an
// axis of one point), x fastest.
template <typename F>
void for_each_box_step(const GridBox& box, F&& f) {
    const std::int64_t nx = box.points[0], nxy = nx * box.points[1];
    for (std::int64_t sz = -1; sz <= 1; ++sz) {
        for (std::int64_t sy = -1; sy <= 1; ++sy) {
            for (std::int64_t sx = -1; sx <= 1; ++sx) {
                const std::array<std::int64_t, 3> step{sx, sy, sz};
                bool fits = true;
                for (std::size_t axis = 0; axis < 3; ++axis) {
                    fits = fits && (step[axis] == 0 || box.points[axis] > 1);
                }
                if (fits) f(step, sx + nx * sy + nxy * sz);
            }
        }
    }
}

// The DIA offsets of the steps from a point to its neighbours that the box has room for,
// ascending: the diagonals of galerkin_operator's result.
std::vector<int> neighbour_offsets(const GridBox& box);
// The step to a neighbour (-1, 0 or 1 along each axis) a DIA offset makes in the box: the first
// that has it (x fastest, from -1) where a small box gives several; none where no step has it.
std::optional<std::array<std::int64_t, 3>> offset_step(int offset, const GridBox& box);
// Whether `offset` is one step only in the box (offset_step then gives each entry's step).
bool offset_step_unique(int offset, const GridBox& box);
// The step the entry of `row` at `offset` makes in the box, from the two points' coordinates;
// none where the column leaves the box or is no neighbour of the row's point.
std::optional<std::array<std::int64_t, 3>> entry_step(const GridBox& box, std::int64_t row,
                                                      int offset);

}  // namespace simrun::solvers

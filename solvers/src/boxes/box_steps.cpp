#include "boxes/box_steps.hpp"

#include <algorithm>

namespace simrun::solvers {

using Coordinates = std::array<std::int64_t, 3>;

std::optional<std::array<std::int64_t, 3>> offset_step(int offset, const GridBox& box) {
    std::optional<Coordinates> step;
    for_each_box_step(box, [&](const Coordinates& s, std::int64_t s_offset) {
        if (!step && s_offset == offset) step = s;
    });
    return step;
}

bool offset_step_unique(int offset, const GridBox& box) {
    int found = 0;
    for_each_box_step(box, [&](const Coordinates&, std::int64_t s_offset) {
        if (s_offset == offset) ++found;
    });
    return found == 1;
}

std::optional<std::array<std::int64_t, 3>> entry_step(const GridBox& box, std::int64_t row,
                                                      int offset) {
    const std::int64_t column = row + offset;
    if (column < 0 || column >= box.size()) return std::nullopt;
    const Coordinates a = box.coordinates(row), b = box.coordinates(column);
    Coordinates step{};
    for (std::size_t axis = 0; axis < 3; ++axis) {
        step[axis] = b[axis] - a[axis];
        if (step[axis] < -1 || step[axis] > 1) return std::nullopt;
    }
    return step;
}

std::vector<int> neighbour_offsets(const GridBox& box) {
    std::vector<int> offsets;
    for_each_box_step(box, [&](const Coordinates&, std::int64_t offset) {
        offsets.push_back(static_cast<int>(offset));
    });
    std::sort(offsets.begin(), offsets.end());
    offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
    return offsets;
}

}  // namespace simrun::solvers

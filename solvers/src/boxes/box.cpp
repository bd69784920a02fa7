#include "simrun/solvers/boxes/box.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace simrun::solvers {

std::string GridBox::describe() const {
    std::string text = std::to_string(points[0]);
    for (int axis = 1; axis < dimension; ++axis) text += "x" + std::to_string(points[axis]);
    return text;
}

Box whole_part(const GridBox& box) { return {{0, 0, 0}, box.points}; }

Box intersection(const Box& a, const Box& b) {
    Box both;
    for (std::size_t axis = 0; axis < 3; ++axis) {
        both.lower[axis] = std::max(a.lower[axis], b.lower[axis]);
        both.upper[axis] = std::max(both.lower[axis], std::min(a.upper[axis], b.upper[axis]));
    }
    return both;
}

Box grown(const Box& part, const GridBox& box, std::int64_t layers) {
    Box wider;
    for (std::size_t axis = 0; axis < 3; ++axis) {
        wider.lower[axis] = std::max<std::int64_t>(0, part.lower[axis] - layers);
        wider.upper[axis] = std::min(box.points[axis], part.upper[axis] + layers);
    }
    return wider;
}

GridBox parse_grid_box(std::string_view text) {
    const auto refuse = [&](const std::string& why) {
        throw std::invalid_argument("grid '" + std::string(text) + "': " + why +
                                    " (expected NXxNY or NXxNYxNZ, e.g. 255x255)");
    };
    GridBox box;
    box.dimension = 0;
    std::string_view rest = text;
    while (true) {
        if (box.dimension == 3) refuse("more than three sizes");
        const std::size_t cut = rest.find_first_of("xX");
        const std::string_view part = rest.substr(0, cut);
        std::int64_t value = 0;
        const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
        if (part.empty() || error != std::errc() || end != part.data() + part.size()) {
            refuse("'" + std::string(part) + "' is not a whole number");
        }
        if (value < 1) refuse("sizes must be at least 1");
        box.points[static_cast<std::size_t>(box.dimension++)] = value;
        if (cut == std::string_view::npos) break;
        rest = rest.substr(cut + 1);
    }
    std::int64_t size = 1;
    for (const std::int64_t points : box.points) {
        if (size > (std::int64_t{1} << 40) / points) refuse("over 2^40 points");
        size *= points;
    }
    return box;
}

}  // namespace simrun::solvers

#include "simrun/framework/discretisation/grid.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace simrun::framework {

Grid::Grid(int dimension, std::array<std::int64_t, 3> points, std::array<double, 3> lower,
           std::array<double, 3> upper)
    : dimension_(dimension), points_(points), lower_(lower), upper_(upper), spacing_{1, 1, 1} {
    if (dimension != 2 && dimension != 3) {
        throw std::invalid_argument("grid dimension must be 2 or 3, got " +
                                    std::to_string(dimension));
    }
    if (dimension == 2) {
        points_[2] = 1;
        lower_[2] = 0.0;
        upper_[2] = 0.0;
    }
    const char* names = "xyz";
    std::int64_t total = 1;
    for (int a = 0; a < dimension; ++a) {
        if (points_[a] < 3) {
            throw std::invalid_argument(std::string("grid needs at least 3 nodes along ") +
                                        names[a] + ", got " + std::to_string(points_[a]));
        }
        if (!(upper_[a] > lower_[a])) {
            throw std::invalid_argument(std::string("grid extent along ") + names[a] +
                                        " must satisfy lower < upper");
        }
        if (total > std::numeric_limits<std::int32_t>::max() / points_[a]) {
            throw std::invalid_argument("grid has more than 2^31 nodes; not supported");
        }
        total *= points_[a];
        spacing_[a] = (upper_[a] - lower_[a]) / static_cast<double>(points_[a] - 1);
    }
}

bool Grid::is_boundary(std::int64_t i, std::int64_t j, std::int64_t k) const {
    bool boundary = i == 0 || i == points_[0] - 1 || j == 0 || j == points_[1] - 1;
    if (dimension_ == 3) boundary = boundary || k == 0 || k == points_[2] - 1;
    return boundary;
}

PlaneRange Grid::with_neighbours(PlaneRange planes) const {
    return {std::max<std::int64_t>(0, planes.first - 1),
            std::min(all_planes().last, planes.last + 1)};
}

Box Grid::box(PlaneRange planes) const {
    Box box{{0, 0, 0}, points_};
    box.lower[static_cast<std::size_t>(slowest_axis())] = planes.first;
    box.upper[static_cast<std::size_t>(slowest_axis())] = planes.last;
    return box;
}

bool Grid::whole_planes(const Box& box) const {
    for (int a = 0; a < slowest_axis(); ++a) {
        const auto axis = static_cast<std::size_t>(a);
        if (box.lower[axis] != 0 || box.upper[axis] != points_[axis]) return false;
    }
    return true;
}

Box Grid::with_neighbours(const Box& box) const {
    Box wider = box;
    for (std::size_t a = 0; a < static_cast<std::size_t>(dimension_); ++a) {
        wider.lower[a] = std::max<std::int64_t>(0, box.lower[a] - 1);
        wider.upper[a] = std::min(points_[a], box.upper[a] + 1);
    }
    return wider;
}

std::vector<PlaneRange> Grid::plane_blocks(std::int64_t nodes) const {
    const std::int64_t per_block = std::max<std::int64_t>(1, nodes / plane_size());
    std::vector<PlaneRange> blocks;
    for (std::int64_t first = 0; first < all_planes().last; first += per_block) {
        blocks.push_back({first, std::min(all_planes().last, first + per_block)});
    }
    return blocks;
}

}  // namespace simrun::framework

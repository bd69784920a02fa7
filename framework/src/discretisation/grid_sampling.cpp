#include "simrun/framework/discretisation/grid_sampling.hpp"

#include <stdexcept>
#include <string>

#include "simrun/framework/discretisation/grid_loops.hpp"

namespace simrun::framework {

void sample(const Grid& grid, PlaneRange planes, const Expression& e, double t,
            std::span<double> values) {
    if (static_cast<std::int64_t>(values.size()) != grid.num_points(planes)) {
        throw std::invalid_argument("sample: " + std::to_string(values.size()) + " values for " +
                                    std::to_string(grid.num_points(planes)) + " nodes");
    }
    const std::int64_t first = grid.first_node(planes);
    for_each_node(grid, planes, [&](std::int64_t i, std::int64_t j, std::int64_t k) {
        values[static_cast<std::size_t>(grid.index(i, j, k) - first)] =
            e(grid.coordinate(0, i), grid.coordinate(1, j), grid.coordinate(2, k), t);
    });
}

}  // namespace simrun::framework

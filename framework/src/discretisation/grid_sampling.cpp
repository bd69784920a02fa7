#include "simrun/framework/discretisation/grid_sampling.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "simrun/framework/discretisation/grid_loops.hpp"

namespace simrun::framework {

void sample(const Grid& grid, PlaneRange planes, const Expression& e, double t,
            std::span<double> values) {
    if (static_cast<std::int64_t>(values.size()) != grid.num_points(planes)) {
        throw std::invalid_argument("sample: " + std::to_string(values.size()) + " values for " +
                                    std::to_string(grid.num_points(planes)) + " nodes");
    }
    const std::int64_t first = grid.first_node(planes);
    const auto nx = static_cast<std::size_t>(grid.points(0));
    std::vector<double> xs(nx);
    for (std::size_t i = 0; i < nx; ++i) xs[i] = grid.coordinate(0, static_cast<std::int64_t>(i));
    // A line at a time: the expression's compiled program runs over the whole line.
    for_each_line_in_blocks(grid, planes, [&](std::int64_t j, std::int64_t k, int) {
        e.evaluate_along_x(
            xs, grid.coordinate(1, j), grid.coordinate(2, k), t,
            values.subspan(static_cast<std::size_t>(grid.index(0, j, k) - first), nx));
    });
}

}  // namespace simrun::framework

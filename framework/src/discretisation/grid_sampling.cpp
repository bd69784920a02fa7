#include "simrun/framework/discretisation/grid_sampling.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "simrun/framework/discretisation/grid_loops.hpp"

namespace simrun::framework {

void sample(const Grid& grid, const Box& box, const Expression& e, double t,
            std::span<double> values) {
    if (static_cast<std::int64_t>(values.size()) != box.size()) {
        throw std::invalid_argument("sample: " + std::to_string(values.size()) + " values for " +
                                    std::to_string(box.size()) + " nodes");
    }
    const auto nx = static_cast<std::size_t>(box.points(0));
    std::vector<double> xs(nx);
    for (std::size_t i = 0; i < nx; ++i) {
        xs[i] = grid.coordinate(0, box.lower[0] + static_cast<std::int64_t>(i));
    }
    // A line at a time: the expression's compiled program runs over the box's part of it.
    for_each_line_in_blocks(box, [&](std::int64_t j, std::int64_t k, int) {
        e.evaluate_along_x(
            xs, grid.coordinate(1, j), grid.coordinate(2, k), t,
            values.subspan(static_cast<std::size_t>(box.index(box.lower[0], j, k)), nx));
    });
}

}  // namespace simrun::framework

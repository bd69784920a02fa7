#include "simrun/framework/grid_sampling.hpp"

#include <stdexcept>
#include <string>

namespace simrun::framework {

void sample(const Grid& grid, const Expression& e, double t, std::span<double> values) {
    if (static_cast<std::int64_t>(values.size()) != grid.num_points()) {
        throw std::invalid_argument("sample: " + std::to_string(values.size()) +
                                    " values for a grid of " + std::to_string(grid.num_points()) +
                                    " nodes");
    }
    for (std::int64_t k = 0; k < grid.points(2); ++k) {
        for (std::int64_t j = 0; j < grid.points(1); ++j) {
            for (std::int64_t i = 0; i < grid.points(0); ++i) {
                values[static_cast<std::size_t>(grid.index(i, j, k))] =
                    e(grid.coordinate(0, i), grid.coordinate(1, j), grid.coordinate(2, k), t);
            }
        }
    }
}

}  // namespace simrun::framework

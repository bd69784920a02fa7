#pragma once
// Sampling an expression at the nodes of a grid.
#include <span>

#include "simrun/framework/discretisation/expression.hpp"
#include "simrun/framework/discretisation/grid.hpp"

namespace simrun::framework {

// values[box.index(i, j, k)] = e(x_i, y_j, z_k, t) at every node of `box`; values has
// box.size() entries. Throws std::invalid_argument when it has not.
void sample(const Grid& grid, const Box& box, const Expression& e, double t,
            std::span<double> values);
// The same on the whole grid.
inline void sample(const Grid& grid, const Expression& e, double t, std::span<double> values) {
    sample(grid, grid.box(), e, t, values);
}

}  // namespace simrun::framework

#pragma once
// Sampling an expression at the nodes of a grid.
#include <span>

#include "simrun/framework/discretisation/expression.hpp"
#include "simrun/framework/discretisation/grid.hpp"

namespace simrun::framework {

// values[index(i, j, k)] = e(x_i, y_j, z_k, t) at every node; values has num_points() entries.
void sample(const Grid& grid, const Expression& e, double t, std::span<double> values);

}  // namespace simrun::framework

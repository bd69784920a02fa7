#pragma once
// Dirichlet boundary conditions: u = g(x, y, z, t) on each side of the grid, and the
// elimination that keeps the implicit system symmetric.
#include <array>
#include <optional>
#include <span>
#include <vector>

#include "simrun/framework/config.hpp"
#include "simrun/framework/expression.hpp"
#include "simrun/framework/grid.hpp"
#include "simrun/solvers/dia_data.hpp"

namespace simrun::framework {

class DirichletBoundary {
public:
    // From a [boundary] section: keys left, right, bottom, top (and front, back in 3D), each an
    // expression of x, y, z, t; `all` gives the value of every side not named. Throws
    // InputError for a side with no value, a 3D side on a 2D grid, or a malformed expression.
    static DirichletBoundary from_config(const ConfigSection& section, const Grid& grid);

    // One value per side, in Side order (left, right, bottom, top, front, back).
    explicit DirichletBoundary(std::array<std::optional<Expression>, 6> values);

    bool depends_on_time() const;
    // Writes g(t) into every boundary node of values (interior nodes untouched). Where sides
    // meet, the later side in Side order wins (they agree for a continuous g).
    void fill(const Grid& grid, double t, std::span<double> values) const;

private:
    std::array<std::optional<Expression>, 6> values_;
};

// 1 at interior nodes, 0 at boundary nodes.
std::vector<double> interior_mask(const Grid& grid);

// M = shift I - scale L with Dirichlet rows eliminated: interior rows keep their couplings to
// interior nodes, couplings to boundary nodes are dropped (the caller moves them to the
// right-hand side as scale * L g), and boundary rows become identity rows. M is symmetric when
// L's interior block is.
solvers::DiaData<double> eliminate_dirichlet(const Grid& grid, const solvers::DiaData<double>& l,
                                             double shift, double scale);

}  // namespace simrun::framework

#pragma once
// Boundary conditions per side of the grid, each with an expression value g(x, y, z, t):
//   dirichlet  u = g
//   neumann    du/dn = g            (n the outward normal)
//   robin      du/dn + a u = g      (a > 0 a constant)
// In the input: `left = "expr"` (Dirichlet), or `left = { type = "neumann", value = "expr" }`,
// or `left = { type = "robin", coefficient = 2.0, value = "expr" }`; `all = ...` sets every side
// not named. Where sides meet, a Dirichlet side wins (the node takes u = g).
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/discretisation/expression.hpp"
#include "simrun/framework/discretisation/grid.hpp"

namespace simrun::framework {

enum class BoundaryType { dirichlet, neumann, robin };

struct SideCondition {
    BoundaryType type = BoundaryType::dirichlet;
    Expression value;
    double coefficient = 0.0;  // Robin's a
};

std::string_view to_string(BoundaryType type);
std::string_view side_name(Side side);
// The axis a side is normal to (0, 1, 2) and the direction of its outward normal (-1 or +1).
int side_axis(Side side);
int side_direction(Side side);

class BoundaryConditions {
public:
    // From a [boundary] section. Throws InputError for a side with no condition, a front or
    // back side on a 2D grid, an unknown type, a missing or non-positive Robin coefficient, or
    // a malformed expression.
    static BoundaryConditions from_config(const ConfigSection& section, const Grid& grid);

    // One condition per side of the grid (2 * dimension of them), in Side order.
    BoundaryConditions(int dimension, std::vector<SideCondition> sides);

    int num_sides() const { return static_cast<int>(sides_.size()); }
    const SideCondition& side(Side side) const { return sides_[static_cast<std::size_t>(side)]; }
    bool depends_on_time() const;

    // 1 at the nodes of `box` where u = g is imposed (on a Dirichlet side), 0 elsewhere; entry
    // box.index(i, j, k).
    std::vector<std::uint8_t> dirichlet_nodes(const Grid& grid, const Box& box) const;
    // The side whose g gives u at node (i, j, k): the last Dirichlet side in Side order that
    // holds it; -1 at a node on no Dirichlet side.
    int dirichlet_side(const Grid& grid, std::int64_t i, std::int64_t j, std::int64_t k) const;
    // Writes g(t) at every Dirichlet node of `box` (other nodes untouched), likewise.
    void fill_dirichlet(const Grid& grid, const Box& box, double t,
                        std::span<double> values) const;
    // The same on the whole grid.
    std::vector<std::uint8_t> dirichlet_nodes(const Grid& grid) const {
        return dirichlet_nodes(grid, grid.box());
    }
    void fill_dirichlet(const Grid& grid, double t, std::span<double> values) const {
        fill_dirichlet(grid, grid.box(), t, values);
    }
    // e.g. "left dirichlet, right neumann, bottom dirichlet, top robin (a = 2)"
    std::string describe() const;

private:
    std::vector<SideCondition> sides_;
};

}  // namespace simrun::framework

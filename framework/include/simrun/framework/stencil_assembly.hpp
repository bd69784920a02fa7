#pragma once
// Assembly of a grid operator into DIA: one row per grid node, diagonals at offsets
// 0, +-1 (x), +-nx (y) and +-nx*ny (z). Rows of boundary nodes are left zero: boundary
// conditions are imposed by the boundary machinery (dirichlet.hpp).
#include <cstdint>

#include "simrun/framework/grid.hpp"
#include "simrun/framework/stencil.hpp"
#include "simrun/solvers/dia_data.hpp"

namespace simrun::framework {

// The DIA offsets of a 5-point (2D) or 7-point (3D) stencil on the grid, sorted ascending.
std::vector<int> stencil_offsets(const Grid& grid);

// stencil_at(i, j, k) returns the StencilCoefficients of interior node (i, j, k).
template <typename StencilAt>
solvers::DiaData<double> assemble_stencil_operator(const Grid& grid, StencilAt stencil_at) {
    solvers::DiaData<double> a;
    a.n = grid.num_points();
    a.offsets = stencil_offsets(grid);
    a.values.assign(a.offsets.size() * static_cast<std::size_t>(a.n), 0.0);
    const int centre = a.find_diagonal(0);
    int minus[3];
    int plus[3];
    for (int axis = 0; axis < grid.dimension(); ++axis) {
        minus[axis] = a.find_diagonal(-static_cast<int>(grid.stride(axis)));
        plus[axis] = a.find_diagonal(static_cast<int>(grid.stride(axis)));
    }
    for (std::int64_t k = 0; k < grid.points(2); ++k) {
        for (std::int64_t j = 0; j < grid.points(1); ++j) {
            for (std::int64_t i = 0; i < grid.points(0); ++i) {
                if (grid.is_boundary(i, j, k)) continue;
                const std::int64_t row = grid.index(i, j, k);
                const StencilCoefficients s = stencil_at(i, j, k);
                a.at(centre, row) = s.centre;
                for (int axis = 0; axis < grid.dimension(); ++axis) {
                    a.at(minus[axis], row) = s.minus[axis];
                    a.at(plus[axis], row) = s.plus[axis];
                }
            }
        }
    }
    return a;
}

}  // namespace simrun::framework

#pragma once
// Where the collapsed interpolation follows a weak coupling, at a coefficient jump: the weights
// of the fine points next to one taken from local bases, small solves per coarse point
// (local_bases.cpp).
#include <vector>

#include "multigrid/box_entries.hpp"
#include "multigrid/class_rows.hpp"
#include "multigrid/level_transfer.hpp"

namespace simrun::solvers::multigrid {

// Where the collapsed weights follow a weak coupling: at a coefficient jump along a grid line
// (a point tied by 1000 to the cell beside it and by 1 to both coarse points on its line gets
// 1/2 from each, the coarse point of the other material included), the interpolation joins
// materials the operator keeps apart, and no smoother mends it (two-grid factor 0.93 on an
// aligned checkerboard of 1000 and 1). A fine point next to a row at a jump (or on one) is
// given the local bases of its coarse points (local_basis), scaled to the collapsed weights'
// sum (which keeps the constants and the walls' zeros as they were), where they differ from the
// collapsed weights. A point's weights read the rows up to basis_reach + 1 points from it.
void follow_strong_couplings(const DiaData<double>& a, const GridBox& fine,
                             const BoxCoarsening& coarsening, std::vector<double>& w);

// The ratio between a row's couplings to opposite neighbours past which the row is at a jump.
inline constexpr double local_basis_jump_ratio = 16.0;

// Whether every diagonal steps along one axis (`steps` decoded). There follow_strong_couplings
// leaves every collapsed weight as it is unless some row's couplings to opposite neighbours
// differ by local_basis_jump_ratio (has_coefficient_jumps at that ratio, of the rows or of their
// classes).
bool steps_along_one_axis(const DiagonalSteps& steps);

// Whether follow_strong_couplings leaves every collapsed weight of `rows` (on the points of
// `fine`, `steps` decoded) as it is: no row at a jump. The back-end's collapsed weights
// (backend_rows.hpp) are then the operator's weights.
bool collapsed_weights_final(const DiaData<double>& rows, const DiagonalSteps& steps,
                             const GridBox& fine);

// Whether some class of `rows` is a row at a jump, as follow_strong_couplings finds them (its
// couplings towards the two sides along an axis more than local_basis_jump_ratio apart): where
// none is, it leaves every collapsed weight as it is. `steps` decoded (each diagonal one step).
bool classes_at_jump(const ClassRows& rows, const DiagonalSteps& steps);

}  // namespace simrun::solvers::multigrid

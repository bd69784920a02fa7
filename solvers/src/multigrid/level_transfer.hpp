#pragma once
// How one level of a box hierarchy passes to the next (host, double, on the OpenMP threads):
// which axes coarsen and where the coarse points lie, the operator-dependent interpolation P,
// and the Galerkin operator P^T A P, all computed point by point on the box (no general sparse
// products: each coarse row is summed from the fine stencils around it).
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "boxes/box_steps.hpp"
#include "matrices/value_classes.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/matrices/csr_data.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"

namespace simrun::solvers::multigrid {

// Per axis: step 2 (coarse point I lies on fine point first + 2 I) or 1 (the axis is kept).
struct AxisCoarsening {
    int step = 1;
    int first = 0;
};

struct BoxCoarsening {
    std::array<AxisCoarsening, 3> axes;
    GridBox coarse;
    bool coarsens() const { return axes[0].step * axes[1].step * axes[2].step > 1; }
};

// Checks that every nonzero entry of `a` couples a point of `box` to itself or a neighbour (at
// most one step along each axis); throws std::invalid_argument naming the first entry that
// does not. Returns whether every coupling lies along one axis (a 5- or 7-point pattern),
// where two colours make Gauss-Seidel exact; otherwise it needs 2^dimension.
bool check_box_couplings(const DiaData<double>& a, const GridBox& box);

// The axes with at least 3 points whose coupling (the sum of |a_ij| over entries that step
// along the axis) is at least a quarter of the strongest such axis are coarsened. Per axis the
// coarse points start at fine point 0 or 1, whichever makes the box's ends coarse where their
// rows keep their coupling (identity rows, or a collapsed inward weight above 3/4, as at a
// Neumann side) and fine where they lost it (an eliminated Dirichlet side).
BoxCoarsening choose_coarsening(const DiaData<double>& a, const GridBox& box);

// What choose_coarsening decides from, summed over rows: per axis the coupling strength; per
// axis and end (low, high) its rows, how many are identity rows, and the sum of the others'
// collapsed inward weights. Sums of parts of a box add up to the whole's (over ranks).
struct CoarseningMeasures {
    std::array<double, 21> values{};  // strength[3], end_rows[6], end_identity[6], end_weight[6]
};
// The measures of the rows of the points `own` (a part of `box`, in its coordinates) of `a` on
// `box`, which is the points of a larger box `whole` from its point `origin` on (the whole's
// ends are the ends measured).
// `a`: DiaData<double>, or rows kept as classes (class_rows.hpp): their strength summed class by
// class (a pass over the class bytes), their ends read from the whole box's faces only; the
// same measures to rounding.
template <typename Rows>
CoarseningMeasures measure_coarsening(const Rows& a, const GridBox& box, const Box& own,
                                      const std::array<std::int64_t, 3>& origin,
                                      const GridBox& whole);
// choose_coarsening's decision for `box` from its measures.
BoxCoarsening decide_coarsening(const CoarseningMeasures& measures, const GridBox& box);

// Black-box interpolation, by coarse point in BoxTransferView's layout (3^dimension slots):
// coarse points take their value; a point that is fine on the axes F takes
// -sum_h c_h P_h / c_0 over its neighbours h one step away along F, with the stencil summed
// over the other axes (c_0 collects the couplings that stay on the point's lines, and positive
// off-diagonal couplings, which interpolation does not follow).
std::vector<double> operator_interpolation(const DiaData<double>& a, const GridBox& fine,
                                           const BoxCoarsening& coarsening);

// P as a fine x coarse matrix (for checks against general sparse products).
CsrData<double> interpolation_matrix(const std::vector<double>& weights, const GridBox& fine,
                                     const BoxCoarsening& coarsening);

// P^T A P on the coarse box, in DIA with the coarse box's 3^dimension neighbour offsets:
// coarse row I sums w(f, I) a_fg w(g, J) over the fine points f its weights reach and their
// stencils' points g.
DiaData<double> galerkin_operator(const DiaData<double>& a, const GridBox& fine,
                                  const BoxCoarsening& coarsening,
                                  const std::vector<double>& weights);

int transfer_slots(int dimension);

// Whether some row of `a` couples to the points at offsets o and -o with negative entries more
// than `ratio` times apart (a coefficient jump at the point).
template <typename V>
bool has_coefficient_jumps(const DiaData<V>& a, double ratio);
// The jumps past which an automatic cycle is W (MultigridCycle): below, the V-cycle's
// iterations stay at most 17 (contrast 100, the local bases of operator_interpolation).
inline constexpr double cycle_jump_ratio = 100.0;

// `a` without its diagonals of zeros (but the main one): a split level's window rows, whose
// exchanges carry every diagonal some rank uses, and a product would only read.
DiaData<double> without_empty_diagonals(DiaData<double> a);

// The coarse points' weight sets (weights in operator_interpolation's layout, `slots` per
// point) as classes in BoxTransferView's layout: of_point[I] the class of coarse point I,
// table[c * max_transfer_slots + s] class c's weight in slot s. Nothing where the points take
// more than max_value_classes distinct sets (coefficients that vary from point to point).
// Sets are compared value by value; the points are classified on every core, each thread
// comparing a point with its predecessor's class first.
using WeightClasses = ValueClasses<double>;
std::optional<WeightClasses> weight_classes(const std::vector<double>& weights,
                                            std::int64_t coarse_points, int slots);

}  // namespace simrun::solvers::multigrid

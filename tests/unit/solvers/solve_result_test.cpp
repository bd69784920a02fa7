// SolveResult's own arithmetic, no kernels: the true-residual confirmation of a converged verdict,
// the norms and breakdown value scaled back from a scaled system, and which right sides are
// solved scaled (system_scale_exponent's ranges).
#include "simrun/solvers/methods/solve_result.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "simrun/solvers/methods/iterative_solver.hpp"

namespace simrun::solvers {
namespace {

SolveResult converged_result(double rhs_norm) {
    SolveResult result;
    result.status = SolveStatus::converged;
    result.rhs_norm = rhs_norm;
    result.final_residual = 1e-7 * rhs_norm;  // what the solver saw
    return result;
}

StoppingCriteria tolerances(double rtol, double atol) {
    StoppingCriteria criteria;
    criteria.relative_tolerance = rtol;
    criteria.absolute_tolerance = atol;
    return criteria;
}

// A true residual just above rtol turns converged into stagnated, with the true residual as the
// final one; at rtol exactly, or within atol, converged stands (no slack either way).
TEST(ConfirmTrueResidual, ConvergedStandsOnlyWhereTheTrueResidualMeetsTheTolerance) {
    const double rtol = 1.2e-6, rhs_norm = 50.0;
    const double just_above = std::nextafter(rtol, 1.0);
    SolveResult missed = converged_result(rhs_norm);
    confirm_true_residual(missed, just_above, tolerances(rtol, 0.0));
    EXPECT_EQ(missed.status, SolveStatus::stagnated);
    EXPECT_EQ(missed.final_residual, just_above * rhs_norm);
    EXPECT_NE(missed.summary().find("b - A x recomputed"), std::string::npos);

    SolveResult at_rtol = converged_result(rhs_norm);
    confirm_true_residual(at_rtol, rtol, tolerances(rtol, 0.0));
    EXPECT_EQ(at_rtol.status, SolveStatus::converged);
    EXPECT_EQ(at_rtol.final_residual, 1e-7 * rhs_norm);  // left as the solver reported it

    // ||r|| = 1e-5 x 50 = 5e-4: above rtol, within atol 1e-3.
    SolveResult within_atol = converged_result(rhs_norm);
    confirm_true_residual(within_atol, 1e-5, tolerances(rtol, 1e-3));
    EXPECT_EQ(within_atol.status, SolveStatus::converged);
    SolveResult beyond_atol = converged_result(rhs_norm);
    confirm_true_residual(beyond_atol, 1e-5, tolerances(rtol, 4e-4));
    EXPECT_EQ(beyond_atol.status, SolveStatus::stagnated);
}

TEST(ConfirmTrueResidual, OtherStatusesAndAResidualNotRecomputedAreLeftAsTheyAre) {
    SolveResult limit = converged_result(1.0);
    limit.status = SolveStatus::max_iterations;
    confirm_true_residual(limit, 0.5, tolerances(1e-8, 0.0));
    EXPECT_EQ(limit.status, SolveStatus::max_iterations);
    EXPECT_EQ(limit.final_residual, 1e-7);

    SolveResult on_device = converged_result(1.0);
    confirm_true_residual(on_device, std::numeric_limits<double>::quiet_NaN(),
                          tolerances(1e-8, 0.0));
    EXPECT_EQ(on_device.status, SolveStatus::converged);
}

// The result of a system solved times 2^-e, reported at its own scale: norms times 2^e, a
// product of two of its vectors (degree 2) times 2^(2e), a scale-free value unchanged.
TEST(SolveResultScale, NormsAndTheBreakdownValueScaleByTheirDegree) {
    SolveResult result;
    result.rhs_norm = 3.0;
    result.initial_residual = 3.0;
    result.final_residual = 0.5;
    result.residual_history = {3.0, 0.5};
    result.breakdown_quantity = "p'Ap";
    result.breakdown_value = -1.5;
    result.scale_norms(-300);
    EXPECT_EQ(result.rhs_norm, std::ldexp(3.0, -300));
    EXPECT_EQ(result.residual_history[1], std::ldexp(0.5, -300));
    EXPECT_EQ(*result.breakdown_value, std::ldexp(-1.5, -600));

    SolveResult gmres;
    gmres.breakdown_quantity = "h = V'A M v";
    gmres.breakdown_value = 2.0;
    gmres.breakdown_degree = 0;
    gmres.scale_norms(40);
    EXPECT_EQ(*gmres.breakdown_value, 2.0);
}

WideNorm norm_of(double value) { return {value, 0}; }

// Float data of ordinary size (||b|| up to 2^40, 1e12) is solved as given; beyond, and below
// 2^-20 (where the residual at float's smallest rtol would square below 2^-88), scaled toward 1.
TEST(SystemScaleExponent, FloatSolvesOfOrdinarySizeAreNotScaled) {
    for (const double norm : {1e-6, 1.0, 1e6, 1e8, 1e12, std::ldexp(1.0, 40)}) {
        EXPECT_EQ(system_scale_exponent<float>(norm_of(norm), {}), 0) << norm;
    }
    EXPECT_EQ(system_scale_exponent<float>(norm_of(std::ldexp(1.0, 41)), {}), -41);
    EXPECT_EQ(system_scale_exponent<float>(norm_of(std::ldexp(1.0, -21)), {}), 21);
    EXPECT_EQ(system_scale_exponent<double>(norm_of(1e12), {}), 0);
    EXPECT_EQ(system_scale_exponent<double>(norm_of(std::ldexp(1.0, -300)), {}), 300);
}

// A norm beyond T's range (||b|| of 2^1030 in double: a WideNorm) is scaled down to a normal
// power of two; 0, Inf and NaN are not scaled; x0 limits an upward scale.
TEST(SystemScaleExponent, AnyFiniteNormIsBroughtIntoRange) {
    EXPECT_EQ(system_scale_exponent<double>(WideNorm{1.5, 1030}, {}), -1022);
    EXPECT_EQ(system_scale_exponent<double>(WideNorm{1.0, 300}, {}), -300);
    EXPECT_EQ(system_scale_exponent<float>(WideNorm{1.0, 140}, {}), -126);
    EXPECT_EQ(system_scale_exponent<double>(WideNorm{}, {}), 0);
    EXPECT_EQ(system_scale_exponent<double>(norm_of(std::numeric_limits<double>::infinity()), {}),
              0);
    EXPECT_EQ(system_scale_exponent<double>(norm_of(std::nan("")), {}), 0);
    // b of 2^-300 scaled by 2^300, but x0 of 2^100 only up to 2^256: by 2^156.
    EXPECT_EQ(system_scale_exponent<double>(WideNorm{1.0, -300}, WideNorm{1.0, 100}), 156);
}

// `simrun solve`'s row scaling and the solver's right-side scaling read one table.
TEST(SystemScaleExponent, TheRangesAreOneTable) {
    EXPECT_EQ(exponent_toward_one(25, matrix_entry_exponents<float>()), -25);
    EXPECT_EQ(exponent_toward_one(25, rhs_norm_exponents<float>()), 0);
    EXPECT_EQ(exponent_toward_one(-300, matrix_entry_exponents<double>()), 300);
}

}  // namespace
}  // namespace simrun::solvers

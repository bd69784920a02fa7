// Systems far from the unit scale, and solves stopped by their caller. A right side whose
// squared norm underflows or overflows is solved as its power-of-two multiple near 1 is: the
// same iterates, bit for bit, times the factor (IterativeSolver::solve); norms of tiny and huge
// finite vectors are neither 0 nor Inf (norm2); the interrupt hook stops any method between
// batches. One source built per back-end (SIMRUN_TEST_ON_CUDA: on the GPU, skipped without one).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/methods/iterative_solver.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"
#include "support/random_data.hpp"
#include "support/test_backend.hpp"
#include "support/test_matrices.hpp"

namespace simrun::solvers {
namespace {

using testing::test_backend;

struct ScaledCase {
    const char* method;
    const char* preconditioner;
    const char* format;
    bool fused;
};

// Each method's paths: fused (CG, BiCGStab, Jacobi; CG with SSOR in one block), reference
// (fused_kernels off, or a preconditioner no kernel fuses), GMRES, BiCG and SOR.
const ScaledCase scaled_cases[] = {
    {"cg", "none", "dia", true},         {"cg", "jacobi", "ell", true},
    {"cg", "none", "csr", false},        {"cg", "ssor", "csr", true},
    {"bicgstab", "none", "dia", true},   {"bicgstab", "ssor", "csr", true},
    {"gmres", "jacobi", "csr", true},    {"bicg", "none", "csr", true},
    {"jacobi", "none", "stencil", true}, {"sor", "none", "csr", true}};

// tridiag(lower, diagonal, upper) of n rows.
CsrData<double> tridiagonal(std::int32_t n, double lower, double diagonal, double upper) {
    CsrData<double> a;
    a.rows = a.cols = n;
    for (std::int32_t i = 0; i < n; ++i) {
        for (const auto& [j, v] : {std::pair{i - 1, lower}, {i, diagonal}, {i + 1, upper}}) {
            if (j < 0 || j >= n) continue;
            a.col.push_back(j);
            a.values.push_back(v);
        }
        a.row_ptr.push_back(static_cast<std::int32_t>(a.col.size()));
    }
    return a;
}

template <typename T>
struct Solved {
    SolveResult result;
    std::vector<T> x;
};

template <typename T>
Solved<T> solve_with(const LinearSystemSolver<T>& solver,
                     const std::shared_ptr<const Backend>& backend, const std::vector<T>& b) {
    const auto bb = Array<T>::from_host(backend, b);
    Array<T> x(backend, b.size());
    fill(x, T(0));
    SolveReport report = solver.solve(bb, x);
    return {report.result(), x.to_host()};
}

// b times 2^e for exponents whose ||b||^2 underflows (or lies in the subnormals) and
// overflows: the solve converges, in the iterations of b's own solve, to x times 2^e exactly,
// with the same relative residuals (the norms reported at the system's scale).
template <typename T>
void expect_scaled_solves_match(const ScaledCase& c, int exponent) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const auto one = [](double, double, double) { return 1.0; };
    const CsrData<double> a = testing::diffusion_matrix(12, 2, one);
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = std::is_same_v<T, double> ? 1e-10 : 1e-5;
    parameters.criteria.max_iterations = 5000;
    parameters.fused_kernels = c.fused;
    const SolverPlan plan =
        plan_solver(analyze(a), SolverRequest::parse(c.method, c.preconditioner, c.format));
    const LinearSystemSolver<T> solver(backend, convert_values<T>(a), plan, parameters);
    const std::vector<T> b = testing::random_vector<T>(static_cast<std::size_t>(a.rows), 29);
    std::vector<T> b_scaled(b.size());
    for (std::size_t i = 0; i < b.size(); ++i) b_scaled[i] = std::ldexp(b[i], exponent);

    const Solved<T> plain = solve_with(solver, backend, b);
    const Solved<T> scaled = solve_with(solver, backend, b_scaled);
    ASSERT_EQ(plain.result.status, SolveStatus::converged) << plain.result.summary();
    ASSERT_EQ(scaled.result.status, SolveStatus::converged) << scaled.result.summary();
    EXPECT_EQ(scaled.result.iterations, plain.result.iterations);
    EXPECT_EQ(scaled.result.rhs_norm, std::ldexp(plain.result.rhs_norm, exponent));
    // The final residual is b - A x recomputed at the user's scale, where its squares leave
    // the range: summed by norm2's scaled path instead of the back-end's dot, so to rounding.
    EXPECT_NEAR(scaled.result.relative_residual(), plain.result.relative_residual(),
                (std::is_same_v<T, double> ? 1e-12 : 1e-4) * plain.result.relative_residual());
    for (std::size_t i = 0; i < b.size(); ++i) {
        ASSERT_EQ(scaled.x[i], std::ldexp(plain.x[i], exponent)) << "row " << i;
    }
}

TEST(ScaledSystems, ARightSideNearUnderflowOrOverflowIsSolvedAsItsMultipleNearOne) {
    for (const ScaledCase& c : scaled_cases) {
        for (const int exponent : {-900, 900}) {
            SCOPED_TRACE(std::string(c.method) + " + " + c.preconditioner + " " + c.format +
                         (c.fused ? "" : " (reference)") + ", double, b times 2^" +
                         std::to_string(exponent));
            expect_scaled_solves_match<double>(c, exponent);
        }
        for (const int exponent : {-60, 60}) {
            SCOPED_TRACE(std::string(c.method) + " + " + c.preconditioner + " " + c.format +
                         (c.fused ? "" : " (reference)") + ", float, b times 2^" +
                         std::to_string(exponent));
            expect_scaled_solves_match<float>(c, exponent);
        }
    }
}

// atol is scaled with the system: a solve stopped by atol alone stops at the same iteration
// whatever the power of two b and atol are multiplied by together.
TEST(ScaledSystems, TheAbsoluteToleranceIsScaledWithTheSystem) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const auto one = [](double, double, double) { return 1.0; };
    const CsrData<double> a = testing::diffusion_matrix(12, 2, one);
    const std::vector<double> b =
        testing::random_vector<double>(static_cast<std::size_t>(a.rows), 3);
    std::int64_t iterations[2] = {};
    for (const int exponent : {0, -900}) {
        MethodParameters parameters;
        parameters.criteria.relative_tolerance = 0;
        parameters.criteria.absolute_tolerance = std::ldexp(1e-6, exponent);
        const LinearSystemSolver<double> solver(
            backend, a, plan_solver(analyze(a), SolverRequest::parse("cg", "none", "dia")),
            parameters);
        std::vector<double> rhs(b.size());
        for (std::size_t i = 0; i < b.size(); ++i) rhs[i] = std::ldexp(b[i], exponent);
        const Solved<double> solved = solve_with(solver, backend, rhs);
        ASSERT_EQ(solved.result.status, SolveStatus::converged) << solved.result.summary();
        EXPECT_LE(solved.result.final_residual, parameters.criteria.absolute_tolerance);
        iterations[exponent == 0 ? 0 : 1] = solved.result.iterations;
    }
    EXPECT_EQ(iterations[1], iterations[0]);
}

// b of `value` everywhere with A = tridiag(-1, 4, -1) of 400 rows: ||b|| = 20 |value|, which
// exceeds T's largest value for value = 1e307 (double) or 1e38 (float), while A x (x about b/2,
// 4 x about 2 b) stays finite. Each method converges
// to x = 2^e times the solution for b times 2^-e (a right side in range): the same iterates up to
// a power of two, bit for bit. (||b|| overflowed to Inf: no scaling, "non_finite after 0
// iterations" for every method.)
template <typename T>
void expect_overflowing_norm_solved(const ScaledCase& c, T value, int exponent) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const CsrData<double> a = tridiagonal(400, -1.0, 4.0, -1.0);
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = std::is_same_v<T, double> ? 1e-10 : 1e-5;
    parameters.fused_kernels = c.fused;
    const SolverPlan plan =
        plan_solver(analyze(a), SolverRequest::parse(c.method, c.preconditioner, c.format));
    const LinearSystemSolver<T> solver(backend, convert_values<T>(a), plan, parameters);
    const std::vector<T> b(400, value), b_in_range(400, std::ldexp(value, -exponent));
    const WideNorm norm = wide_norm2(Array<T>::from_host(backend, b));
    EXPECT_NEAR(std::log2(norm.fraction) + norm.exponent,
                std::log2(20.0) + std::log2(static_cast<double>(value)), 1e-9);

    const Solved<T> huge = solve_with(solver, backend, b);
    const Solved<T> in_range = solve_with(solver, backend, b_in_range);
    ASSERT_EQ(in_range.result.status, SolveStatus::converged) << in_range.result.summary();
    ASSERT_EQ(huge.result.status, SolveStatus::converged) << huge.result.summary();
    EXPECT_EQ(huge.result.iterations, in_range.result.iterations);
    for (std::size_t i = 0; i < b.size(); ++i) {
        ASSERT_EQ(huge.x[i], std::ldexp(in_range.x[i], exponent)) << "row " << i;
    }
}

TEST(ScaledSystems, ARightSideWhoseNormOverflowsIsSolvedScaled) {
    for (const ScaledCase& c : scaled_cases) {
        if (std::string(c.format) == "stencil") continue;  // needs a grid
        SCOPED_TRACE(std::string(c.method) + " + " + c.preconditioner + " " + c.format +
                     (c.fused ? "" : " (reference)"));
        expect_overflowing_norm_solved<double>(c, 1e307, 1000);
        expect_overflowing_norm_solved<float>(c, 1e38f, 100);
    }
}

// A breakdown's value is reported at the system's own scale: CG's p'Ap < 0 on an indefinite
// matrix is the same number whether b was solved as given or scaled by a power of two (it was
// reported times 2^(2k)). The exponents keep 2^(2e) p'Ap within double's range.
template <typename T>
void expect_breakdown_value_unscaled(const char* format, bool fused, int exponent) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    // diag(1, -3, 1, -3, ...) plus small couplings: symmetric, indefinite.
    const CsrData<double> a = tridiagonal(64, 0.25, 1.0, 0.25);
    CsrData<double> indefinite = a;
    for (std::int32_t i = 1; i < a.rows; i += 2) {
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (a.col[k] == i) indefinite.values[k] = -3.0;
        }
    }
    MethodParameters parameters;
    parameters.fused_kernels = fused;
    const SolverPlan plan =
        plan_solver(analyze(indefinite), SolverRequest::parse("cg", "none", format));
    const LinearSystemSolver<T> solver(backend, convert_values<T>(indefinite), plan, parameters);
    const std::vector<T> b(64, T(1));
    std::vector<T> b_scaled(64, std::ldexp(T(1), exponent));
    const auto first_attempt = [&](const std::vector<T>& rhs) {
        const auto bb = Array<T>::from_host(backend, rhs);
        Array<T> x(backend, rhs.size());
        fill(x, T(0));
        return solver.solve(bb, x).attempts.front().result;
    };
    const SolveResult plain = first_attempt(b);
    const SolveResult scaled = first_attempt(b_scaled);
    ASSERT_EQ(plain.status, SolveStatus::indefinite) << plain.summary();
    ASSERT_EQ(scaled.status, SolveStatus::indefinite) << scaled.summary();
    ASSERT_TRUE(plain.breakdown_value && scaled.breakdown_value);
    EXPECT_LT(*plain.breakdown_value, 0);
    // p'Ap of b times 2^e is 2^(2e) times b's: reported at b's scale, times 2^(2e) exactly.
    EXPECT_EQ(*scaled.breakdown_value, std::ldexp(*plain.breakdown_value, 2 * exponent));
}

TEST(ScaledSystems, ABreakdownValueIsReportedAtTheSystemsScale) {
    for (const bool fused : {true, false}) {
        SCOPED_TRACE(fused ? "fused" : "reference");
        expect_breakdown_value_unscaled<double>("csr", fused, -400);
        expect_breakdown_value_unscaled<double>("csr", fused, 400);
        expect_breakdown_value_unscaled<float>("csr", fused, -60);
    }
}

template <typename T>
void expect_norms_at_any_scale() {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const std::size_t n = 1000;
    const std::vector<T> v = testing::random_vector<T>(n, 11);
    const auto unit = static_cast<double>(norm2(Array<T>::from_host(backend, v)));
    const int limit = std::numeric_limits<T>::max_exponent - 8;
    for (const int exponent : {-limit, -limit / 2 - 4, limit / 2 + 4, limit}) {
        SCOPED_TRACE("values times 2^" + std::to_string(exponent));
        std::vector<T> scaled(n);
        for (std::size_t i = 0; i < n; ++i) scaled[i] = std::ldexp(v[i], exponent);
        const auto array = Array<T>::from_host(backend, scaled);
        const auto norm = static_cast<double>(norm2(array));
        EXPECT_NEAR(std::ldexp(norm, -exponent), unit,
                    16 * std::numeric_limits<T>::epsilon() * unit);
        EXPECT_EQ(static_cast<double>(norm2(array)), norm);  // deterministic
    }
    // Subnormal values alone: a norm of their size, not 0.
    std::vector<T> tiny(n, T(0));
    tiny[7] = std::numeric_limits<T>::denorm_min() * T(3);
    tiny[500] = std::numeric_limits<T>::denorm_min() * T(4);
    EXPECT_EQ(norm2(Array<T>::from_host(backend, tiny)),
              std::numeric_limits<T>::denorm_min() * T(5));
    EXPECT_EQ(norm2(Array<T>::from_host(backend, std::vector<T>(n, T(0)))), T(0));
    // An array of no back-end (default-constructed) has norm 0 (it was dereferenced).
    EXPECT_EQ(norm2(Array<T>()), T(0));
    EXPECT_EQ(wide_norm2(Array<T>()).fraction, 0.0);
    std::vector<T> special(n, T(1));
    special[3] = std::numeric_limits<T>::infinity();
    EXPECT_EQ(norm2(Array<T>::from_host(backend, special)), std::numeric_limits<T>::infinity());
    special[3] = std::numeric_limits<T>::quiet_NaN();
    EXPECT_TRUE(std::isnan(norm2(Array<T>::from_host(backend, special))));
}

TEST(ScaledSystems, NormsOfFiniteVectorsNeitherUnderflowNorOverflow) {
    expect_norms_at_any_scale<double>();
    expect_norms_at_any_scale<float>();
}

// The hook is asked between batches (every iteration on the reference paths): once it says
// stop, the solve ends as interrupted within a batch, x the finite iterate reached; a fallback
// chain's later methods end at once too.
TEST(Interrupt, AHookThatSaysStopEndsAnyMethodAsInterrupted) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const auto one = [](double, double, double) { return 1.0; };
    const CsrData<double> a = testing::diffusion_matrix(40, 2, one);
    const std::vector<double> b =
        testing::random_vector<double>(static_cast<std::size_t>(a.rows), 5);
    for (const ScaledCase& c : scaled_cases) {
        SCOPED_TRACE(std::string(c.method) + " + " + c.preconditioner + " " + c.format);
        int asked = 0;
        MethodParameters parameters;
        parameters.criteria.relative_tolerance = 1e-15;
        parameters.criteria.max_iterations = 1000000;
        parameters.criteria.interrupted = [&asked] { return ++asked >= 3; };
        parameters.fused_kernels = c.fused;
        const LinearSystemSolver<double> solver(
            backend, a,
            plan_solver(analyze(a), SolverRequest::parse(c.method, c.preconditioner, c.format)),
            parameters);
        const Solved<double> solved = solve_with(solver, backend, b);
        EXPECT_EQ(solved.result.status, SolveStatus::interrupted) << solved.result.summary();
        EXPECT_EQ(asked, 3);
        // Asked after each of at most two full batches (64 iterations each) before the third.
        EXPECT_LE(solved.result.iterations, 3 * 64);
        EXPECT_EQ(solved.result.residual_history.size(),
                  static_cast<std::size_t>(solved.result.iterations) + 1);
        for (const double v : solved.x) ASSERT_TRUE(std::isfinite(v));
    }
}

}  // namespace
}  // namespace simrun::solvers

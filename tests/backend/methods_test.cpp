// Every method x format on generated systems of known character, checked against a dense direct
// solve; plus the outcomes of the hard cases (indefinite, singular), fallbacks, float precision,
// compensated sums and the multicolour ordering. One source built per back-end: compiled with
// SIMRUN_TEST_ON_CUDA it runs on the GPU (and skips where there is none), otherwise on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "simrun/solvers/linear_system_solver.hpp"
#include "simrun/solvers/matrix_properties.hpp"
#include "simrun/solvers/multicolour.hpp"
#include "simrun/solvers/preconditioner.hpp"
#include "simrun/solvers/vector_ops.hpp"
#include "support/random_data.hpp"
#include "support/test_matrices.hpp"

namespace simrun::solvers {
namespace {

using testing::TestSystem;

#ifdef SIMRUN_TEST_ON_CUDA
std::shared_ptr<const Backend> test_backend() {
    return cuda_compiled() && cuda_device_count() > 0 ? make_cuda_backend() : nullptr;
}
#define SIMRUN_SKIP_WITHOUT_BACKEND(b) \
    if (!(b)) GTEST_SKIP() << "no CUDA GPU (or no CUDA back-end in this build): GPU test skipped"
#else
std::shared_ptr<const Backend> test_backend() { return make_cpu_backend(); }
#define SIMRUN_SKIP_WITHOUT_BACKEND(b) (void)(b)
#endif

std::vector<TestSystem> systems() {
    const auto one = [](double, double, double) { return 1.0; };
    return {
        {"laplacian_2d", testing::diffusion_matrix(12, 2, one)},
        {"laplacian_3d", testing::diffusion_matrix(6, 3, one)},
        {"variable_coefficient",
         testing::diffusion_matrix(12, 2,
                                   [](double x, double y, double) { return 1 + 10 * x * y; })},
        {"convection_diffusion", testing::convection_diffusion_matrix(12, 20.0, -10.0)},
        {"strongly_dominant", testing::strongly_dominant_matrix(200, 3)},
    };
}

struct MethodCase {
    std::string method, preconditioner;
};

const std::vector<MethodCase> method_cases = {
    {"jacobi", "none"},     {"sor", "none"},     {"cg", "none"},     {"cg", "jacobi"},
    {"cg", "ssor"},         {"bicg", "none"},    {"bicg", "jacobi"}, {"bicgstab", "none"},
    {"bicgstab", "jacobi"}, {"bicgstab", "ssor"}};

const std::vector<std::string> formats = {"dia", "ell", "csr", "coo", "dense"};

struct Combination {
    std::size_t system, method, format;
};

std::vector<Combination> combinations() {
    std::vector<Combination> all;
    const auto s = systems();
    for (std::size_t i = 0; i < s.size(); ++i) {
        const bool symmetric = analyze(s[i].a).symmetric;
        for (std::size_t m = 0; m < method_cases.size(); ++m) {
            if (method_cases[m].method == "cg" && !symmetric) continue;  // CG needs symmetry
            for (std::size_t f = 0; f < formats.size(); ++f) all.push_back({i, m, f});
        }
    }
    return all;
}

void PrintTo(const Combination& c, std::ostream* os) {
    *os << systems()[c.system].name << " " << method_cases[c.method].method << "+"
        << method_cases[c.method].preconditioner << " " << formats[c.format];
}

class Methods : public ::testing::TestWithParam<Combination> {};

TEST_P(Methods, ConvergesToTheDirectSolution) {
    const auto [si, mi, fi] = GetParam();
    const TestSystem system = systems()[si];
    const MethodCase& method = method_cases[mi];
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const auto n = static_cast<std::size_t>(system.a.rows);
    const auto b = testing::random_vector<double>(n, 17);
    const auto exact = testing::dense_solve(system.a, b);

    const SolverPlan plan =
        plan_solver(analyze(system.a), {method.method, method.preconditioner, formats[fi]});
    EXPECT_TRUE(plan.fallbacks.empty()) << "a named method gets no fallbacks";
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-10;
    parameters.criteria.max_iterations = 20000;
    if (formats[fi] == "dia" && count_diagonals(system.a) > 64) {
        // A random sparse matrix has hundreds of diagonals: DIA refuses it, saying so.
        EXPECT_THROW(LinearSystemSolver<double>(backend, system.a, plan, parameters),
                     std::invalid_argument);
        return;
    }
    const LinearSystemSolver<double> solver(backend, system.a, plan, parameters);
    const auto bb = Array<double>::from_host(backend, b);
    Array<double> x(backend, n);
    fill(x, 0.0);
    const SolveReport report = solver.solve(bb, x);
    ASSERT_EQ(report.result().status, SolveStatus::converged) << report.result().summary();
    const auto solution = x.to_host();
    // The recurrences' residual may drift from the true one by rounding: allow a factor 2.
    EXPECT_LE(testing::relative_residual(system.a, b, solution), 2e-10);
    // These systems have condition numbers below 1e3, so the error is below 1e3 * 2e-10.
    double error = 0, size = 0;
    for (std::size_t i = 0; i < n; ++i) {
        error = std::max(error, std::abs(solution[i] - exact[i]));
        size = std::max(size, std::abs(exact[i]));
    }
    EXPECT_LE(error / size, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(AllCombinations, Methods, ::testing::ValuesIn(combinations()),
                         [](const ::testing::TestParamInfo<Combination>& param) {
                             const auto& c = param.param;
                             return systems()[c.system].name + "_" + method_cases[c.method].method +
                                    "_" + method_cases[c.method].preconditioner + "_" +
                                    formats[c.format];
                         });

SolveReport solve_auto(const std::shared_ptr<const Backend>& backend, const CsrData<double>& a,
                       const std::vector<double>& b, std::vector<double>* x_out,
                       std::int64_t max_iterations = 5000) {
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-10;
    parameters.criteria.max_iterations = max_iterations;
    const LinearSystemSolver<double> solver(backend, a, plan_solver(analyze(a), {}), parameters);
    const auto bb = Array<double>::from_host(backend, b);
    Array<double> x(backend, b.size());
    fill(x, 0.0);
    SolveReport report = solver.solve(bb, x);
    *x_out = x.to_host();
    return report;
}

TEST(Fallbacks, IndefiniteSymmetricMatrixFallsBackFromCg) {
    // Eigenvalues of the 10x10 Laplacian lie in (0, 8): a shift of 3 makes it indefinite
    // while keeping the diagonal (4 - 3) positive, so auto picks CG first.
    const auto a = testing::shifted_laplacian(10, 3.0);
    const auto b = testing::random_vector<double>(100, 5);
    std::vector<double> x;
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const SolveReport report = solve_auto(backend, a, b, &x);
    ASSERT_GE(report.attempts.size(), 2u);
    EXPECT_EQ(report.attempts[0].step.method, Method::cg);
    EXPECT_EQ(report.attempts[0].result.status, SolveStatus::indefinite);
    EXPECT_EQ(report.attempts[0].result.breakdown_quantity, "p'Ap");
    EXPECT_EQ(report.attempts[1].step.method, Method::bicgstab);
    for (double v : x) EXPECT_TRUE(std::isfinite(v));
    if (report.converged()) {
        EXPECT_LE(testing::relative_residual(a, b, x), 2e-10);
    } else {
        EXPECT_GT(testing::relative_residual(a, b, x), 1e-10);
    }
}

TEST(HardCases, InconsistentSingularSystemIsNotReportedConverged) {
    // A = Neumann Laplacian (null space: constants); b has a nonzero mean, so A x = b has no
    // solution and no method may claim one.
    const auto a = testing::singular_matrix(50);
    const auto b = testing::random_vector<double>(50, 6, 0.5, 1.5);
    std::vector<double> x;
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const SolveReport report = solve_auto(backend, a, b, &x, 500);
    EXPECT_FALSE(report.converged());
    for (const auto& attempt : report.attempts) EXPECT_FALSE(attempt.result.converged());
    for (double v : x) EXPECT_TRUE(std::isfinite(v));
}

TEST(HardCases, ConsistentSingularSystemConverges) {
    // b = A y lies in the range of A: CG finds a solution (the one nearest x0 = 0).
    const auto a = testing::singular_matrix(50);
    const auto b = testing::multiply(a, testing::random_vector<double>(50, 7));
    std::vector<double> x;
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const SolveReport report = solve_auto(backend, a, b, &x);
    EXPECT_TRUE(report.converged()) << report.result().summary();
    EXPECT_LE(testing::relative_residual(a, b, x), 2e-10);
}

TEST(Precision, FloatSolveAgreesWithDoubleToFloatAccuracy) {
    const auto a = testing::diffusion_matrix(16, 2, [](double, double, double) { return 1.0; });
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const auto b = testing::random_vector<double>(256, 8);
    const auto exact = testing::dense_solve(a, b);
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-5;
    const LinearSystemSolver<float> solver(backend, convert_values<float>(a),
                                           plan_solver(analyze(a), {"cg", "jacobi", "csr"}),
                                           parameters);
    const std::vector<float> bf(b.begin(), b.end());
    const auto bb = Array<float>::from_host(backend, bf);
    Array<float> x(backend, 256);
    fill(x, 0.0f);
    ASSERT_TRUE(solver.solve(bb, x).converged());
    const auto xf = x.to_host();
    const std::vector<double> xd(xf.begin(), xf.end());
    EXPECT_LE(testing::relative_residual(a, b, xd), 2e-5);
    double error = 0, size = 0;
    for (std::size_t i = 0; i < 256; ++i) {
        error = std::max(error, std::abs(xd[i] - exact[i]));
        size = std::max(size, std::abs(exact[i]));
    }
    EXPECT_LE(error / size, 1e-3);  // cond ~ 100 times the 1e-5 tolerance
}

TEST(Precision, CompensatedDotsGiveTheSameSolution) {
    const auto a = testing::diffusion_matrix(20, 2, [](double, double, double) { return 1.0; });
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const auto b = testing::random_vector<double>(400, 9);
    std::int64_t iterations[2];
    for (int compensated = 0; compensated < 2; ++compensated) {
        MethodParameters parameters;
        parameters.criteria.relative_tolerance = 1e-10;
        parameters.compensated_dots = compensated == 1;
        const LinearSystemSolver<double> solver(
            backend, a, plan_solver(analyze(a), {"cg", "none", "csr"}), parameters);
        const auto bb = Array<double>::from_host(backend, b);
        Array<double> x(backend, 400);
        fill(x, 0.0);
        const SolveReport report = solver.solve(bb, x);
        ASSERT_TRUE(report.converged());
        EXPECT_LE(testing::relative_residual(a, b, x.to_host()), 2e-10);
        iterations[compensated] = report.result().iterations;
    }
    EXPECT_LE(std::abs(iterations[0] - iterations[1]), 2);
}

TEST(Multicolour, GridStencilsGetRedBlackAndColoursAreUncoupled) {
    const auto one = [](double, double, double) { return 1.0; };
    EXPECT_EQ(greedy_colouring(testing::diffusion_matrix(9, 2, one)).num_colours(), 2);
    EXPECT_EQ(greedy_colouring(testing::diffusion_matrix(5, 3, one)).num_colours(), 2);
    const auto a = testing::strongly_dominant_matrix(300, 11);
    const Colouring colouring = greedy_colouring(a);
    std::vector<int> colour(300, -1);
    for (int c = 0; c < colouring.num_colours(); ++c) {
        for (auto k = colouring.offsets[static_cast<std::size_t>(c)];
             k < colouring.offsets[static_cast<std::size_t>(c) + 1]; ++k) {
            colour[static_cast<std::size_t>(colouring.rows[static_cast<std::size_t>(k)])] = c;
        }
    }
    for (int c : colour) EXPECT_GE(c, 0);  // every row coloured once
    for (std::int32_t i = 0; i < a.rows; ++i) {
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            const auto j = a.col[static_cast<std::size_t>(k)];
            if (j != i) {
                EXPECT_NE(colour[static_cast<std::size_t>(i)], colour[static_cast<std::size_t>(j)]);
            }
        }
    }
}

TEST(Multicolour, SsorPreconditionerIsSymmetric) {
    // CG needs (M r1) . r2 = r1 . (M r2).
    const auto a = testing::diffusion_matrix(10, 2, [](double x, double, double) { return 1 + x; });
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    for (double omega : {1.0, 1.4}) {
        const SsorPreconditioner<double> m(backend, a, omega);
        const auto r1 = Array<double>::from_host(backend, testing::random_vector<double>(100, 12));
        const auto r2 = Array<double>::from_host(backend, testing::random_vector<double>(100, 13));
        Array<double> z1(backend, 100), z2(backend, 100);
        m.apply(r1, z1);
        m.apply(r2, z2);
        EXPECT_NEAR(dot(z1, r2), dot(r1, z2), 1e-12 * std::abs(dot(z1, r2)));
        EXPECT_GT(dot(z1, r1), 0.0);
    }
}

}  // namespace
}  // namespace simrun::solvers

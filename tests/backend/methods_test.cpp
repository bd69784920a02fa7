// Every method x format on generated systems of known character, checked against a dense direct
// solve; plus the outcomes of the hard cases (indefinite, singular), fallbacks, float precision,
// compensated sums and the multicolour ordering. One source built per back-end: compiled with
// SIMRUN_TEST_ON_CUDA it runs on the GPU (and skips where there is none), otherwise on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>

#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/matrix_factory.hpp"
#include "simrun/solvers/matrices/sparse_matrices.hpp"
#include "simrun/solvers/methods/conjugate_gradient.hpp"
#include "simrun/solvers/methods/gmres.hpp"
#include "simrun/solvers/methods/stationary_methods.hpp"
#include "simrun/solvers/preconditioners/incomplete_lu.hpp"
#include "simrun/solvers/preconditioners/multicolour.hpp"
#include "simrun/solvers/preconditioners/preconditioner.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"
#include "support/random_data.hpp"
#include "support/test_backend.hpp"
#include "support/test_matrices.hpp"

namespace simrun::solvers {
namespace {

using testing::TestSystem;

using testing::test_backend;

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
    {"jacobi", "none"},     {"sor", "none"},      {"cg", "none"},     {"cg", "jacobi"},
    {"cg", "ssor"},         {"bicg", "none"},     {"bicg", "jacobi"}, {"bicgstab", "none"},
    {"bicgstab", "jacobi"}, {"bicgstab", "ssor"}, {"gmres", "none"},  {"gmres", "jacobi"},
    {"gmres", "ssor"}};

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

    const SolverPlan plan = plan_solver(
        analyze(system.a), SolverRequest::parse(method.method, method.preconditioner, formats[fi]));
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

// A solve by the named method and preconditioner in CSR, from x0 = 0.
SolveReport solve_named(const std::shared_ptr<const Backend>& backend, const CsrData<double>& a,
                        const std::vector<double>& b, const char* method,
                        const char* preconditioner, const MethodParameters& parameters,
                        std::vector<double>* x_out) {
    const LinearSystemSolver<double> solver(
        backend, a, plan_solver(analyze(a), SolverRequest::parse(method, preconditioner, "csr")),
        parameters);
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

TEST(Fallbacks, ConvectionThatDefeatsBiCgStabIsSolvedByTheChain) {
    // An upwind M-matrix at cell Peclet 5 and central differences at cell Peclet 4 (not
    // dominant): BiCGStab diverges on both from x0 = 0 (the matrices); the chain goes
    // on until a method solves them.
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    for (const bool upwind : {true, false}) {
        SCOPED_TRACE(upwind ? "upwind, Peclet 5" : "central, Peclet 4");
        const auto a = testing::convection_matrix(70, upwind ? 5.0 : 4.0, upwind);
        EXPECT_EQ(analyze(a).chained_dominant, upwind);
        const auto b = testing::multiply(a, std::vector<double>(4900, 1.0));
        std::vector<double> x;
        const SolveReport report = solve_auto(backend, a, b, &x, 5000);
        ASSERT_TRUE(report.converged()) << report.result().summary();
        EXPECT_LE(testing::relative_residual(a, b, x), 1e-10);
        // The chain did the work: the first choice failed, and every later step says why it
        // was taken.
        ASSERT_GE(report.attempts.size(), 2u);
        EXPECT_EQ(report.attempts.front().step.method, Method::bicgstab);
        EXPECT_FALSE(report.attempts.front().result.converged());
        for (std::size_t k = 1; k < report.attempts.size(); ++k) {
            EXPECT_FALSE(report.attempts[k].step.reason.empty()) << k;
        }
    }
}

TEST(Fallbacks, TheChainEndsWithGmresThenGaussSeidelWhereDominanceGuaranteesIt) {
    const auto methods = [](const CsrData<double>& a) {
        std::vector<Method> chain;
        for (const SolverStep& step : plan_solver(analyze(a), {}).fallbacks) {
            chain.push_back(step.method);
        }
        return chain;
    };
    // Weakly chained dominant (the rows beside the boundary strict, the others reaching them).
    EXPECT_EQ(methods(testing::convection_matrix(10, 5.0, true)),
              (std::vector<Method>{Method::bicg, Method::gmres, Method::gmres, Method::sor}));
    // Weakly dominant with no strictly dominant row (the Neumann Laplacian): no guarantee.
    const auto neumann = testing::singular_matrix(20);
    EXPECT_TRUE(analyze(neumann).weakly_dominant);
    EXPECT_FALSE(analyze(neumann).chained_dominant);
    // (GMRES with ILU(0), then with the first choice's Jacobi, then with none.)
    EXPECT_EQ(methods(neumann), (std::vector<Method>{Method::bicgstab, Method::bicg, Method::gmres,
                                                     Method::gmres, Method::gmres}));
    // Weakly dominant, with strict rows that a decoupled block cannot reach: reducible, and
    // not chained (the Neumann block is singular).
    testing::TripletBuilder t(23);
    for (std::int32_t k = 0; k < neumann.rows; ++k) {
        for (std::int32_t e = neumann.row_ptr[k]; e < neumann.row_ptr[k + 1]; ++e) {
            t.add(k, neumann.col[e], neumann.values[static_cast<std::size_t>(e)]);
        }
    }
    for (std::int32_t k = 20; k < 23; ++k) t.add(k, k, 3.0);
    t.add(20, 21, 1.0);
    EXPECT_FALSE(analyze(t.csr()).chained_dominant);
    EXPECT_FALSE(analyze(t.csr()).strictly_dominant);
}

TEST(Gmres, FullGmresEndsWithinTheDimensionAndItsResidualNeverGrows) {
    // GMRES with a basis as large as the system minimises ||b - A x|| over growing Krylov
    // spaces: the residual cannot grow, and the n-th space holds the solution.
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const auto a = testing::convection_matrix(7, 3.0, false);  // 49 rows, nonsymmetric
    const auto b = testing::random_vector<double>(49, 31);
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-12;
    parameters.restart = 64;
    std::vector<double> x;
    const SolveReport report = solve_named(backend, a, b, "gmres", "none", parameters, &x);
    ASSERT_TRUE(report.converged()) << report.result().summary();
    EXPECT_LE(report.result().iterations, 49);
    const auto& history = report.result().residual_history;
    for (std::size_t k = 1; k < history.size(); ++k) {
        EXPECT_LE(history[k], history[k - 1] * (1 + 1e-12)) << "iteration " << k;
    }
    EXPECT_LE(testing::relative_residual(a, b, x), 2e-12);
}

TEST(Gmres, RestartedCyclesAndRightPreconditioningMonitorTheTrueResidual) {
    // Rows scaled over 8 orders of magnitude: Jacobi fixes the scaling. Right preconditioning
    // keeps the minimised residual b - A x itself, so the last monitored value is the true
    // ||b - A x|| (a left-preconditioned D^-1 r would be off by the row scales).
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    auto a = testing::convection_matrix(20, 2.0, true);
    std::vector<double> scale(400);
    for (std::int32_t i = 0; i < a.rows; ++i) {
        scale[static_cast<std::size_t>(i)] = std::pow(10.0, (i % 9) - 4);
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            a.values[static_cast<std::size_t>(k)] *= scale[static_cast<std::size_t>(i)];
        }
    }
    const auto b = testing::multiply(a, testing::random_vector<double>(400, 32));
    for (const int restart : {5, 30}) {
        SCOPED_TRACE("restart " + std::to_string(restart));
        MethodParameters parameters;
        parameters.criteria.relative_tolerance = 1e-10;
        parameters.criteria.max_iterations = 5000;
        parameters.restart = restart;
        std::vector<double> x;
        const SolveReport report = solve_named(backend, a, b, "gmres", "jacobi", parameters, &x);
        ASSERT_TRUE(report.converged()) << report.result().summary();
        const SolveResult& result = report.result();
        EXPECT_EQ(result.residual_history.size(), static_cast<std::size_t>(result.iterations) + 1);
        const double true_relative = testing::relative_residual(a, b, x);
        EXPECT_LE(true_relative, 2e-10);
        const double monitored = result.residual_history.back() / result.rhs_norm;
        EXPECT_GT(monitored, 0.5 * true_relative);
        EXPECT_LT(monitored, 2.0 * true_relative);
    }
}

TEST(Gmres, SolvesAnIndefiniteSymmetricSystemAndRefusesABadRestartLength) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const auto a = testing::shifted_laplacian(10, 3.0);
    const auto b = testing::random_vector<double>(100, 33);
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-10;
    parameters.criteria.max_iterations = 5000;
    std::vector<double> x;
    const SolveReport report = solve_named(backend, a, b, "gmres", "none", parameters, &x);
    ASSERT_TRUE(report.converged()) << report.result().summary();
    EXPECT_LE(testing::relative_residual(a, b, x), 2e-10);
    const SolverPlan plan = plan_solver(analyze(a), SolverRequest::parse("gmres", "none", "csr"));
    for (const int restart : {0, max_gmres_restart + 1}) {
        parameters.restart = restart;
        EXPECT_THROW(LinearSystemSolver<double>(backend, a, plan, parameters),
                     std::invalid_argument);
    }
}

TEST(ProgressWindow, AStallingMethodStopsAfterTheWindow) {
    // Jacobi on the Neumann Laplacian with a b outside its range: the residual cannot fall
    // below b's component along the null space, so the iterates stall there.
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const auto a = testing::singular_matrix(30);
    const auto b = testing::random_vector<double>(30, 34, 0.5, 1.5);
    MethodParameters parameters;
    parameters.criteria.max_iterations = 100000;
    parameters.criteria.progress_window = 100;
    parameters.omega = 0.5;
    const auto op = make_operator(backend, a, Format::csr);
    const WeightedJacobi<double> jacobi(*op, diagonal_of(a), parameters);
    const auto bb = Array<double>::from_host(backend, b);
    Array<double> x(backend, 30);
    fill(x, 0.0);
    const SolveResult result = jacobi.solve(bb, x);
    ASSERT_EQ(result.status, SolveStatus::no_progress) << result.summary();
    EXPECT_LT(result.iterations, 100000);
    // The rule that stopped it: the smallest residual of the last 100 iterations is not 1%
    // below the smallest before them, while one iteration earlier it still was.
    const auto& h = result.residual_history;
    const auto smallest = [&](std::size_t last) {
        return *std::min_element(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(last) + 1);
    };
    const std::size_t k = h.size() - 1;
    EXPECT_GE(smallest(k), 0.99 * smallest(k - 100));
    EXPECT_LT(smallest(k - 1), 0.99 * smallest(k - 101));
}

TEST(HardCases, EmptyRowsAndColumnsAreNamedAndNeverConverged) {
    // The 3 x 3 matrix with one entry, (0, 0): x = (1, 0, 0) satisfies A x = b = A 1,
    // as does any x with x_0 = 1; and a matrix of explicit zeros.
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    testing::TripletBuilder one(3);
    one.add(0, 0, 2.0);
    testing::TripletBuilder zeros(4);
    for (std::int32_t i = 0; i < 4; ++i) zeros.add(i, i, 0.0);
    for (const auto& [a, rows, first] :
         {std::tuple{one.csr(), 2, 1}, std::tuple{zeros.csr(), 4, 0}}) {
        const MatrixProperties p = analyze(a);
        EXPECT_EQ(p.empty_rows, rows);
        EXPECT_EQ(p.empty_columns, rows);
        EXPECT_EQ(p.first_empty_row, first);
        EXPECT_NE(
            p.singularity().find("structurally singular: " + std::to_string(rows) + " empty rows"),
            std::string::npos)
            << p.singularity();
        EXPECT_EQ(plan_solver(p, {}).singular, p.singularity());
        const auto b =
            testing::multiply(a, std::vector<double>(static_cast<std::size_t>(a.rows), 1.0));
        std::vector<double> x;
        const SolveReport report = solve_auto(backend, a, b, &x);
        EXPECT_EQ(report.result().status, SolveStatus::singular) << report.result().summary();
        EXPECT_FALSE(report.converged());
        const auto ax = testing::multiply(a, x);
        for (std::size_t i = 0; i < b.size(); ++i) EXPECT_NEAR(ax[i], b[i], 1e-10) << i;
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
    const LinearSystemSolver<float> solver(
        backend, convert_values<float>(a),
        plan_solver(analyze(a), SolverRequest::parse("cg", "jacobi", "csr")), parameters);
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
        std::vector<double> x;
        const SolveReport report = solve_named(backend, a, b, "cg", "none", parameters, &x);
        ASSERT_TRUE(report.converged());
        EXPECT_LE(testing::relative_residual(a, b, x), 2e-10);
        iterations[compensated] = report.result().iterations;
    }
    EXPECT_LE(std::abs(iterations[0] - iterations[1]), 2);
}

// A solver built from the DIA form keeps no host copy (DIA, stencil) or goes through CSR (the
// other formats); either way every method, fallbacks (BiCG's transpose, SOR's CSR) included,
// gives bit for bit the iterates of the solver built from the CSR form.
TEST(LinearSystemSolverFromDia, EveryMethodAndFormatMatchesTheSolverFromCsr) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    DiaData<double> poisson = testing::laplacian_2d(9);  // constant coefficients
    DiaData<double> varied = testing::random_dia<double>(81, {-9, -1, 0, 1, 9}, 5);
    for (std::int64_t i = 0; i < varied.n; ++i) {
        double off = 0.0;
        for (int d : {0, 1, 3, 4}) off += std::abs(varied.at(d, i));
        varied.at(2, i) = 1.5 * off + 0.5;  // strictly dominant: every method converges
    }
    const auto b = testing::random_vector<double>(81, 12);
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-9;
    parameters.criteria.max_iterations = 1000;  // Jacobi needs ~420 on the 9 x 9 Laplacian
    for (const DiaData<double>* dia : {&poisson, &varied}) {
        const CsrData<double> csr = to_csr(*dia);
        const MatrixProperties properties = analyze(*dia);
        for (const char* format : {"stencil", "dia", "csr", "ell"}) {
            if (std::string(format) == "stencil" && !properties.constant_coefficients) continue;
            for (const auto& method : method_cases) {
                SCOPED_TRACE(method.method + "+" + method.preconditioner + " " + format);
                SolverPlan plan;
                try {
                    plan = plan_solver(
                        properties,
                        SolverRequest::parse(method.method, method.preconditioner, format));
                } catch (const std::invalid_argument&) {
                    continue;  // a combination that cannot work (e.g. bicg + ssor)
                }
                const LinearSystemSolver<double> from_dia(backend, *dia, plan, parameters);
                const LinearSystemSolver<double> from_csr(backend, csr, plan, parameters);
                const auto bb = Array<double>::from_host(backend, b);
                Array<double> x_dia(backend, b.size()), x_csr(backend, b.size());
                fill(x_dia, 0.0);
                fill(x_csr, 0.0);
                const SolveReport report_dia = from_dia.solve(bb, x_dia);
                const SolveReport report_csr = from_csr.solve(bb, x_csr);
                // (CG needs symmetry; the random matrix has none.)
                if (properties.symmetric || method.method != "cg") {
                    EXPECT_TRUE(report_dia.converged());
                }
                EXPECT_EQ(report_dia.result().iterations, report_csr.result().iterations);
                EXPECT_EQ(x_dia.to_host(), x_csr.to_host());
            }
        }
    }
}

// Solves from x = 0 with the named method, preconditioner and format; the solution in *x.
template <typename T>
SolveResult solve_named(const std::shared_ptr<const Backend>& backend, const CsrData<T>& a,
                        const std::vector<T>& b, const SolverRequest& request,
                        const MethodParameters& parameters, std::vector<T>* x = nullptr) {
    const LinearSystemSolver<T> solver(backend, a, plan_solver(analyze(a), request), parameters);
    // The fused tests compare the two paths: the operator must take the fused one when asked.
    EXPECT_TRUE(!parameters.fused_kernels || solver.matrix().row_view().has_value())
        << "the " << (request.format ? to_string(*request.format) : "auto")
        << " operator exposes no rows: the fused path cannot run";
    const auto bb = Array<T>::from_host(backend, b);
    Array<T> xa(backend, b.size());
    fill(xa, T(0));
    SolveResult result = solver.solve(bb, xa).result();
    if (x != nullptr) *x = xa.to_host();
    return result;
}

// The fused CG, BiCGStab and Jacobi (scalars on the back-end, batches of iterations, each
// product folded with the vector it multiplies and the dot products it feeds) are the reference
// methods reorganised: same iteration count within 1 (CG) or 2 (BiCGStab, whose recurrences
// amplify rounding more; Jacobi), same solution to the tolerance, in every format they take,
// with and without a Jacobi preconditioner, in double and float; and a breakdown is reported as
// the reference reports it.
std::vector<CsrData<double>> symmetric_systems() {
    const auto one = [](double, double, double) { return 1.0; };
    const auto variable = [](double x, double y, double) { return 1 + 10 * x * y; };
    return {testing::diffusion_matrix(24, 2, variable), testing::diffusion_matrix(9, 3, one)};
}

std::vector<CsrData<double>> nonsymmetric_systems() {
    return {testing::convection_diffusion_matrix(24, 20.0, -10.0),
            testing::convection_diffusion_matrix(40, 5.0, 30.0)};
}

template <typename T>
void expect_fused_matches_reference(const std::string& method, const std::string& format,
                                    const std::string& preconditioner) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const bool cg = method == "cg";
    // In float, a tolerance well above the level where rounding decides when BiCGStab's
    // erratic residual first dips under it (at 1e-5 the two took 3 iterations apart on a GPU).
    const double tolerance = std::is_same_v<T, float> ? (cg ? 1e-5 : 1e-4) : 1e-10;
    for (const auto& a64 : cg ? symmetric_systems() : nonsymmetric_systems()) {
        const CsrData<T> a = convert_values<T>(a64);
        const auto n = static_cast<std::size_t>(a.rows);
        const auto b64 = testing::random_vector<double>(n, 23);
        const std::vector<T> b(b64.begin(), b64.end());
        SolveResult results[2];
        std::vector<T> solutions[2];
        for (int fused = 0; fused < 2; ++fused) {
            MethodParameters parameters;
            parameters.criteria.relative_tolerance = tolerance;
            parameters.fused_kernels = fused == 1;
            results[fused] =
                solve_named(backend, a, b, SolverRequest::parse(method, preconditioner, format),
                            parameters, &solutions[fused]);
        }
        ASSERT_TRUE(results[0].converged()) << results[0].summary();
        ASSERT_TRUE(results[1].converged()) << results[1].summary();
        EXPECT_LE(std::abs(results[0].iterations - results[1].iterations), cg ? 1 : 2);
        ASSERT_EQ(results[1].residual_history.size(),
                  static_cast<std::size_t>(results[1].iterations) + 1);
        // Both are solutions to the tolerance: their difference is within twice its error.
        const std::vector<double> x_fused(solutions[1].begin(), solutions[1].end());
        const double true_residual = testing::relative_residual(a64, b64, x_fused);
        EXPECT_LE(true_residual, 4 * tolerance);
        if (method == "jacobi" && std::is_same_v<T, double>) {
            // Jacobi records b - A x_k of the iterate it returns (not of x_{k+1}, which it has
            // computed too): the two agree to rounding, far closer than the one-iteration
            // contraction (about 1%) that returning the wrong iterate would show.
            const double recorded = results[1].final_residual / results[1].rhs_norm;
            EXPECT_NEAR(true_residual, recorded, 1e-6 * recorded);
        }
        double difference = 0, size = 0;
        for (std::size_t i = 0; i < n; ++i) {
            difference = std::max(difference, std::abs(double(solutions[0][i] - solutions[1][i])));
            size = std::max(size, std::abs(double(solutions[0][i])));
        }
        EXPECT_LE(difference / size, 1e3 * tolerance);  // condition numbers below 1e3
    }
}

struct FusedCase {
    std::string method, format, preconditioner;
    bool single;  // float, else double
};

void PrintTo(const FusedCase& c, std::ostream* os) {
    *os << c.method << "_" << c.format << "_" << c.preconditioner
        << (c.single ? "_float" : "_double");
}

class FusedMatchesReference : public ::testing::TestWithParam<FusedCase> {};

TEST_P(FusedMatchesReference, SameIterationsAndSolution) {
    const FusedCase& c = GetParam();
    if (c.single) {
        expect_fused_matches_reference<float>(c.method, c.format, c.preconditioner);
    } else {
        expect_fused_matches_reference<double>(c.method, c.format, c.preconditioner);
    }
}

INSTANTIATE_TEST_SUITE_P(
    CgAndBiCgStab, FusedMatchesReference,
    ::testing::Values(
        FusedCase{"cg", "dia", "none", false}, FusedCase{"cg", "dia", "jacobi", false},
        FusedCase{"cg", "ell", "jacobi", false}, FusedCase{"cg", "csr", "none", false},
        FusedCase{"cg", "csr", "ssor", false}, FusedCase{"cg", "dia", "ssor", false},
        FusedCase{"cg", "ell", "ssor", false}, FusedCase{"cg", "csr", "ssor", true},
        FusedCase{"cg", "dia", "none", true}, FusedCase{"bicgstab", "dia", "none", false},
        FusedCase{"bicgstab", "dia", "jacobi", false},
        FusedCase{"bicgstab", "stencil", "none", false},
        FusedCase{"bicgstab", "ell", "jacobi", false}, FusedCase{"bicgstab", "csr", "none", false},
        FusedCase{"bicgstab", "dia", "none", true}, FusedCase{"jacobi", "dia", "none", false},
        FusedCase{"jacobi", "stencil", "none", false}, FusedCase{"jacobi", "csr", "none", false},
        FusedCase{"jacobi", "dia", "none", true}),
    [](const ::testing::TestParamInfo<FusedCase>& param) {
        std::ostringstream name;
        PrintTo(param.param, &name);
        return name.str();
    });

void expect_fused_stops_at_the_iteration_limit(const std::string& method, const CsrData<double>& a,
                                               std::size_t compared,
                                               const std::string& preconditioner = "none",
                                               const std::string& format = "dia") {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const auto b = testing::random_vector<double>(static_cast<std::size_t>(a.rows), 5);
    std::vector<double> histories[2];
    for (int fused = 0; fused < 2; ++fused) {
        MethodParameters parameters;
        parameters.criteria.relative_tolerance = 0;  // never met: exactly max_iterations
        parameters.criteria.max_iterations = 77;     // not a multiple of any batch length
        parameters.fused_kernels = fused == 1;
        const SolveResult result = solve_named(
            backend, a, b, SolverRequest::parse(method, preconditioner, format), parameters);
        EXPECT_EQ(result.status, SolveStatus::max_iterations);
        EXPECT_EQ(result.iterations, 77);
        histories[fused] = result.residual_history;
    }
    ASSERT_EQ(histories[1].size(), 78u);
    for (std::size_t k = 0; k < compared; ++k) {
        // Same recurrence, different rounding: the residuals agree to many digits while the
        // rounding differences, amplified each iteration, stay small.
        EXPECT_NEAR(histories[1][k], histories[0][k], 1e-6 * histories[0][k]) << "k = " << k;
    }
}

TEST(FusedCg, StopsAtTheIterationLimitWithTheFullHistory) {
    // CG loses digits slowly: the whole history agrees.
    expect_fused_stops_at_the_iteration_limit(
        "cg", testing::diffusion_matrix(40, 2, [](double, double, double) { return 1.0; }), 78);
}

TEST(FusedSsorCg, StopsAtTheIterationLimitWithTheFullHistory) {
    // SSOR-preconditioned CG in one block: 77 iterations over several batches, the whole history
    // as the reference's (with the coefficient's 1 to 401 range the residual falls slowly
    // enough that 77 iterations stay above round-off).
    const auto variable = [](double x, double y, double) { return 1 + 400 * x * y; };
    expect_fused_stops_at_the_iteration_limit("cg", testing::diffusion_matrix(60, 2, variable), 78,
                                              "ssor", "csr");
}

TEST(FusedSsorCg, FormsTheProductFromTheSweepsOnlyWhereTheyHoldTheOperator) {
    // M = SSOR of B = A + I: its sweeps are not A's, so the one-block path must form A p from A
    // and solve A x = b; from the sweeps it would solve B x = b, whose solution leaves a
    // residual in A far above the tolerance. M = SSOR of A named as A's (sweeps_hold) forms
    // A p from the sweeps' matrix, diagonal included, and solves A x = b to the tolerance.
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const auto variable = [](double x, double y, double) { return 1 + 10 * x * y; };
    const CsrData<double> a = testing::diffusion_matrix(24, 2, variable);
    CsrData<double> shifted = a;
    for (std::int32_t i = 0; i < a.rows; ++i) {
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (a.col[k] == i) shifted.values[k] += 1;
        }
    }
    const auto n = static_cast<std::size_t>(a.rows);
    const auto b = testing::random_vector<double>(n, 31);
    const CsrMatrix<double> op(backend, a);
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-10;
    parameters.fused_kernels = true;
    for (const bool own : {false, true}) {
        const SsorPreconditioner<double> m(backend, own ? a : shifted, 1.0, own ? &op : nullptr);
        EXPECT_EQ(m.sweeps_hold(op), own);
        const ConjugateGradient<double> cg(op, &m, parameters);
        const auto b_on = Array<double>::from_host(backend, b);
        auto x = Array<double>::from_host(backend, std::vector<double>(n, 0.0));
        const SolveResult result = cg.solve(b_on, x);
        ASSERT_TRUE(result.converged()) << result.summary();
        EXPECT_LE(testing::relative_residual(a, b, x.to_host()), 4e-10) << "own sweeps: " << own;
    }
}

TEST(FusedBiCgStab, StopsAtTheIterationLimitWithTheFullHistory) {
    // BiCGStab amplifies rounding differences about 2.5 times per iteration on this matrix
    // (1e-16 relative at iteration 6, 1e-6 at 30: two correct solves that part ways), so the
    // histories are compared over the first 20 iterations.
    expect_fused_stops_at_the_iteration_limit(
        "bicgstab", testing::convection_diffusion_matrix(80, 2.0, 1.0), 20);
}

TEST(FusedJacobi, StopsAtTheIterationLimitWithTheFullHistory) {
    // Jacobi contracts rounding differences as it contracts the error: the whole history agrees.
    expect_fused_stops_at_the_iteration_limit(
        "jacobi", testing::convection_diffusion_matrix(40, 10.0, 5.0), 78);
}

// Solves with the reference and the fused path: both stop with `status` at the same iteration,
// naming `quantity`.
void expect_fused_breakdown_as_reference(const CsrData<double>& a, const std::vector<double>& b,
                                         const SolverRequest& request, SolveStatus status,
                                         const std::string& quantity) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    SolveResult results[2];
    for (int fused = 0; fused < 2; ++fused) {
        MethodParameters parameters;
        parameters.fused_kernels = fused == 1;
        results[fused] = solve_named(backend, a, b, request, parameters);
    }
    EXPECT_EQ(results[0].status, status);
    EXPECT_EQ(results[0].breakdown_quantity, quantity);
    EXPECT_EQ(results[1].status, results[0].status);
    EXPECT_EQ(results[1].breakdown_quantity, results[0].breakdown_quantity);
    EXPECT_EQ(results[1].iterations, results[0].iterations);
}

TEST(FusedBiCgStab, ReportsABreakdownAsTheReferenceDoes) {
    // A skew-symmetric 2x2 blocks: with r0 = b, v = A b and r0'v = b'Ab = 0 exactly (each block
    // adds b1 b2 - b2 b1), so alpha is undefined at the first iteration.
    CsrData<double> a;
    a.rows = a.cols = 50;
    for (int i = 0; i < 50; ++i) {
        a.col.push_back(i % 2 == 0 ? i + 1 : i - 1);
        a.values.push_back(i % 2 == 0 ? 1.0 : -1.0);
        a.row_ptr.push_back(i + 1);
    }
    expect_fused_breakdown_as_reference(a, testing::random_vector<double>(50, 9),
                                        SolverRequest::parse("bicgstab", "none", "csr"),
                                        SolveStatus::breakdown, "r0'v");
}

TEST(FusedCg, ReportsAnIndefiniteMatrixAsTheReferenceDoes) {
    // diag(1, -1, 1, ...) and b = (1, 2, 1, 2, ...): p'Ap = b'Ab = 25 - 100 < 0 at once.
    CsrData<double> a;
    a.rows = a.cols = 50;
    for (int i = 0; i < 50; ++i) {
        a.col.push_back(i);
        a.values.push_back(i % 2 == 0 ? 1.0 : -1.0);
        a.row_ptr.push_back(i + 1);
    }
    std::vector<double> b(50);
    for (int i = 0; i < 50; ++i) b[static_cast<std::size_t>(i)] = i % 2 == 0 ? 1.0 : 2.0;
    expect_fused_breakdown_as_reference(a, b, SolverRequest::parse("cg", "none", "dia"),
                                        SolveStatus::indefinite, "p'Ap");
    // SSOR on a diagonal matrix is D^-1: p'Ap = b'D^-1 A D^-1 b = 25 - 100 < 0 as well.
    expect_fused_breakdown_as_reference(a, b, SolverRequest::parse("cg", "ssor", "csr"),
                                        SolveStatus::indefinite, "p'Ap");
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

// ---- ILU(0) ----

// L U of the factors in double, densely (small matrices).
std::vector<std::vector<double>> lu_product(const IncompleteLu<double>& f) {
    const auto n = static_cast<std::size_t>(f.lower.rows);
    std::vector<std::vector<double>> upper(n, std::vector<double>(n, 0.0)), lu = upper;
    for (std::size_t i = 0; i < n; ++i) {
        for (auto k = f.upper.row_ptr[i]; k < f.upper.row_ptr[i + 1]; ++k) {
            upper[i][static_cast<std::size_t>(f.upper.col[static_cast<std::size_t>(k)])] =
                f.upper.values[static_cast<std::size_t>(k)];
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        lu[i] = upper[i];  // L's unit diagonal
        for (auto k = f.lower.row_ptr[i]; k < f.lower.row_ptr[i + 1]; ++k) {
            const auto m = static_cast<std::size_t>(f.lower.col[static_cast<std::size_t>(k)]);
            EXPECT_LT(m, i) << "L has an entry on or above the diagonal";
            for (std::size_t j = 0; j < n; ++j) {
                lu[i][j] += f.lower.values[static_cast<std::size_t>(k)] * upper[m][j];
            }
        }
    }
    return lu;
}

TEST(IncompleteLu, MatchesTheMatrixOnItsPattern) {
    // ILU(0)'s defining property (Saad, 10.3.2): (L U)_ij = a_ij wherever a_ij is stored; the
    // fill L U makes elsewhere is what it drops. On a nonsymmetric 5-point matrix, whose exact
    // LU fills the band, so the property is not that of an exact factorisation.
    const CsrData<double> a = testing::convection_diffusion_matrix(12, 20.0, -10.0);
    const IncompleteLu<double> f = incomplete_lu0(a);
    EXPECT_EQ(f.replaced_pivots, 0);
    const auto lu = lu_product(f);
    double dropped = 0;
    for (std::int32_t i = 0; i < a.rows; ++i) {
        double scale = 0;
        for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            scale = std::max(scale, std::abs(a.values[static_cast<std::size_t>(k)]));
        }
        std::vector<double> row(static_cast<std::size_t>(a.rows), 0.0);
        for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            row[static_cast<std::size_t>(a.col[static_cast<std::size_t>(k)])] =
                a.values[static_cast<std::size_t>(k)];
        }
        for (std::size_t j = 0; j < row.size(); ++j) {
            const double entry = lu[static_cast<std::size_t>(i)][j];
            if (row[j] != 0) {
                EXPECT_NEAR(entry, row[j], 1e-12 * scale) << "(" << i << ", " << j << ")";
            } else {
                dropped = std::max(dropped, std::abs(entry));
            }
        }
    }
    EXPECT_GT(dropped, 1e-3);  // the fill ILU(0) drops is there
}

TEST(IncompleteLu, ShiftsAPivotNothingFillsAndKeepsOneThatEliminationFills) {
    // [[0, 1], [1, 0]]: row 0's pivot is zero with nothing above to fill it; it becomes
    // sqrt(eps) times the row's largest entry.
    CsrData<double> swap;
    swap.rows = swap.cols = 2;
    swap.row_ptr = {0, 1, 2};
    swap.col = {1, 0};
    swap.values = {1.0, 1.0};
    const IncompleteLu<double> shifted = incomplete_lu0(swap);
    EXPECT_EQ(shifted.replaced_pivots, 1);
    EXPECT_EQ(shifted.first_replaced, 0);
    EXPECT_DOUBLE_EQ(lu_product(shifted)[0][0], std::sqrt(std::numeric_limits<double>::epsilon()));
    // ... and the preconditioner says so. Row 1 depends on row 0 in L (a_10), row 0 on row 1 in
    // U (a_01): two levels each.
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    EXPECT_EQ(IluPreconditioner<double>(backend, swap).describe(),
              "L in 2 levels, U in 2; 1 pivot shifted to sqrt(eps) times the row's largest entry "
              "(the first in row 0)");
    // [[1, 1], [1, 0]]: row 1's zero diagonal becomes 0 - 1 * 1 = -1 by elimination, and with
    // no fill possible in a 2 x 2 matrix, L U = A exactly.
    CsrData<double> filled = swap;
    filled.row_ptr = {0, 2, 3};
    filled.col = {0, 1, 0};
    filled.values = {1.0, 1.0, 1.0};
    const IncompleteLu<double> exact = incomplete_lu0(filled);
    EXPECT_EQ(exact.replaced_pivots, 0);
    const auto lu = lu_product(exact);
    EXPECT_EQ(lu, (std::vector<std::vector<double>>{{1.0, 1.0}, {1.0, 0.0}}));
}

TEST(IncompleteLu, RejectsARowOfZeros) {
    CsrData<double> a;
    a.rows = a.cols = 3;
    a.row_ptr = {0, 1, 2, 3};
    a.col = {0, 1, 2};
    a.values = {2.0, 0.0, 3.0};
    try {
        incomplete_lu0(a);
        FAIL() << "a row of zeros was factorised";
    } catch (const std::invalid_argument& error) {
        EXPECT_NE(std::string(error.what()).find("row 1 is all zero"), std::string::npos)
            << error.what();
    }
}

// z = M r on the back-end against the factors applied on the host: L (U z) = r.
template <typename T>
void expect_ilu_inverts_its_factors(const CsrData<double>& a64, double tolerance) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const CsrData<T> a = convert_values<T>(a64);
    const IluPreconditioner<T> m(backend, a);
    const auto n = static_cast<std::size_t>(a.rows);
    const auto r64 = testing::random_vector<double>(n, 31);
    const auto r = Array<T>::from_host(backend, std::vector<T>(r64.begin(), r64.end()));
    Array<T> z(backend, n);
    m.apply(r, z);
    m.apply(r, z);  // again: the recorded application gives the same
    const std::vector<T> zt = z.to_host();
    const IncompleteLu<T> f = incomplete_lu0(a);
    const std::vector<double> z64(zt.begin(), zt.end());
    const auto multiply = [](const CsrData<T>& part, const std::vector<double>& x, bool unit) {
        std::vector<double> y = unit ? x : std::vector<double>(x.size(), 0.0);
        for (std::int32_t i = 0; i < part.rows; ++i) {
            for (auto k = part.row_ptr[i]; k < part.row_ptr[i + 1]; ++k) {
                y[static_cast<std::size_t>(i)] += double(part.values[static_cast<std::size_t>(k)]) *
                                                  x[static_cast<std::size_t>(part.col[k])];
            }
        }
        return y;
    };
    const std::vector<double> back = multiply(f.lower, multiply(f.upper, z64, false), true);
    double error = 0, size = 0;
    for (std::size_t i = 0; i < n; ++i) {
        error = std::max(error, std::abs(back[i] - r64[i]));
        size = std::max(size, std::abs(r64[i]));
    }
    EXPECT_LE(error, tolerance * size) << "n = " << n;
}

TEST(IluPreconditioner, InvertsItsFactorsInOneBlockAndLevelByLevel) {
    // A tridiagonal matrix has a level per row (beyond the GPU's shared colour offsets), a
    // 30 x 30 grid 59 levels in one block, a 200 x 200 grid (above sor_block_rows) a launch
    // per level on the GPU.
    CsrData<double> tridiagonal;
    tridiagonal.rows = tridiagonal.cols = 300;
    for (std::int32_t i = 0; i < 300; ++i) {
        if (i > 0) tridiagonal.col.push_back(i - 1), tridiagonal.values.push_back(-1.3);
        tridiagonal.col.push_back(i), tridiagonal.values.push_back(2.5);
        if (i < 299) tridiagonal.col.push_back(i + 1), tridiagonal.values.push_back(-0.7);
        tridiagonal.row_ptr.push_back(static_cast<std::int32_t>(tridiagonal.col.size()));
    }
    EXPECT_EQ(forward_levels(tridiagonal).num_colours(), 300);
    const auto grid = [](std::int32_t m) {
        return testing::convection_diffusion_matrix(m, 5.0, 3.0);
    };
    EXPECT_EQ(forward_levels(incomplete_lu0(grid(30)).lower).num_colours(), 59);
    for (const auto& a : {tridiagonal, grid(30), grid(200)}) {
        expect_ilu_inverts_its_factors<double>(a, 1e-12);
        expect_ilu_inverts_its_factors<float>(a, 1e-4);
    }
    // Where ILU(0) is exact (no fill: tridiagonal), M = A^-1.
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const IluPreconditioner<double> m(backend, tridiagonal);
    const auto r = testing::random_vector<double>(300, 8);
    Array<double> z(backend, 300);
    m.apply(Array<double>::from_host(backend, r), z);
    EXPECT_LE(testing::relative_residual(tridiagonal, r, z.to_host()), 1e-14);
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

// Matrix analysis and the automatic choice of solver, with its reason.
#include "simrun/solvers/selection/solver_selection.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"
#include "support/test_matrices.hpp"

namespace simrun::solvers {
namespace {

// Tridiagonal [lower, diagonal, upper] with constant entries.
DiaData<double> tridiagonal(std::int64_t n, double lower, double diagonal, double upper) {
    DiaData<double> a;
    a.n = n;
    a.offsets = {-1, 0, 1};
    a.values.assign(3 * static_cast<std::size_t>(n), 0.0);
    for (std::int64_t i = 0; i < n; ++i) {
        if (i > 0) a.at(0, i) = lower;
        a.at(1, i) = diagonal;
        if (i + 1 < n) a.at(2, i) = upper;
    }
    return a;
}

TEST(MatrixProperties, LaplacianIsSymmetricAndWeaklyDominant) {
    const auto p = analyze(tridiagonal(10, -1, 2, -1));
    EXPECT_TRUE(p.symmetric);
    EXPECT_TRUE(p.positive_diagonal);
    EXPECT_TRUE(p.weakly_dominant);
    EXPECT_FALSE(p.strictly_dominant);  // interior rows: 2 = |-1| + |-1|
    EXPECT_DOUBLE_EQ(p.worst_dominance_ratio, 1.0);
    EXPECT_EQ(p.num_diagonals, 3);
}

TEST(MatrixProperties, DetectsNonsymmetryAndLostDominance) {
    const auto convection = analyze(tridiagonal(10, -1.5, 2, -0.5));
    EXPECT_FALSE(convection.symmetric);
    EXPECT_TRUE(convection.weakly_dominant);
    const auto indefinite = analyze(tridiagonal(10, -1, 1, -1));
    EXPECT_TRUE(indefinite.symmetric);
    EXPECT_FALSE(indefinite.weakly_dominant);
    EXPECT_DOUBLE_EQ(indefinite.worst_dominance_ratio, 0.5);
}

// Constant coefficients: one value on the diagonal, so Jacobi would only scale the residual
// (CG's iterates do not change) and costs a pass: no preconditioner.
TEST(SolverSelection, LaplacianGetsPlainCgInTheStencilFormat) {
    const auto plan = plan_solver(analyze(tridiagonal(10, -1, 2, -1)), {});
    EXPECT_EQ(plan.first.method, Method::cg);
    EXPECT_EQ(plan.first.preconditioner, PreconditionerKind::none);
    EXPECT_EQ(plan.format, Format::stencil) << plan.format_reason;
    EXPECT_NE(plan.format_reason.find("constant coefficients"), std::string::npos);
    EXPECT_NE(plan.first.reason.find("cg + none"), std::string::npos) << plan.first.reason;
    EXPECT_NE(plan.first.reason.find("jacobi would only scale"), std::string::npos);
    EXPECT_NE(plan.first.reason.find("SPD"), std::string::npos) << plan.first.reason;
    EXPECT_NE(plan.format_reason.find("3 diagonals"), std::string::npos) << plan.format_reason;
    // Fallback chain: BiCGStab, BiCG, then GMRES with ILU(0) and with none (the first choice's);
    // no Gauss-Seidel (only weakly dominant, and the DIA analysis claims chained dominance only
    // for strictly dominant matrices).
    ASSERT_EQ(plan.fallbacks.size(), 4u);
    EXPECT_EQ(plan.fallbacks[0].method, Method::bicgstab);
    EXPECT_EQ(plan.fallbacks[1].method, Method::bicg);
    EXPECT_EQ(plan.fallbacks[2].method, Method::gmres);
    EXPECT_EQ(plan.fallbacks[2].preconditioner, PreconditionerKind::ilu0);
    EXPECT_NE(plan.fallbacks[2].reason.find("ILU(0)"), std::string::npos);
    EXPECT_EQ(plan.fallbacks[3].method, Method::gmres);
    EXPECT_EQ(plan.fallbacks[3].preconditioner, plan.first.preconditioner);
    EXPECT_NE(plan.fallbacks[3].reason.find("GMRES with ilu0 failed"), std::string::npos);
}

TEST(SolverSelection, VariableCoefficientsGetDiaAndCannotBeAStencil) {
    auto a = tridiagonal(10, -1, 2, -1);
    a.at(1, 0) = 3;  // a_00: the main diagonal is no longer one value
    const MatrixProperties p = analyze(a);
    EXPECT_FALSE(p.constant_coefficients);
    EXPECT_TRUE(analyze(tridiagonal(10, -1, 2, -1)).constant_coefficients);
    EXPECT_EQ(plan_solver(p, {}).format, Format::dia);
    EXPECT_EQ(plan_solver(p, {}).first.preconditioner, PreconditionerKind::jacobi);
    EXPECT_THROW(plan_solver(p, SolverRequest::parse("auto", "auto", "stencil")),
                 std::invalid_argument);
}

TEST(SolverSelection, NonsymmetricGetsBiCgStabAndDominantGetsGaussSeidelLast) {
    auto a = tridiagonal(10, -1.5, 3, -0.5);
    a.at(1, 4) = 3.5;  // variable coefficients: Jacobi scales the rows differently
    const auto plan = plan_solver(analyze(a), {});
    EXPECT_EQ(plan.first.method, Method::bicgstab);
    EXPECT_EQ(plan.first.preconditioner, PreconditionerKind::jacobi);
    EXPECT_NE(plan.first.reason.find("nonsymmetric"), std::string::npos);
    ASSERT_EQ(plan.fallbacks.size(), 5u);
    EXPECT_EQ(plan.fallbacks[0].method, Method::bicg);
    EXPECT_EQ(plan.fallbacks[1].method, Method::gmres);
    EXPECT_EQ(plan.fallbacks[1].preconditioner, PreconditionerKind::ilu0);
    EXPECT_EQ(plan.fallbacks[2].method, Method::gmres);
    EXPECT_EQ(plan.fallbacks[2].preconditioner, PreconditionerKind::jacobi);
    EXPECT_EQ(plan.fallbacks[3].method, Method::gmres);
    EXPECT_EQ(plan.fallbacks[3].preconditioner, PreconditionerKind::none);
    EXPECT_EQ(plan.fallbacks[4].method, Method::sor);  // strictly dominant
}

TEST(SolverSelection, NotDominantSpdGetsSsor) {
    // A symmetric tridiagonal with a positive diagonal smaller than its off-diagonal sum.
    const auto plan = plan_solver(analyze(tridiagonal(10, -1, 1.5, -1)), {});
    EXPECT_EQ(plan.first.method, Method::cg);
    EXPECT_EQ(plan.first.preconditioner, PreconditionerKind::ssor);
    EXPECT_EQ(plan.fallbacks[0].preconditioner, PreconditionerKind::jacobi);
}

TEST(SolverSelection, ZeroDiagonalGetsNoPreconditioner) {
    const auto plan = plan_solver(analyze(tridiagonal(10, -1, 0, 2)), {});
    EXPECT_EQ(plan.first.method, Method::bicgstab);
    EXPECT_EQ(plan.first.preconditioner, PreconditionerKind::none);
    EXPECT_NE(plan.first.reason.find("zero diagonal"), std::string::npos) << plan.first.reason;
    EXPECT_THROW(plan_solver(analyze(tridiagonal(10, -1, 0, 2)),
                             SolverRequest::parse("bicgstab", "jacobi", "auto")),
                 std::invalid_argument);
}

TEST(SolverSelection, NamedChoicesAreHonouredWithoutFallbacks) {
    const auto plan =
        plan_solver(analyze(tridiagonal(10, -1, 3, -1)), SolverRequest::parse("cg", "ssor", "ell"));
    EXPECT_EQ(plan.first.preconditioner, PreconditionerKind::ssor);
    EXPECT_EQ(plan.format, Format::ell);
    EXPECT_TRUE(plan.fallbacks.empty());
    EXPECT_NE(plan.first.reason.find("named by the user"), std::string::npos);
}

TEST(SolverSelection, RefusesImpossibleRequests) {
    const auto p = analyze(tridiagonal(10, -1, 3, -1));
    EXPECT_THROW(plan_solver(p, SolverRequest::parse("minres", "auto", "auto")),
                 std::invalid_argument);
    EXPECT_THROW(plan_solver(p, SolverRequest::parse("auto", "ilu", "auto")),
                 std::invalid_argument);
    EXPECT_THROW(plan_solver(p, SolverRequest::parse("auto", "auto", "hyb")),
                 std::invalid_argument);
    EXPECT_THROW(plan_solver(p, SolverRequest::parse("sor", "jacobi", "auto")),
                 std::invalid_argument);
    EXPECT_THROW(plan_solver(p, SolverRequest::parse("bicg", "ssor", "auto")),
                 std::invalid_argument);
}

TEST(SolverSelection, UnevenRowsGetCsrAndEvenRowsEll) {
    // An arrow matrix: one dense row and column, a diagonal otherwise.
    CsrData<double> arrow;
    arrow.rows = arrow.cols = 100;
    for (std::int32_t i = 0; i < 100; ++i) {
        if (i == 0) {
            for (std::int32_t j = 0; j < 100; ++j) {
                arrow.col.push_back(j);
                arrow.values.push_back(j == 0 ? 200.0 : 1.0);
            }
        } else {
            arrow.col.insert(arrow.col.end(), {0, i});
            arrow.values.insert(arrow.values.end(), {1.0, 4.0});
        }
        arrow.row_ptr.push_back(static_cast<std::int32_t>(arrow.col.size()));
    }
    const auto plan = plan_solver(analyze(arrow), {});
    EXPECT_EQ(plan.format, Format::csr) << plan.format_reason;
}

// A grid's Dirichlet nodes are identity rows beside a main diagonal of another value: they stay
// out of the constant-coefficient test (the stencil storage flags them), in the DIA analysis, its
// merge over windows, and the CSR analysis alike.
TEST(SolverSelection, IdentityRowsKeepAStencilConstant) {
    DiaData<double> a = tridiagonal(12, -1, 2, -1);
    for (const std::int64_t i : {std::int64_t{0}, std::int64_t{11}}) {
        a.at(0, i) = 0.0;
        a.at(1, i) = 1.0;
        a.at(2, i) = 0.0;
    }
    a.at(0, 1) = 0.0;   // row 1's coupling to row 0
    a.at(2, 10) = 0.0;  // row 10's to row 11
    const MatrixProperties p = analyze(a);
    EXPECT_TRUE(p.constant_coefficients);
    EXPECT_EQ(p.num_diagonals, 3);
    EXPECT_TRUE(analyze(to_csr(a)).constant_coefficients);
    const auto plan = plan_solver(p, {});
    EXPECT_EQ(plan.format, Format::stencil);
    EXPECT_EQ(plan.first.preconditioner, PreconditionerKind::none);
    // Windows holding only identity rows merge as neutral.
    for (const std::int64_t split : {1, 2, 6, 11}) {
        MatrixAnalysis windows;
        windows.add(a, 0, split);
        windows.add(a, split, a.n);
        EXPECT_TRUE(windows.properties().constant_coefficients) << split;
    }
    // An identity row beside a different inner row is still one too many values.
    a.at(1, 5) = 2.5;
    EXPECT_FALSE(analyze(a).constant_coefficients);
    EXPECT_FALSE(analyze(to_csr(a)).constant_coefficients);
}

// Rows split over ranks: auto chooses as one process does (CG with Jacobi where multigrid has no
// box, with multigrid where it has one), with one process's fallback chain; SSOR and ILU(0) run
// as block Jacobi and Gauss-Seidel as hybrid, the reasons saying so.
TEST(SolverSelection, OverRanksEveryMethodWithItsReason) {
    const auto p = analyze(tridiagonal(500, -1, 2.5, -1));
    SolverRequest request;
    request.ranks = 3;
    const SolverPlan plan = plan_solver(p, request);
    const SolverPlan one = plan_solver(p, SolverRequest{});
    EXPECT_EQ(plan.first.name(), one.first.name());
    ASSERT_FALSE(plan.fallbacks.empty());
    std::vector<std::string> expected;
    for (const SolverStep& step : one.fallbacks) expected.push_back(step.name());
    std::vector<std::string> kept;
    for (const SolverStep& step : plan.fallbacks) kept.push_back(step.name());
    EXPECT_EQ(kept, expected);
    for (const char* preconditioner : {"ssor", "ilu0"}) {
        SolverRequest named = SolverRequest::parse("cg", preconditioner, "auto");
        named.ranks = 2;
        const SolverPlan block_jacobi = plan_solver(p, named);
        EXPECT_NE(block_jacobi.first.reason.find("over 2 ranks block Jacobi"), std::string::npos)
            << block_jacobi.first.reason;
    }
    // A grid's rows: multigrid, its levels split over the ranks.
    const auto laplacian =
        to_dia(testing::diffusion_matrix(63, 2, [](double, double, double) { return 1.0; }));
    SolverRequest on_grid;
    on_grid.ranks = 3;
    on_grid.grid = GridBox{2, {63, 63, 1}};
    const SolverPlan grid_plan = plan_solver(analyze(laplacian), on_grid);
    EXPECT_EQ(grid_plan.first.name(), "cg + multigrid") << grid_plan.first.reason;
    SolverRequest gauss_seidel = SolverRequest::parse("sor", "none", "auto");
    gauss_seidel.ranks = 2;
    EXPECT_NE(plan_solver(p, gauss_seidel).first.reason.find("over 2 ranks hybrid"),
              std::string::npos);
}

// The method's words mean the same at every entry point: cg is CG with no preconditioner unless
// one is named, pcg CG with the one named or chosen.
TEST(SolverRequestWords, CgTakesNoPreconditionerUnlessNamedAndPcgTakesOne) {
    const SolverRequest cg = SolverRequest::parse("cg", "auto", "auto");
    EXPECT_EQ(cg.method, Method::cg);
    EXPECT_EQ(cg.preconditioner, PreconditionerKind::none);
    EXPECT_EQ(SolverRequest::parse("cg", "jacobi", "auto").preconditioner,
              PreconditionerKind::jacobi);
    const SolverRequest pcg = SolverRequest::parse("pcg", "auto", "auto");
    EXPECT_EQ(pcg.method, Method::cg);
    EXPECT_FALSE(pcg.preconditioner.has_value());
    EXPECT_EQ(SolverRequest::parse("pcg", "ssor", "auto").preconditioner, PreconditionerKind::ssor);
    EXPECT_THROW(SolverRequest::parse("pcg", "none", "auto"), std::invalid_argument);
    EXPECT_FALSE(SolverRequest::parse("bicgstab", "auto", "auto").preconditioner.has_value());
    try {
        SolverRequest::parse("pgc", "auto", "auto");
        ADD_FAILURE() << "pgc was accepted";
    } catch (const std::invalid_argument& error) {
        EXPECT_NE(std::string(error.what()).find("cg, pcg, bicg"), std::string::npos)
            << error.what();
    }
}

}  // namespace
}  // namespace simrun::solvers

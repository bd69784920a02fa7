// `simrun solve` end to end: every real matrix in tests/data/matrices returns an outcome the
// test confirms by recomputing the residual itself; options, outputs and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/matrix_market.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "support/run_file.hpp"
#include "support/run_simrun.hpp"
#include "support/test_matrices.hpp"

namespace simrun {
namespace {

using testing::run_simrun;
using testing::TemporaryDirectory;

const std::string matrices = SIMRUN_SOURCE_DIR "/tests/data/matrices/";

nlohmann::json solve_json(const std::string& arguments, const TemporaryDirectory& dir,
                          int* exit_code) {
    const auto result = run_simrun("solve " + arguments + " --json", dir.path());
    *exit_code = result.exit_code;
    EXPECT_TRUE(result.exit_code == 0 || result.exit_code == 1) << result.err;
    return nlohmann::json::parse(result.out);
}

class RealMatrices : public ::testing::TestWithParam<std::string> {};

TEST_P(RealMatrices, OutcomeIsConfirmedByAnIndependentResidual) {
    const std::string name = GetParam();
    TemporaryDirectory dir;
    int exit_code = -1;
    const auto j = solve_json(matrices + name + ".mtx --backend cpu --out x.mtx", dir, &exit_code);
    for (const char* key : {"method", "preconditioner", "format", "backend", "precision", "reason",
                            "status", "iterations", "relative_residual", "error_vs_ones",
                            "setup_seconds", "seconds", "seconds_per_iteration", "fallbacks"}) {
        EXPECT_TRUE(j.contains(key)) << key;
    }
    const bool converged = j["status"] == "converged";
    EXPECT_EQ(exit_code, converged ? 0 : 1);

    // Recompute ||b - A x|| / ||b|| here from the files, b = A * ones.
    const auto a = solvers::to_csr(solvers::read_matrix_market(matrices + name + ".mtx"));
    const auto b = testing::multiply(a, std::vector<double>(static_cast<std::size_t>(a.rows), 1.0));
    if (converged) {
        const auto x = solvers::read_matrix_market_vector(dir.path() / "x.mtx");
        const double residual = testing::relative_residual(a, b, x);
        EXPECT_LE(residual, 1.01e-8);
        EXPECT_NEAR(residual, j["relative_residual"].get<double>(), 1e-3 * residual + 1e-15);
    } else {
        EXPECT_GT(j["relative_residual"].get<double>(), 1e-8) << "failure reported, yet solved";
        EXPECT_FALSE(j["fallbacks"].empty() && j["attempts"].size() > 1);
    }

    // What must converge: the SPD ones with CG, the PDE and reaction-diffusion ones.
    static const std::set<std::string> spd = {"nos3", "lap2D_5pt_n32_fixed", "lap2D_5pt_n100",
                                              "lap3D_7pt_n20", "gr_900_900_crg"};
    static const std::set<std::string> must_converge = {"pde900", "pde2961", "rdb800l", "rdb3200l"};
    // ... and those the fallback chain reaches with GMRES + ILU(0) (tols* have zero diagonal
    // entries; Jacobi-preconditioned and plain Krylov methods stall on all four).
    static const std::set<std::string> by_ilu = {"olm500", "olm1000", "tols1090", "tols4000"};
    if (spd.count(name)) {
        EXPECT_TRUE(converged) << j.dump();
        EXPECT_EQ(j["method"], "cg");
    }
    if (by_ilu.count(name)) {
        EXPECT_TRUE(converged) << j.dump();
        EXPECT_EQ(j["method"], "gmres");
        EXPECT_EQ(j["preconditioner"], "ilu0");
    }
    if (must_converge.count(name)) {
        EXPECT_TRUE(converged) << j.dump();
    }
    // ... and dw2048, which every preconditioner tried hurts and a short GMRES basis stalls on:
    // the last step, GMRES with the longest basis and no preconditioner, reaches 1e-8.
    if (name == "dw2048") {
        EXPECT_TRUE(converged) << j.dump();
        EXPECT_EQ(j["method"], "gmres");
        EXPECT_EQ(j["preconditioner"], "none");
    }
}

INSTANTIATE_TEST_SUITE_P(SolveCommand, RealMatrices,
                         ::testing::Values("nos3", "lap2D_5pt_n32_fixed", "lap2D_5pt_n100",
                                           "lap3D_7pt_n20", "gr_900_900_crg", "pde900", "pde2961",
                                           "rdb800l", "rdb3200l", "dw2048", "dw4096", "tols1090",
                                           "tols4000", "olm500", "olm1000"));

TEST(SolveCommand, NamedSolverFormatAndPrecisionAreUsed) {
    TemporaryDirectory dir;
    int exit_code = -1;
    const auto j = solve_json(matrices +
                                  "lap2D_5pt_n100.mtx --backend cpu --solver bicgstab --precond "
                                  "none --format ell --precision float --rtol 1e-5",
                              dir, &exit_code);
    EXPECT_EQ(exit_code, 0);
    EXPECT_EQ(j["method"], "bicgstab");
    EXPECT_EQ(j["preconditioner"], "none");
    EXPECT_EQ(j["format"], "ell");
    EXPECT_EQ(j["precision"], "float");
    EXPECT_LE(j["relative_residual"].get<double>(), 2e-5);
}

// "converged" is decided on b - A x recomputed, never on the method's recurrence alone: over
// tolerances down to just above the unit roundoff, in both precisions, a converged solve's
// solution meets the tolerance when its residual is recomputed here in long double (within the
// rounding of evaluating it in the solve's precision), and one that cannot is "stagnated",
// exit 1, with the recomputed residual above the tolerance. A tolerance below the unit
// roundoff is refused before anything is solved.
TEST(SolveCommand, ConvergedMeansTheRecomputedResidualMeetsTheTolerance) {
    TemporaryDirectory dir;
    const auto a = solvers::to_csr(solvers::read_matrix_market(matrices + "nos3.mtx"));
    const auto b = testing::multiply(a, std::vector<double>(static_cast<std::size_t>(a.rows), 1.0));
    int stagnated = 0;
    for (const auto& [precision, rtol, slack] :
         {std::tuple{"float", 1e-4, 1.5}, std::tuple{"float", 1e-5, 1.5},
          std::tuple{"float", 1e-7, 1.5}, std::tuple{"double", 1e-12, 1.01},
          std::tuple{"double", 1e-15, 1.01}}) {
        SCOPED_TRACE(std::string(precision) + " rtol " + std::to_string(rtol));
        char options[128];
        std::snprintf(options, sizeof options,
                      " --backend cpu --precision %s --rtol %g --out x.mtx", precision, rtol);
        std::filesystem::remove(dir.path() / "x.mtx");
        int exit_code = -1;
        const auto j = solve_json(matrices + "nos3.mtx" + options, dir, &exit_code);
        const auto x = solvers::read_matrix_market_vector(dir.path() / "x.mtx");
        const double residual = testing::relative_residual(a, b, x);
        // One history entry per iteration and the start, restarts included.
        EXPECT_EQ(j["residual_history"].size(), j["iterations"].get<std::size_t>() + 1);
        if (j["status"] == "converged") {
            EXPECT_EQ(exit_code, 0);
            EXPECT_LE(residual, slack * rtol) << j.dump();
        } else {
            EXPECT_EQ(j["status"], "stagnated") << j.dump();
            EXPECT_EQ(exit_code, 1);
            EXPECT_GT(residual, rtol / slack);
            ++stagnated;
        }
    }
    EXPECT_GE(stagnated, 2);  // 1e-7 in float and 1e-15 in double are out of reach for nos3

    const auto refused = run_simrun("solve " + matrices + "nos3.mtx --rtol 1e-300", dir.path());
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_NE(refused.err.find("below the unit roundoff of double"), std::string::npos)
        << refused.err;
}

TEST(SolveCommand, AStructurallySingularMatrixIsNamedAndExitsOne) {
    // Only entry (1,1): x = (1, 0, 0) satisfies A x = A 1, as does every x with x_1 = 1.
    TemporaryDirectory dir;
    {
        std::ofstream file(dir.path() / "a.mtx");
        file << "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 2.0\n";
    }
    int exit_code = -1;
    const auto j = solve_json("a.mtx --backend cpu", dir, &exit_code);
    EXPECT_EQ(exit_code, 1);
    EXPECT_EQ(j["status"], "singular");
    EXPECT_NE(j["singular"].get<std::string>().find("2 empty rows (the first: row 1)"),
              std::string::npos)
        << j.dump();
    const auto text = run_simrun("solve a.mtx --backend cpu", dir.path());
    EXPECT_EQ(text.exit_code, 1);
    EXPECT_NE(text.out.find("singular structurally singular: 2 empty rows"), std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("result   singular"), std::string::npos) << text.out;
    // Exit 1 says why on stderr too.
    EXPECT_NE(text.err.find("a.mtx: not solved: singular after"), std::string::npos) << text.err;
    EXPECT_NE(text.err.find("structurally singular: 2 empty rows"), std::string::npos) << text.err;
}

// A matrix and right side far from the unit scale (1e-300 and 1e300 times the 20 x 20
// Laplacian in double, 1e-20 and 1e20 in float, b = A 1) are solved as the unit one: converged
// to a residual recomputed here within the tolerance, x = 1 to the condition number times it.
// (||b||^2 underflowed to 0: "converged after 0 iterations" at a true residual of 1.)
TEST(SolveCommand, MatricesFarFromTheUnitScaleAreSolvedAsTheUnitOne) {
    TemporaryDirectory dir;
    const auto one = [](double, double, double) { return 1.0; };
    const solvers::CsrData<double> laplacian = testing::diffusion_matrix(20, 2, one);
    for (const auto& [precision, scale, rtol] :
         {std::tuple{"double", 1e-300, 1e-8}, std::tuple{"double", 1e300, 1e-8},
          std::tuple{"float", 1e-20, 1e-6}, std::tuple{"float", 1e20, 1e-6}}) {
        SCOPED_TRACE(std::string(precision) + " at scale " + std::to_string(scale));
        solvers::CsrData<double> a = laplacian;
        for (double& v : a.values) v *= scale;
        solvers::write_matrix_market(dir.path() / "a.mtx", a);
        std::filesystem::remove(dir.path() / "x.mtx");
        char options[160];
        std::snprintf(options, sizeof options,
                      "a.mtx --backend cpu --precision %s --rtol %g --out x.mtx", precision, rtol);
        int exit_code = -1;
        const auto j = solve_json(options, dir, &exit_code);
        EXPECT_EQ(exit_code, 0) << j.dump();
        EXPECT_EQ(j["status"], "converged") << j.dump();
        // As read back (the file's 17 digits), b = A 1 as the command makes it.
        const auto a_read = solvers::to_csr(solvers::read_matrix_market(dir.path() / "a.mtx"));
        const auto b = testing::multiply(a_read, std::vector<double>(400, 1.0));
        const auto x = solvers::read_matrix_market_vector(dir.path() / "x.mtx");
        EXPECT_LE(testing::relative_residual(a_read, b, x), rtol);
        // The Laplacian's condition number at 20 x 20 is about 180.
        for (const double v : x) ASSERT_NEAR(v, 1.0, 200 * rtol);
        // The history at the system's own scale: ||r_0|| = ||b|| from x0 = 0.
        long double b_squares = 0;
        for (const double v : b) b_squares += static_cast<long double>(v) * v;
        const auto b_norm = static_cast<double>(std::sqrt(b_squares));
        EXPECT_NEAR(j["residual_history"][0].get<double>(), b_norm, 10 * rtol * b_norm);
    }
}

// "converged" never stands over b - A x recomputed exactly (long double) above the tolerance,
// even where the solve's own recomputation in its precision met it: float SOR on the 100 x 100
// Laplacian at tolerances around float's floor for it (about 1.2e-6), whichever of them the
// rounding puts on either side: converged (exit 0) exactly where the true residual is within
// rtol, otherwise stagnated or max_iterations (exit 1, said on stderr). The demotion itself is
// unit-tested (ConfirmTrueResidual.*) on constructed results.
TEST(SolveCommand, ConvergedNeverStandsOverATrueResidualAboveTheTolerance) {
    TemporaryDirectory dir;
    const auto a = solvers::to_csr(solvers::read_matrix_market(matrices + "lap2D_5pt_n100.mtx"));
    const auto b = testing::multiply(a, std::vector<double>(static_cast<std::size_t>(a.rows), 1.0));
    for (const double rtol : {1.1e-6, 1.2e-6, 1.3e-6, 1.6e-6}) {
        SCOPED_TRACE("rtol " + std::to_string(rtol));
        char options[160];
        std::snprintf(options, sizeof options,
                      "solve %slap2D_5pt_n100.mtx --backend cpu --precision float --solver sor "
                      "--rtol %.17g --out x.mtx --json",
                      matrices.c_str(), rtol);
        std::filesystem::remove(dir.path() / "x.mtx");
        const auto result = run_simrun(options, dir.path());
        const auto j = nlohmann::json::parse(result.out);
        const double residual = testing::relative_residual(
            a, b, solvers::read_matrix_market_vector(dir.path() / "x.mtx"));
        EXPECT_NEAR(j["relative_residual"].get<double>(), residual, 1e-9 * residual);
        if (j["status"] == "converged") {
            EXPECT_EQ(result.exit_code, 0);
            EXPECT_LE(residual, rtol * (1 + 1e-9)) << j.dump();
        } else {
            EXPECT_TRUE(j["status"] == "stagnated" || j["status"] == "max_iterations") << j.dump();
            EXPECT_EQ(result.exit_code, 1);
            EXPECT_GT(residual, rtol * (1 - 1e-9)) << j.dump();
            EXPECT_NE(result.err.find("not solved: "), std::string::npos) << result.err;
        }
    }
}

// A right side whose norm exceeds the largest double (b = 1e307 in 400 rows: ||b|| = 2e308)
// with A = tridiag(-1, 4, -1) is solved by every method, to the tolerance, x within the
// condition number (at most (4 + 2) / (4 - 2) = 3) times rtol (in norm) of the solution for
// b = 1 times 1e307 (long double, by elimination). (||b|| was Inf: "non_finite after 0
// iterations".)
TEST(SolveCommand, ARightSideWhoseNormOverflowsIsSolved) {
    TemporaryDirectory dir;
    const std::int32_t n = 400;
    solvers::CsrData<double> a;
    a.rows = a.cols = n;
    for (std::int32_t i = 0; i < n; ++i) {
        for (const auto& [j, v] : {std::pair{i - 1, -1.0}, {i, 4.0}, {i + 1, -1.0}}) {
            if (j < 0 || j >= n) continue;
            a.col.push_back(j);
            a.values.push_back(v);
        }
        a.row_ptr.push_back(static_cast<std::int32_t>(a.col.size()));
    }
    solvers::write_matrix_market(dir.path() / "a.mtx", a);
    {
        std::ofstream file(dir.path() / "b.mtx");
        file << "%%MatrixMarket matrix array real general\n" << n << " 1\n";
        for (std::int32_t i = 0; i < n; ++i) file << "1e307\n";
    }
    const std::vector<double> unit_solution =
        testing::dense_solve(a, std::vector<double>(static_cast<std::size_t>(n), 1.0));
    double unit_norm = 0;
    for (const double v : unit_solution) unit_norm += v * v;
    unit_norm = std::sqrt(unit_norm);
    for (const char* method : {"cg", "bicgstab", "gmres", "bicg", "jacobi", "sor"}) {
        SCOPED_TRACE(method);
        std::filesystem::remove(dir.path() / "x.mtx");
        int exit_code = -1;
        const auto j = solve_json(
            std::string("a.mtx --rhs b.mtx --backend cpu --out x.mtx ") + "--solver " + method, dir,
            &exit_code);
        EXPECT_EQ(exit_code, 0) << j.dump();
        EXPECT_EQ(j["status"], "converged") << j.dump();
        EXPECT_LE(j["relative_residual"].get<double>(), 1e-8) << j.dump();
        const auto x = solvers::read_matrix_market_vector(dir.path() / "x.mtx");
        ASSERT_EQ(x.size(), static_cast<std::size_t>(n));
        // ||x - x*|| <= cond x ||r|| / ||b|| x ||x*||, which bounds each entry's error.
        for (std::size_t i = 0; i < x.size(); ++i) {
            ASSERT_NEAR(x[i] / 1e307, unit_solution[i], 3e-8 * unit_norm) << "row " << i;
        }
    }
}

// A heat run whose source reaches 1e304 (exp(700 x t) at x = t = 1: finite data) runs to its
// end: each step's ||b||^2 overflows the double range, which every method of the fallback chain
// met as non_finite at t = 0.52 before the solver scaled such systems. The problem is linear in
// the source (zero initial and boundary values), and every operation of a step is exact under
// a power of two: the last field equals 2^1000 times that of the source times 2^-1000 (whose
// systems stay in range at the end, and are scaled at the start), bit for bit.
TEST(LargeData, AHeatRunWithASourceNear1e304IsItsScaledDownRunTimes2To1000) {
    TemporaryDirectory dir;
    const std::string input =
        "[problem]\ntype = \"heat\"\nalpha = 0.01\ninitial = \"0\"\n"
        "[grid]\nnx = 33\nny = 33\nx = [0.0, 1.0]\ny = [0.0, 1.0]\n"
        "[boundary]\nleft = \"0\"\nright = \"0\"\nbottom = \"0\"\ntop = \"0\"\n"
        "[time]\nscheme = \"backward_euler\"\ndt = 0.01\nend = 1.0\n"
        "[output]\nvtk = false\n";
    // 2^-1000, written with the digits that read back as it exactly.
    char scaled_down[64];
    std::snprintf(scaled_down, sizeof scaled_down, "%.17g", std::ldexp(1.0, -1000));
    dir.write("huge.toml", "[problem]\ntype = \"heat\"\nsource = \"exp(700*x*t)\"\n" +
                               input.substr(input.find("alpha")));
    dir.write("small.toml", "[problem]\ntype = \"heat\"\nsource = \"exp(700*x*t)*" +
                                std::string(scaled_down) + "\"\n" +
                                input.substr(input.find("alpha")));
    for (const char* name : {"huge", "small"}) {
        const auto result = run_simrun(
            std::string(name) + ".toml --backend cpu --quiet --output " + name, dir.path());
        ASSERT_EQ(result.exit_code, 0) << name << ": " << result.err;
    }
    const testing::RunFile huge(dir.path() / "huge" / "heat.h5"),
        small(dir.path() / "small" / "heat.h5");
    ASSERT_TRUE(huge.is_open() && small.is_open());
    ASSERT_EQ(huge.steps().size(), 101u);
    const std::vector<double> u = huge.doubles("/steps/000100/u");
    const std::vector<double> u_small = small.doubles("/steps/000100/u");
    ASSERT_EQ(u.size(), 33u * 33u);
    ASSERT_EQ(u_small.size(), u.size());
    double largest = 0;
    for (std::size_t i = 0; i < u.size(); ++i) {
        ASSERT_EQ(u[i], std::ldexp(u_small[i], 1000)) << "point " << i;
        largest = std::max(largest, u[i]);
    }
    // (I - dt alpha L) u = u_old + dt f has diagonal 1 + 4 alpha dt / h^2 = 1.4 and couplings
    // <= 0, and u >= 0: u >= dt f / 1.4 at the point next to x = 1 (x = 31/32), at t >= 0.99.
    EXPECT_GE(largest, 0.01 * std::exp(700 * (31.0 / 32) * 0.99) / 1.4);
    EXPECT_TRUE(std::isfinite(largest));
}

TEST(SolveCommand, GivenRightHandSideAndInitialGuess) {
    TemporaryDirectory dir;
    const auto a = solvers::to_csr(solvers::read_matrix_market(matrices + "pde900.mtx"));
    std::vector<double> x_true(900), x0(900);
    for (std::size_t i = 0; i < 900; ++i) {
        x_true[i] = std::sin(0.01 * static_cast<double>(i));
        x0[i] = x_true[i] + 1e-3 * std::cos(static_cast<double>(i));
    }
    solvers::write_matrix_market_vector(dir.path() / "b.mtx", testing::multiply(a, x_true));
    solvers::write_matrix_market_vector(dir.path() / "x0.mtx", x0);
    int exit_code = -1;
    const auto j = solve_json(matrices +
                                  "pde900.mtx --backend cpu --rhs b.mtx --x0 x0.mtx "
                                  "--rtol 1e-10 --out x.mtx",
                              dir, &exit_code);
    EXPECT_EQ(exit_code, 0) << j.dump();
    EXPECT_FALSE(j.contains("error_vs_ones"));
    const auto x = solvers::read_matrix_market_vector(dir.path() / "x.mtx");
    for (std::size_t i = 0; i < 900; ++i) EXPECT_NEAR(x[i], x_true[i], 1e-6);
}

// --grid says the rows are a box's points: multigrid is then chosen for the Laplacians (CG +
// Jacobi would need hundreds of iterations) and reaches the tolerance in a handful.
TEST(SolveCommand, GridMakesMultigridApply) {
    TemporaryDirectory dir;
    for (const auto& [name, grid] :
         {std::pair{"lap2D_5pt_n100", "100x100"}, std::pair{"lap3D_7pt_n20", "20x20x20"}}) {
        int exit_code = -1;
        const auto j =
            solve_json(matrices + name + ".mtx --backend cpu --grid " + grid, dir, &exit_code);
        EXPECT_EQ(exit_code, 0) << name;
        EXPECT_EQ(j["preconditioner"], "multigrid") << name;
        EXPECT_NE(
            j["reason"].get<std::string>().find("the rows are the " + std::string(grid) + " box"),
            std::string::npos)
            << j["reason"];
        EXPECT_LE(j["iterations"].get<int>(), 12) << name;
        // The hierarchy is reported: its finest level is the box.
        EXPECT_NE(j["multigrid"].get<std::string>().find("levels: " + std::string(grid) + " -> "),
                  std::string::npos)
            << j["multigrid"];
        EXPECT_LE(j["relative_residual"].get<double>(), 1e-8) << name;
    }
    // Without --grid the same matrix gets plain CG (constant coefficients: Jacobi would only
    // scale).
    int exit_code = -1;
    const auto j = solve_json(matrices + "lap2D_5pt_n100.mtx --backend cpu", dir, &exit_code);
    EXPECT_EQ(j["preconditioner"], "none");

    // A box that is not the matrix's rows is refused whatever the method (it was ignored
    // unless multigrid was chosen).
    for (const char* method : {"", " --solver cg", " --solver jacobi", " --precond multigrid"}) {
        for (const char* grid : {"100x99", "7x7"}) {
            SCOPED_TRACE(std::string(grid) + method);
            const auto refused = run_simrun(
                "solve " + matrices + "lap2D_5pt_n100.mtx --grid " + grid + method, dir.path());
            EXPECT_EQ(refused.exit_code, 2);
            const solvers::GridBox box = solvers::parse_grid_box(grid);
            EXPECT_NE(refused.err.find("--grid " + std::string(grid) + " has " +
                                       std::to_string(box.size()) +
                                       " points, but the matrix has 10000 rows"),
                      std::string::npos)
                << refused.err;
            EXPECT_TRUE(refused.out.empty()) << refused.out;
        }
    }
    auto result = run_simrun("solve " + matrices + "lap2D_5pt_n100.mtx --grid 100x99", dir.path());
    result = run_simrun("solve " + matrices + "lap2D_5pt_n100.mtx --grid 100xten", dir.path());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("'ten' is not a whole number"), std::string::npos) << result.err;
    // Rows that are not the box's points (a 50x200 reading of a 100x100 grid).
    result = run_simrun(
        "solve " + matrices + "lap2D_5pt_n100.mtx --grid 50x200 --precond multigrid", dir.path());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("not its neighbour in the 50x200 box"), std::string::npos)
        << result.err;
    result = run_simrun("solve " + matrices + "nos3.mtx --precond multigrid", dir.path());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("multigrid needs the box the rows come from"), std::string::npos)
        << result.err;
}

TEST(SolveCommand, BadInputExitsTwoWithTheLine) {
    TemporaryDirectory dir;
    dir.write("bad.mtx",
              "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 4.0\n4 2 1.0\n");
    auto result = run_simrun("solve bad.mtx", dir.path());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("bad.mtx:4"), std::string::npos) << result.err;

    result = run_simrun("solve " + matrices + "nos3.mtx --solver pcg --precond none", dir.path());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("pcg"), std::string::npos) << result.err;

    result = run_simrun("solve " + matrices + "nos3.mtx --solver minres", dir.path());
    EXPECT_EQ(result.exit_code, 2);

    result = run_simrun("solve " + matrices + "nos3.mtx --solver gmres --restart-length 129",
                        dir.path());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("--restart-length must be in [1, 128], got 129"), std::string::npos)
        << result.err;

    // Enum options take exactly the words of their one list.
    result = run_simrun("solve " + matrices + "nos3.mtx --precision quad", dir.path());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("--precision: quad not in {double,float}"), std::string::npos)
        << result.err;
    result = run_simrun("solve " + matrices + "nos3.mtx --backend 1", dir.path());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("--backend: 1 not in {auto,cpu,cuda}"), std::string::npos)
        << result.err;

    result = run_simrun("solve " + matrices + "tols1090.mtx --precond jacobi", dir.path());
    EXPECT_EQ(result.exit_code, 2);  // tols1090 has zero diagonal entries
    EXPECT_NE(result.err.find("zero diagonal"), std::string::npos) << result.err;
    // ILU(0) takes it (elimination fills those pivots), BiCG does not take ILU(0) (M != M^T).
    result =
        run_simrun("solve " + matrices + "tols1090.mtx --solver gmres --precond ilu0", dir.path());
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("pivots shifted to sqrt(eps)"), std::string::npos) << result.out;
    result =
        run_simrun("solve " + matrices + "pde900.mtx --solver bicg --precond ilu0", dir.path());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("none or jacobi, not ilu0"), std::string::npos) << result.err;

    dir.write("b.mtx", "%%MatrixMarket matrix array real general\n2 1\n1.0\n2.0\n");
    result = run_simrun("solve " + matrices + "nos3.mtx --rhs b.mtx", dir.path());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("960"), std::string::npos) << result.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "x.mtx"));
}

}  // namespace
}  // namespace simrun

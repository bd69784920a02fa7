// Matrix analysis and the automatic choice of solver, with its reason.
#include "simrun/solvers/solver_selection.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "simrun/solvers/matrix_properties.hpp"

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

TEST(SolverSelection, AutoPicksJacobiCgWithAReason) {
    const auto d = select_solver(analyze(tridiagonal(10, -1, 3, -1)), {});
    EXPECT_EQ(d.method, Method::cg);
    EXPECT_EQ(d.preconditioner, PreconditionerKind::jacobi);
    EXPECT_NE(d.reason.find("cg + jacobi"), std::string::npos);
    EXPECT_NE(d.reason.find("symmetric"), std::string::npos);
    EXPECT_NE(d.reason.find("SPD"), std::string::npos);
}

TEST(SolverSelection, NamedChoicesAreHonouredAndSaidSo) {
    const auto d = select_solver(analyze(tridiagonal(10, -1, 3, -1)), {"cg", "none"});
    EXPECT_EQ(d.preconditioner, PreconditionerKind::none);
    EXPECT_NE(d.reason.find("named by the user"), std::string::npos);
}

TEST(SolverSelection, RefusesWhatItCannotSolve) {
    EXPECT_THROW(select_solver(analyze(tridiagonal(10, -2, 3, -1)), {}), std::invalid_argument);
    EXPECT_THROW(select_solver(analyze(tridiagonal(10, -1, 3, -1)), {"gmres", "auto"}),
                 std::invalid_argument);
    EXPECT_THROW(select_solver(analyze(tridiagonal(10, -1, 3, -1)), {"auto", "ilu"}),
                 std::invalid_argument);
}

}  // namespace
}  // namespace simrun::solvers

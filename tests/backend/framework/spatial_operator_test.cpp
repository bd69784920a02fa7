// The spatial operator with boundary conditions folded in, checked against what the mathematics
// fixes: second-order differences and the ghost-node conditions are exact on quadratics, the
// scaled system is symmetric, Dirichlet rows are identities, and the explicit stability limit.
#include "simrun/framework/discretisation/spatial_operator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/discretisation/boundary_conditions.hpp"
#include "simrun/framework/discretisation/expression.hpp"
#include "simrun/framework/discretisation/grid_sampling.hpp"
#include "simrun/framework/discretisation/stencil.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"

namespace simrun::framework {
namespace {

BoundaryConditions boundary_from(const std::string& toml, const Grid& grid) {
    const Config config = Config::from_string(toml, "test.toml");
    return BoundaryConditions::from_config(config.section("boundary"), grid);
}

StencilFunction constant_diffusion(const Grid& grid, double alpha) {
    const auto spacing = grid.spacing();
    const auto s = diffusion_stencil(alpha, spacing.data(), grid.dimension());
    return [s](std::int64_t, std::int64_t, std::int64_t) { return s; };
}

// y = L u + boundary forcing at every node (CPU back-end).
std::vector<double> apply_with_forcing(const SpatialOperator& op, const std::vector<double>& u) {
    auto cpu = solvers::make_cpu_backend();
    const solvers::DiaMatrix<double> m(cpu, op.matrix());
    const auto x = solvers::Array<double>::from_host(cpu, u);
    solvers::Array<double> y(cpu, u.size());
    m.apply(x, y);
    std::vector<double> result = y.to_host();
    op.add_boundary_forcing(0.0, result);
    return result;
}

template <typename F>
std::vector<double> nodal(const Grid& grid, F f) {
    std::vector<double> u(static_cast<std::size_t>(grid.num_points()));
    for (std::int64_t k = 0; k < grid.points(2); ++k)
        for (std::int64_t j = 0; j < grid.points(1); ++j)
            for (std::int64_t i = 0; i < grid.points(0); ++i)
                u[static_cast<std::size_t>(grid.index(i, j, k))] =
                    f(grid.coordinate(0, i), grid.coordinate(1, j), grid.coordinate(2, k));
    return u;
}

TEST(DiffusionStencil, CoefficientsOfTheCentralLaplacian) {
    const double spacing[3] = {0.5, 0.25, 0.1};
    const auto s2 = diffusion_stencil(2.0, spacing, 2);
    EXPECT_DOUBLE_EQ(s2.minus[0], 8.0);
    EXPECT_DOUBLE_EQ(s2.plus[1], 32.0);
    EXPECT_DOUBLE_EQ(s2.centre, -80.0);
    EXPECT_DOUBLE_EQ(s2.plus[2], 0.0);
}

TEST(SpatialOperator, DirichletRowsAreEmptyAndFreeRowsExactOnQuadratics) {
    for (int dimension : {2, 3}) {
        const Grid grid(dimension, {7, 6, 5}, {0.0, -1.0, 0.5}, {1.0, 2.0, 1.5});
        const auto bc = boundary_from("[boundary]\nall = \"0\"\n", grid);
        const SpatialOperator op(grid, constant_diffusion(grid, 0.3), bc);
        EXPECT_EQ(op.matrix().num_diagonals(), 2 * dimension + 1);
        const auto u = nodal(grid, [&](double x, double y, double z) {
            return x * x + 2 * y * y + (dimension == 3 ? 3 * z * z : 0.0);
        });
        const auto lu = apply_with_forcing(op, u);
        const double expected = 0.3 * (dimension == 3 ? 12.0 : 6.0);
        for (std::size_t i = 0; i < lu.size(); ++i) {
            if (op.dirichlet()[i]) {
                EXPECT_EQ(lu[i], 0.0);
            } else {
                EXPECT_NEAR(lu[i], expected, 1e-9);
            }
        }
    }
}

// The Dirichlet coupling kept at assembly is L G bit for bit (as the DIA SpMV sums it), also
// once L is released for the system matrix; the assembly on several threads calls a stencil
// that evaluates an expression, and the parallel sampling matches a serial loop.
TEST(SpatialOperator, DirichletCouplingIsLTimesGAndSurvivesTheRelease) {
    for (int dimension : {2, 3}) {
        const Grid grid(dimension, {9, 8, 7}, {0.0, -1.0, 0.5}, {1.0, 2.0, 1.5});
        const auto bc = boundary_from(
            "[boundary]\nall = \"1 + x*y - z\"\nright = { type = \"neumann\", value = \"y\" }\n",
            grid);
        const Expression k("1 + x*x + y", "problem.k");
        SpatialOperator op(
            grid,
            [&](std::int64_t i, std::int64_t j, std::int64_t l) {
                const auto spacing = grid.spacing();
                auto s = diffusion_stencil(1.0, spacing.data(), dimension);
                s.plus[0] *=
                    k(grid.coordinate(0, i), grid.coordinate(1, j), grid.coordinate(2, l), 0.0);
                return s;
            },
            bc);
        std::vector<double> g(static_cast<std::size_t>(grid.num_points()), 0.0);
        bc.fill_dirichlet(grid, 0.0, g);
        auto cpu = solvers::make_cpu_backend();
        const solvers::DiaMatrix<double> l(cpu, op.matrix());
        solvers::Array<double> lg_spmv(cpu, g.size());
        l.apply(solvers::Array<double>::from_host(cpu, g), lg_spmv);
        const std::vector<double> expected = lg_spmv.to_host();
        EXPECT_GT(std::count_if(expected.begin(), expected.end(), [](double v) { return v != 0; }),
                  0);
        std::vector<double> lg(g.size(), -1.0);
        op.dirichlet_coupling(g, lg);
        EXPECT_EQ(lg, expected);
        const solvers::DiaData<double> system = system_matrix(op, 1.0, 0.5);
        EXPECT_EQ(release_system_matrix(op, 1.0, 0.5).values, system.values);
        EXPECT_EQ(op.matrix().n, 0);
        std::fill(lg.begin(), lg.end(), -1.0);
        op.dirichlet_coupling(g, lg);
        EXPECT_EQ(lg, expected);

        // The stencil's k at each node, as a serial loop gives it.
        std::vector<double> sampled(g.size());
        sample(grid, k, 0.0, sampled);
        const auto serial =
            nodal(grid, [&](double x, double y, double z) { return k(x, y, z, 0.0); });
        EXPECT_EQ(sampled, serial);
    }
}

TEST(SpatialOperator, NeumannGhostFoldingIsExactOnQuadratics) {
    // u = x^2 + 2 y^2 on [0,1]^2, du/dn given exactly on every side: L u + forcing = alpha * 6
    // at every node, corners included.
    const Grid grid(2, {9, 7, 1}, {0, 0, 0}, {1, 1, 0});
    const auto bc = boundary_from(R"toml([boundary]
left = { type = "neumann", value = "0" }
right = { type = "neumann", value = "2" }
bottom = { type = "neumann", value = "0" }
top = { type = "neumann", value = "4" }
)toml",
                                  grid);
    const SpatialOperator op(grid, constant_diffusion(grid, 0.5), bc);
    const auto lu = apply_with_forcing(
        op, nodal(grid, [](double x, double y, double) { return x * x + 2 * y * y; }));
    for (double v : lu) EXPECT_NEAR(v, 3.0, 1e-9);
    EXPECT_DOUBLE_EQ(op.row_scale()[static_cast<std::size_t>(grid.index(0, 0))], 0.25);
    EXPECT_DOUBLE_EQ(op.row_scale()[static_cast<std::size_t>(grid.index(0, 3))], 0.5);
    EXPECT_DOUBLE_EQ(op.row_scale()[static_cast<std::size_t>(grid.index(4, 3))], 1.0);
}

TEST(SpatialOperator, RobinGhostFoldingIsExactOnQuadratics) {
    // u = 1 + x^2: on the left du/dn + 2 u = -u_x + 2 u = 2 (1 + 0) = 2 at x = 0; on the right
    // u_x + 2 u = 2 + 4 = 6 at x = 1. Top and bottom: du/dn = 0.
    const Grid grid(2, {11, 5, 1}, {0, 0, 0}, {1, 1, 0});
    const auto bc = boundary_from(R"toml([boundary]
left = { type = "robin", coefficient = 2.0, value = "2" }
right = { type = "robin", coefficient = 2.0, value = "6" }
all = { type = "neumann", value = "0" }
)toml",
                                  grid);
    const SpatialOperator op(grid, constant_diffusion(grid, 1.0), bc);
    const auto lu =
        apply_with_forcing(op, nodal(grid, [](double x, double, double) { return 1 + x * x; }));
    for (double v : lu) EXPECT_NEAR(v, 2.0, 1e-8);
}

TEST(SpatialOperator, ScaledSystemIsSymmetricWithIdentityDirichletRows) {
    const Grid grid(2, {8, 6, 1}, {0, 0, 0}, {1, 1, 0});
    const auto bc = boundary_from(R"toml([boundary]
left = "sin(y)"
right = { type = "neumann", value = "1" }
bottom = { type = "robin", coefficient = 3.0, value = "0" }
top = "0"
)toml",
                                  grid);
    const SpatialOperator op(grid, constant_diffusion(grid, 2.0), bc);
    const auto m = system_matrix(op, 1.0, 0.01);
    const auto properties = solvers::analyze(m);
    EXPECT_TRUE(properties.symmetric) << properties.asymmetry;
    EXPECT_TRUE(properties.positive_diagonal);
    const int centre = m.find_diagonal(0);
    for (std::int64_t j = 0; j < 6; ++j) {
        const std::int64_t row = grid.index(0, j);  // left side: Dirichlet
        EXPECT_EQ(m.at(centre, row), 1.0);
        for (int d = 0; d < m.num_diagonals(); ++d) {
            if (d != centre) {
                EXPECT_EQ(m.at(d, row), 0.0);
            }
        }
    }
    // Without the row scale the Neumann rows would couple twice as strongly inward.
    const auto unscaled = solvers::analyze(op.matrix());
    EXPECT_FALSE(unscaled.symmetric);
}

TEST(SpatialOperator, ExplicitStabilityLimitOfTheHeatEquation) {
    // 2D diffusion: the largest eigenvalue of -L is 8 alpha / h^2, so dt <= h^2 / (4 alpha).
    const Grid grid(2, {21, 21, 1}, {0, 0, 0}, {1, 1, 0});
    const auto bc = boundary_from("[boundary]\nall = \"0\"\n", grid);
    const SpatialOperator op(grid, constant_diffusion(grid, 0.1), bc);
    const double h = 0.05;
    EXPECT_NEAR(op.largest_stable_explicit_step(), h * h / (4 * 0.1), 1e-15);
}

// Central convection-diffusion, u_t = eps lap(u) - v u_x, at cell Peclet |v| h / (2 eps) = 5:
// the row sums bound stability no more (the eigenvalues are complex).
StencilFunction central_convection(const Grid& grid, double eps, double v) {
    const auto spacing = grid.spacing();
    auto s = diffusion_stencil(eps, spacing.data(), grid.dimension());
    s.minus[0] += v / (2 * spacing[0]);
    s.plus[0] -= v / (2 * spacing[0]);
    return [s](std::int64_t, std::int64_t, std::int64_t) { return s; };
}

// max ||u_k||_2 / ||u_0||_2 over `steps` explicit Euler steps u <- free .* (u + dt L u), from a
// bump, with zero boundary values and no source.
double largest_growth(const SpatialOperator& op, double dt, int steps) {
    const auto& l = op.matrix();
    const auto& fixed = op.dirichlet();
    std::vector<double> u(static_cast<std::size_t>(l.n)), next(u.size());
    for (std::size_t i = 0; i < u.size(); ++i) {
        u[i] = fixed[i] ? 0.0 : std::sin(0.37 * static_cast<double>(i)) + 1.0;
    }
    const auto norm = [](const std::vector<double>& x) {
        double sum = 0;
        for (double v : x) sum += v * v;
        return std::sqrt(sum);
    };
    const double initial = norm(u);
    double largest = 1.0;
    for (int step = 0; step < steps && largest < 1e6; ++step) {
        for (std::int64_t i = 0; i < l.n; ++i) {
            double lu = 0;
            for (int d = 0; d < l.num_diagonals(); ++d) {
                const std::int64_t j = i + l.offsets[static_cast<std::size_t>(d)];
                if (j >= 0 && j < l.n) lu += l.at(d, i) * u[static_cast<std::size_t>(j)];
            }
            const auto r = static_cast<std::size_t>(i);
            next[r] = fixed[r] ? 0.0 : u[r] + dt * lu;
        }
        std::swap(u, next);
        largest = std::max(largest, norm(u) / initial);
    }
    return largest;
}

TEST(SpatialOperator, ExplicitStabilityLimitOfCentralConvectionIsTheVonNeumannLimit) {
    const Grid grid(2, {41, 41, 1}, {0, 0, 0}, {1, 1, 0});
    const double h = 1.0 / 40, eps = 0.01, v = 5 * 2 * eps / h;  // cell Peclet 5
    const auto bc = boundary_from("[boundary]\nall = \"0\"\n", grid);
    const SpatialOperator op(grid, central_convection(grid, eps, v), bc);
    const double limit = op.largest_stable_explicit_step();

    // Von Neumann: the symbol lambda(theta) of L; |1 + dt lambda| <= 1 for every theta
    // iff dt <= -2 Re(lambda) / |lambda|^2, minimised over a fine grid of angles.
    const double w = eps / (h * h), a = v / (2 * h);
    double von_neumann = std::numeric_limits<double>::infinity();
    const double pi = std::acos(-1.0);
    for (int p = 1; p <= 4000; ++p) {
        for (int q = 0; q <= 100; ++q) {
            const double tx = pi * p / 4000, ty = pi * q / 100;
            const double re = 2 * w * (std::cos(tx) - 1) + 2 * w * (std::cos(ty) - 1);
            const double im = -2 * a * std::sin(tx);
            von_neumann = std::min(von_neumann, -2 * re / (re * re + im * im));
        }
    }
    EXPECT_NEAR(limit / von_neumann, 1.0, 2e-3) << limit << " vs " << von_neumann;

    // The bound on the row sums (the old limit) is far larger here and grows without bound;
    // at the proved limit the power bound ||G^k|| <= 2 holds.
    double row_sum = 0;
    for (std::int64_t i = 0; i < op.matrix().n; ++i) {
        if (op.dirichlet()[static_cast<std::size_t>(i)]) continue;
        double sum = 0;
        for (int d = 0; d < op.matrix().num_diagonals(); ++d) sum += std::abs(op.matrix().at(d, i));
        row_sum = std::max(row_sum, sum);
    }
    EXPECT_GT(2.0 / row_sum, 2 * limit);
    EXPECT_GT(largest_growth(op, 2.0 / row_sum, 3000), 1e6);
    EXPECT_LE(largest_growth(op, limit, 3000), 2.0);
}

TEST(BoundaryConditions, ParsesFormsAndRejectsBadOnes) {
    const Grid grid(2, {5, 5, 1}, {0, 0, 0}, {1, 1, 0});
    const auto bc = boundary_from(R"toml([boundary]
left = "1 + y"
right = { type = "neumann", value = "t" }
all = { type = "robin", coefficient = 0.5, value = "0" }
)toml",
                                  grid);
    EXPECT_EQ(bc.side(Side::left).type, BoundaryType::dirichlet);
    EXPECT_EQ(bc.side(Side::right).type, BoundaryType::neumann);
    EXPECT_EQ(bc.side(Side::top).type, BoundaryType::robin);
    EXPECT_DOUBLE_EQ(bc.side(Side::bottom).coefficient, 0.5);
    EXPECT_TRUE(bc.depends_on_time());
    std::vector<double> u(25, 7.0);
    bc.fill_dirichlet(grid, 0.0, u);
    EXPECT_DOUBLE_EQ(u[static_cast<std::size_t>(grid.index(0, 2))], 1.5);
    EXPECT_DOUBLE_EQ(u[static_cast<std::size_t>(grid.index(2, 2))], 7.0);
    EXPECT_DOUBLE_EQ(u[static_cast<std::size_t>(grid.index(4, 2))], 7.0);  // Neumann side

    auto expect_error = [&](const std::string& toml, const std::string& part) {
        try {
            boundary_from(toml, grid);
            ADD_FAILURE() << "no error for " << toml;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        }
    };
    expect_error("[boundary]\nall = { type = \"periodic\", value = \"0\" }\n", "periodic");
    expect_error("[boundary]\nall = { type = \"robin\", value = \"0\" }\n", "coefficient");
    expect_error("[boundary]\nleft = \"0\"\n", "right");
    expect_error("[boundary]\nall = \"0\"\nfront = \"1\"\n", "2D");
}

// Assembled straight as the system matrix (SystemForm), the operator gives what the system
// matrix made from its L gives, bit for bit (rows of every kind: Dirichlet, folded Neumann and
// Robin, inner, and a box's faces where the grid goes on), with the same terms, and the same
// error where the step overflows.
TEST(SpatialOperator, AssembledAsTheSystemMatrixEqualsTheOneMadeFromL) {
    const auto check = [](const Grid& grid, const Box& box, const BoundaryConditions& bc) {
        const auto spacing = grid.spacing();
        const auto varying = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
            auto s = diffusion_stencil(0.7, spacing.data(), grid.dimension());
            s.minus[0] *= 1.0 + 0.1 * static_cast<double>(i + 2 * j + 3 * k);
            s.plus[1] -= 0.3 * static_cast<double>(j);  // nonsymmetric
            s.centre -= 0.01 * static_cast<double>(k);
            return s;
        };
        const StencilFunction as_function = varying;
        for (const auto& [shift, scale] : {std::pair{0.0, 1.0}, std::pair{1.0, 0.37}}) {
            SpatialOperator from_l(grid, as_function, bc, box);
            const SpatialOperator copy_from(grid, as_function, bc, box);
            SpatialOperator straight(grid, varying, bc, box, SystemForm{shift, scale});
            EXPECT_EQ(straight.matrix().n, 0);
            const auto expected = release_system_matrix(from_l, shift, scale);
            EXPECT_EQ(system_matrix(copy_from, shift, scale).values, expected.values);
            EXPECT_EQ(straight.row_scale(), from_l.row_scale());
            EXPECT_EQ(straight.dirichlet(), from_l.dirichlet());
            ASSERT_EQ(straight.couplings().size(), from_l.couplings().size());
            for (std::size_t c = 0; c < from_l.couplings().size(); ++c) {
                EXPECT_EQ(straight.couplings()[c].row, from_l.couplings()[c].row);
                EXPECT_EQ(straight.couplings()[c].column, from_l.couplings()[c].column);
                EXPECT_EQ(straight.couplings()[c].value, from_l.couplings()[c].value);
            }
            ASSERT_EQ(straight.ghost_terms().size(), from_l.ghost_terms().size());
            for (std::size_t g = 0; g < from_l.ghost_terms().size(); ++g) {
                EXPECT_EQ(straight.ghost_terms()[g].node, from_l.ghost_terms()[g].node);
                EXPECT_EQ(straight.ghost_terms()[g].weight, from_l.ghost_terms()[g].weight);
            }
            EXPECT_THROW(release_system_matrix(straight, shift, 2.0 * scale), std::logic_error);
            const auto got = release_system_matrix(straight, shift, scale);
            EXPECT_EQ(got.offsets, expected.offsets);
            EXPECT_EQ(got.values, expected.values);
        }
        // A step whose matrix overflows: the same message, from the same call.
        // (The message of release_system_matrix's InputError, empty where none.)
        const auto refusal = [](SpatialOperator& op, double scale) {
            try {
                release_system_matrix(op, 1.0, scale);
            } catch (const InputError& e) {
                return std::string(e.what());
            }
            return std::string();
        };
        SpatialOperator from_l(grid, as_function, bc, box);
        SpatialOperator straight(grid, varying, bc, box, SystemForm{1.0, 1e308});
        const std::string expected = refusal(from_l, 1e308);
        EXPECT_NE(expected.find("time.dt"), std::string::npos) << expected;
        EXPECT_EQ(refusal(straight, 1e308), expected);
        // A step that overflows at one inner node alone (its coupling 1e300 times larger): named
        // there on both paths.
        const auto peaked = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
            auto s = varying(i, j, k);
            if (i == 4 && j == 3 && k == box.lower[2]) s.minus[0] *= 1e300;
            return s;
        };
        const StencilFunction peaked_function = peaked;
        SpatialOperator peaked_l(grid, peaked_function, bc, box);
        SpatialOperator peaked_straight(grid, peaked, bc, box, SystemForm{1.0, 1e10});
        const std::string at_the_peak = refusal(peaked_l, 1e10);
        EXPECT_NE(at_the_peak.find("time.dt"), std::string::npos) << at_the_peak;
        EXPECT_EQ(refusal(peaked_straight, 1e10), at_the_peak);
    };
    const Grid plane(2, {9, 7, 1}, {0, 0, 0}, {1, 2, 0});
    const auto mixed = boundary_from(
        "[boundary]\nleft = \"0\"\nright = { type = \"neumann\", value = \"1\" }\n"
        "bottom = { type = \"robin\", coefficient = 2.0, value = \"x\" }\ntop = \"y\"\n",
        plane);
    check(plane, plane.box(), mixed);
    check(plane, Box{{0, 2, 0}, {9, 6, 1}}, mixed);  // rows of a box: faces inside the grid
    check(plane, Box{{3, 0, 0}, {8, 7, 1}}, mixed);
    const Grid cube(3, {6, 7, 8}, {0, 0, 0}, {1, 1, 1});
    const auto sides = boundary_from(
        "[boundary]\nall = \"0\"\nfront = { type = \"neumann\", value = \"0\" }\n"
        "right = { type = \"robin\", coefficient = 1.5, value = \"1\" }\n",
        cube);
    check(cube, cube.box(), sides);
    check(cube, Box{{1, 0, 2}, {6, 7, 6}}, sides);
}

}  // namespace
}  // namespace simrun::framework

// Assembly of the diffusion operator into DIA and the Dirichlet elimination, checked against
// properties the mathematics fixes: exactness on quadratics, symmetry, identity boundary rows.
#include "simrun/framework/stencil_assembly.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "simrun/framework/dirichlet_boundary.hpp"
#include "simrun/framework/stencil.hpp"
#include "simrun/solvers/dia_matrix.hpp"
#include "simrun/solvers/matrix_properties.hpp"

namespace simrun::framework {
namespace {

solvers::DiaData<double> diffusion(const Grid& grid, double alpha) {
    const auto spacing = grid.spacing();
    const auto s = diffusion_stencil(alpha, spacing.data(), grid.dimension());
    return assemble_stencil_operator(grid,
                                     [&](std::int64_t, std::int64_t, std::int64_t) { return s; });
}

// y = A x on the CPU back-end.
std::vector<double> multiply_on_cpu(const solvers::DiaData<double>& a,
                                    const std::vector<double>& x) {
    auto cpu = solvers::make_cpu_backend();
    const solvers::DiaMatrix<double> m(cpu, a);
    const auto xs = solvers::Array<double>::from_host(cpu, x);
    solvers::Array<double> y(cpu, x.size());
    m.apply(xs, y);
    return y.to_host();
}

TEST(DiffusionStencil, CoefficientsOfTheCentralLaplacian) {
    const double spacing[3] = {0.5, 0.25, 0.1};
    const auto s2 = diffusion_stencil(2.0, spacing, 2);
    EXPECT_DOUBLE_EQ(s2.minus[0], 8.0);
    EXPECT_DOUBLE_EQ(s2.plus[1], 32.0);
    EXPECT_DOUBLE_EQ(s2.centre, -80.0);
    EXPECT_DOUBLE_EQ(s2.plus[2], 0.0);
    const auto s3 = diffusion_stencil(1.0, spacing, 3);
    EXPECT_DOUBLE_EQ(s3.centre, -2.0 * (4.0 + 16.0 + 100.0));
}

TEST(StencilAssembly, ExactOnQuadraticsIn2DAnd3D) {
    // Central differences are exact for quadratics: alpha lap(x^2 + 2 y^2 + 3 z^2) =
    // alpha (2 + 4 + 6 [3D]).
    for (int dimension : {2, 3}) {
        const Grid grid(dimension, {7, 6, 5}, {0.0, -1.0, 0.5}, {1.0, 2.0, 1.5});
        const double alpha = 0.3;
        const auto a = diffusion(grid, alpha);
        EXPECT_EQ(a.num_diagonals(), 2 * dimension + 1);
        std::vector<double> u(static_cast<std::size_t>(grid.num_points()));
        for (std::int64_t k = 0; k < grid.points(2); ++k)
            for (std::int64_t j = 0; j < grid.points(1); ++j)
                for (std::int64_t i = 0; i < grid.points(0); ++i) {
                    const double x = grid.coordinate(0, i), y = grid.coordinate(1, j),
                                 z = grid.coordinate(2, k);
                    u[static_cast<std::size_t>(grid.index(i, j, k))] =
                        x * x + 2 * y * y + (dimension == 3 ? 3 * z * z : 0.0);
                }
        const auto lu = multiply_on_cpu(a, u);
        const double expected = alpha * (dimension == 3 ? 12.0 : 6.0);
        for (std::int64_t k = 0; k < grid.points(2); ++k)
            for (std::int64_t j = 0; j < grid.points(1); ++j)
                for (std::int64_t i = 0; i < grid.points(0); ++i) {
                    const double value = lu[static_cast<std::size_t>(grid.index(i, j, k))];
                    if (grid.is_boundary(i, j, k)) {
                        EXPECT_EQ(value, 0.0);  // boundary rows are left to the boundary machinery
                    } else {
                        EXPECT_NEAR(value, expected, 1e-9) << i << "," << j << "," << k;
                    }
                }
    }
}

TEST(DirichletElimination, IdentityBoundaryRowsAndSymmetricSpdMatrix) {
    const Grid grid(2, {6, 5, 1}, {0, 0, 0}, {1, 1, 1});
    const auto l = diffusion(grid, 1.5);
    const double dt = 0.01;
    const auto m = eliminate_dirichlet(grid, l, 1.0, dt);
    const auto properties = solvers::analyze(m);
    EXPECT_TRUE(properties.symmetric);
    EXPECT_TRUE(properties.positive_diagonal);
    EXPECT_TRUE(properties.strictly_dominant);  // identity rows and 1 + dt * 4 alpha / h^2 rows
    const int centre = m.find_diagonal(0);
    for (std::int64_t j = 0; j < 5; ++j)
        for (std::int64_t i = 0; i < 6; ++i) {
            const std::int64_t row = grid.index(i, j);
            double off = 0;
            for (int d = 0; d < m.num_diagonals(); ++d) {
                if (d != centre) off += std::abs(m.at(d, row));
            }
            if (grid.is_boundary(i, j)) {
                EXPECT_EQ(m.at(centre, row), 1.0);
                EXPECT_EQ(off, 0.0);
            } else {
                EXPECT_DOUBLE_EQ(m.at(centre, row), 1.0 - dt * l.at(centre, row));
            }
        }
    // A row next to the left boundary lost its coupling to the boundary node.
    EXPECT_EQ(m.at(m.find_diagonal(-1), grid.index(1, 2)), 0.0);
    EXPECT_DOUBLE_EQ(m.at(m.find_diagonal(1), grid.index(1, 2)),
                     -dt * l.at(l.find_diagonal(1), grid.index(1, 2)));
}

TEST(DirichletBoundary, FillsEachSideAndLeavesInteriorAlone) {
    const Grid grid(2, {5, 4, 1}, {0, 0, 0}, {1, 3, 1});
    std::array<std::optional<Expression>, 6> values;
    values[0].emplace("1 + y", "boundary.left");
    values[1].emplace("2*t", "boundary.right");
    values[2].emplace("10 + x", "boundary.bottom");
    values[3].emplace("-x", "boundary.top");
    const DirichletBoundary boundary(values);
    EXPECT_TRUE(boundary.depends_on_time());
    std::vector<double> u(20, 42.0);
    boundary.fill(grid, 0.5, u);
    EXPECT_DOUBLE_EQ(u[static_cast<std::size_t>(grid.index(0, 1))], 2.0);   // left, y = 1
    EXPECT_DOUBLE_EQ(u[static_cast<std::size_t>(grid.index(4, 2))], 1.0);   // right, 2 t
    EXPECT_DOUBLE_EQ(u[static_cast<std::size_t>(grid.index(2, 0))], 10.5);  // bottom, x = 0.5
    EXPECT_DOUBLE_EQ(u[static_cast<std::size_t>(grid.index(2, 3))], -0.5);  // top
    EXPECT_DOUBLE_EQ(u[static_cast<std::size_t>(grid.index(0, 0))], 10.0);  // corner: bottom wins
    EXPECT_DOUBLE_EQ(u[static_cast<std::size_t>(grid.index(2, 1))], 42.0);  // interior untouched
    const auto mask = interior_mask(grid);
    EXPECT_EQ(mask[static_cast<std::size_t>(grid.index(2, 1))], 1.0);
    EXPECT_EQ(mask[static_cast<std::size_t>(grid.index(4, 1))], 0.0);
}

}  // namespace
}  // namespace simrun::framework

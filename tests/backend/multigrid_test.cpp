// Geometric multigrid on boxes: the transfers it builds (against the bilinear weights and the
// Galerkin operators derived by hand), and multigrid-preconditioned CG's iteration counts,
// which must not grow with the grid, for every kind of side, odd and unequal sizes, 3D, a
// coefficient jump and anisotropy. One source built per back-end: compiled with
// SIMRUN_TEST_ON_CUDA it runs on the GPU (and skips where there is none).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>

#include "base/kernel_table.hpp"
#include "multigrid/level_transfer.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/matrices/sparse_product.hpp"
#include "simrun/solvers/methods/conjugate_gradient.hpp"
#include "simrun/solvers/multigrid/multigrid_preconditioner.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"
#include "simrun/solvers/selection/solver_selection.hpp"
#include "support/random_data.hpp"
#include "support/test_backend.hpp"
#include "support/test_matrices.hpp"

namespace simrun::solvers {
namespace {

using testing::Side;

using testing::test_backend;

constexpr std::array<Side, 6> all_dirichlet = {Side::dirichlet, Side::dirichlet, Side::dirichlet,
                                               Side::dirichlet, Side::dirichlet, Side::dirichlet};
constexpr std::array<Side, 6> all_neumann = {Side::neumann, Side::neumann, Side::neumann,
                                             Side::neumann, Side::neumann, Side::neumann};
const auto unit_coefficient = [](double, double, double) { return 1.0; };

GridBox box_of(std::array<std::int32_t, 3> points, int dimension) {
    return {dimension, {points[0], points[1], points[2]}};
}

// The weight P(fine point, coarse point), 0 where P has no entry.
double p_entry(const CsrData<double>& p, std::int64_t fine, std::int64_t coarse) {
    for (std::int32_t k = p.row_ptr[fine]; k < p.row_ptr[fine + 1]; ++k) {
        if (p.col[k] == coarse) return p.values[static_cast<std::size_t>(k)];
    }
    return 0.0;
}

TEST(MultigridTransfer, ConstantCoefficientsWithDirichletSidesGiveBilinearWeights) {
    // 7 x 7 interior nodes: the coarse points are the odd ones (3 x 3), the ends are fine.
    const GridBox fine = box_of({7, 7, 1}, 2);
    const auto a = to_dia(testing::box_diffusion_matrix({7, 7, 1}, 2, {0.125, 0.125, 1},
                                                        unit_coefficient, all_dirichlet));
    EXPECT_TRUE(multigrid::check_box_couplings(a, fine));
    const auto coarsening = multigrid::choose_coarsening(a, fine);
    ASSERT_TRUE(coarsening.coarsens());
    EXPECT_EQ(coarsening.coarse.points[0], 3);
    EXPECT_EQ(coarsening.coarse.points[1], 3);
    EXPECT_EQ(coarsening.axes[0].first, 1);
    const auto p = multigrid::interpolation_matrix(
        multigrid::operator_interpolation(a, fine, coarsening), fine, coarsening);
    // Coarse (0, 0) lies on fine (1, 1); (1, 0) on fine (3, 1).
    EXPECT_DOUBLE_EQ(p_entry(p, fine.row(1, 1, 0), 0), 1.0);
    EXPECT_DOUBLE_EQ(p_entry(p, fine.row(2, 1, 0), 0), 0.5);  // between (1,1) and (3,1)
    EXPECT_DOUBLE_EQ(p_entry(p, fine.row(2, 1, 0), 1), 0.5);
    EXPECT_DOUBLE_EQ(p_entry(p, fine.row(0, 1, 0), 0), 0.5);   // the wall's zero beyond
    EXPECT_DOUBLE_EQ(p_entry(p, fine.row(2, 2, 0), 0), 0.25);  // cell centre: four corners
    EXPECT_DOUBLE_EQ(p_entry(p, fine.row(2, 2, 0), 4), 0.25);
    EXPECT_DOUBLE_EQ(p_entry(p, fine.row(0, 0, 0), 0), 0.25);
    // Each fine row's weights sum to the interpolated constant: 1 inside, 1/2 beside a wall,
    // 1/4 in a corner.
    for (std::int64_t f = 0; f < fine.size(); ++f) {
        double sum = 0;
        for (std::int32_t k = p.row_ptr[f]; k < p.row_ptr[f + 1]; ++k) sum += p.values[k];
        const auto c = fine.coordinates(f);
        const int walls = (c[0] == 0 || c[0] == 6 ? 1 : 0) + (c[1] == 0 || c[1] == 6 ? 1 : 0);
        EXPECT_DOUBLE_EQ(sum, walls == 0 ? 1.0 : walls == 1 ? 0.5 : 0.25) << "fine point " << f;
    }
}

// A constant-coefficient operator's interpolation takes a few weight sets (inner points, sides,
// corners): its classes hold every weight exactly, and the transfers give the same results
// with the classes as with the weights. Coefficients that vary from point to point take too
// many sets for classes.
TEST(MultigridTransfer, WeightClassesHoldTheWeightsOfConstantCoefficients) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const GridBox fine = box_of({41, 37, 1}, 2);
    const auto a = to_dia(testing::box_diffusion_matrix({41, 37, 1}, 2, {0.025, 0.027, 1},
                                                        unit_coefficient, all_dirichlet));
    const auto coarsening = multigrid::choose_coarsening(a, fine);
    const auto weights = multigrid::operator_interpolation(a, fine, coarsening);
    const std::int64_t nc = coarsening.coarse.size();
    const auto classes = multigrid::weight_classes(weights, nc, 9);
    ASSERT_TRUE(classes.has_value());
    // Dirichlet sides: the bilinear weights at every coarse point (the wall's zero beyond).
    EXPECT_EQ(classes->table.size(), std::size_t{max_transfer_slots});
    // Neumann sides keep their ends as coarse points, which interpolate only inwards: inner
    // points, 4 sides and 4 corners.
    const auto neumann = to_dia(testing::box_diffusion_matrix({41, 37, 1}, 2, {0.025, 0.027, 1},
                                                              unit_coefficient, all_neumann, 1.0));
    const auto n_coarsening = multigrid::choose_coarsening(neumann, fine);
    const auto n_classes =
        multigrid::weight_classes(multigrid::operator_interpolation(neumann, fine, n_coarsening),
                                  n_coarsening.coarse.size(), 9);
    ASSERT_TRUE(n_classes.has_value());
    EXPECT_EQ(n_classes->table.size(), std::size_t{9 * max_transfer_slots});
    for (std::int64_t i = 0; i < nc; ++i) {
        for (int slot = 0; slot < 9; ++slot) {
            ASSERT_EQ(classes->table[classes->of_point[i] * max_transfer_slots + slot],
                      weights[static_cast<std::size_t>(slot * nc + i)])
                << "coarse point " << i << ", slot " << slot;
        }
    }
    // The kernels with either layout.
    const auto backend = test_backend();
    const auto& k = backend->kernels<double>();
    const auto w = Array<double>::from_host(backend, weights);
    const auto of_point = Array<std::uint8_t>::from_host(backend, classes->of_point);
    const auto table = Array<double>::from_host(backend, classes->table);
    BoxTransferView<double> t{{2, {41, 37, 1}},
                              {2, {coarsening.coarse.points[0], coarsening.coarse.points[1], 1}},
                              {coarsening.axes[0].step, coarsening.axes[1].step, 1},
                              {coarsening.axes[0].first, coarsening.axes[1].first, 0},
                              w.data()};
    BoxTransferView<double> classed = t;
    classed.weights = nullptr;
    classed.weight_class = of_point.data();
    classed.class_weights = table.data();
    const auto fine_values = Array<double>::from_host(
        backend, testing::random_vector<double>(static_cast<std::size_t>(fine.size()), 5));
    const auto coarse_values = Array<double>::from_host(
        backend, testing::random_vector<double>(static_cast<std::size_t>(nc), 6));
    Array<double> r1(backend, static_cast<std::size_t>(nc)),
        r2(backend, static_cast<std::size_t>(nc));
    k.box_restrict(*backend, t, fine_values.data(), r1.data());
    k.box_restrict(*backend, classed, fine_values.data(), r2.data());
    EXPECT_EQ(r1.to_host(), r2.to_host());
    auto f1 = fine_values.clone();
    auto f2 = fine_values.clone();
    k.box_interpolate_add(*backend, t, coarse_values.data(), f1.data());
    k.box_interpolate_add(*backend, classed, coarse_values.data(), f2.data());
    EXPECT_EQ(f1.to_host(), f2.to_host());

    const auto varying = [](double x, double y, double) {
        return 1.0 + 0.5 * std::sin(37.0 * x) * std::cos(23.0 * y);
    };
    const auto b = to_dia(
        testing::box_diffusion_matrix({41, 37, 1}, 2, {0.025, 0.027, 1}, varying, all_dirichlet));
    const auto b_coarsening = multigrid::choose_coarsening(b, fine);
    EXPECT_FALSE(multigrid::weight_classes(multigrid::operator_interpolation(b, fine, b_coarsening),
                                           b_coarsening.coarse.size(), 9)
                     .has_value());
}

// The Galerkin levels of a constant-coefficient operator have a few kinds of rows: they are kept
// as row classes (a byte per row), the finest level as a stencil; variable coefficients keep
// their values.
TEST(MultigridHierarchy, ConstantCoefficientLevelsAreStencilsOrRowClasses) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    MultigridParameters parameters;
    parameters.coarsest_size = 16;
    const MultigridHierarchy<double> constant(test_backend(),
                                              testing::laplacian_2d_dirichlet_rows(65),
                                              box_of({65, 65, 1}, 2), parameters);
    ASSERT_GE(constant.levels().size(), 3u);
    EXPECT_EQ(constant.levels()[0].storage, DiaStorage::stencil);
    for (std::size_t l = 1; l + 1 < constant.levels().size(); ++l) {
        EXPECT_EQ(constant.levels()[l].storage, DiaStorage::classes) << "level " << l;
        EXPECT_EQ(constant.levels()[l].num_diagonals, 9);
    }
    const auto varying = [](double x, double y, double) {
        return 1.0 + 0.5 * std::sin(37.0 * x) * std::cos(23.0 * y);
    };
    const auto a = to_dia(testing::box_diffusion_matrix({65, 65, 1}, 2, {1.0 / 64, 1.0 / 64, 1},
                                                        varying, all_dirichlet));
    const MultigridHierarchy<double> variable(test_backend(), a, box_of({65, 65, 1}, 2),
                                              parameters);
    EXPECT_EQ(variable.levels()[0].storage, DiaStorage::general);
    EXPECT_EQ(variable.levels()[1].storage, DiaStorage::general);
}

// One colour swept on a part of the box only (box_colour_sweep_part: how a cycle over ranks
// mends the points next to its halo) gives, on the part, the bits of that colour swept on the
// whole box (a colour's update reads only the other colour), and leaves every other point as it
// was; planes, lines across x, an inner box and the whole, in 2D and 3D. A part beyond the box
// is refused, not swept.
TEST(MultigridKernels, AColourSweptOnAPartIsTheWholeSweepThere) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto backend = test_backend();
    const auto varying = [](double x, double y, double z) {
        return 1.0 + 0.5 * std::sin(7.0 * x + 3.0 * z) * std::cos(5.0 * y);
    };
    for (const auto& [points, dimension] :
         {std::pair<std::array<std::int32_t, 3>, int>{{17, 12, 1}, 2}, {{13, 9, 11}, 3}}) {
        SCOPED_TRACE(dimension);
        const auto a = to_dia(testing::box_diffusion_matrix(points, dimension, {0.1, 0.1, 0.1},
                                                            varying, all_dirichlet));
        const DiaMatrix<double> m(backend, a);
        const BoxShape box{dimension, {points[0], points[1], points[2]}};
        const std::int64_t nx = points[0], ny = points[1], nz = points[2];
        const std::int64_t last = dimension == 2 ? ny : nz;
        const auto planes = [&](std::int64_t first, std::int64_t count) {
            BoxRange range{{0, 0, 0}, {nx, ny, nz}};
            range.lower[dimension - 1] = first;
            range.upper[dimension - 1] = first + count;
            return range;
        };
        const std::vector<BoxRange> parts = {
            planes(0, 1),
            planes(3, 4),
            planes(last - 1, 1),
            planes(0, last),
            BoxRange{{0, 0, 0}, {1, ny, nz}},            // the first line across x
            BoxRange{{nx - 1, 1, 0}, {nx, ny - 1, nz}},  // the last, less its ends
            BoxRange{{2, 3, 0}, {nx - 4, ny - 2, dimension == 3 ? nz - 1 : 1}},  // inside
        };
        const auto b = testing::random_vector<double>(static_cast<std::size_t>(a.n), 31);
        const auto x = testing::random_vector<double>(static_cast<std::size_t>(a.n), 32);
        const auto& k = backend->kernels<double>();
        const int main = a.find_diagonal(0);
        const auto bb = Array<double>::from_host(backend, b);
        for (const int colour : {0, 1}) {
            auto whole = Array<double>::from_host(backend, x);
            k.box_colour_sweep(*backend, m.view(), main, box, 2, colour, bb.data(), whole.data());
            const std::vector<double> swept = whole.to_host();
            for (const BoxRange& part : parts) {
                auto in_part = Array<double>::from_host(backend, x);
                k.box_colour_sweep_part(*backend, m.view(), main, box, colour, part, bb.data(),
                                        in_part.data());
                const std::vector<double> got = in_part.to_host();
                for (std::int64_t i = 0; i < a.n; ++i) {
                    const std::int64_t c[3] = {i % nx, i / nx % ny, i / (nx * ny)};
                    bool inside = true;
                    for (int axis = 0; axis < 3; ++axis) {
                        inside =
                            inside && c[axis] >= part.lower[axis] && c[axis] < part.upper[axis];
                    }
                    const auto u = static_cast<std::size_t>(i);
                    ASSERT_EQ(got[u], inside ? swept[u] : x[u])
                        << "point " << i << ", colour " << colour << ", part [" << part.lower[0]
                        << ", " << part.upper[0] << ") x [" << part.lower[1] << ", "
                        << part.upper[1] << ") x [" << part.lower[2] << ", " << part.upper[2]
                        << ")";
                }
            }
        }
        auto x_device = Array<double>::from_host(backend, x);
        for (const BoxRange& beyond :
             {planes(last - 1, 2), planes(-1, 1), BoxRange{{0, 0, 0}, {nx + 1, 1, 1}}}) {
            EXPECT_THROW(k.box_colour_sweep_part(*backend, m.view(), main, box, 0, beyond,
                                                 bb.data(), x_device.data()),
                         std::invalid_argument);
        }
    }
}

TEST(MultigridTransfer, NeumannSidesKeepTheirEndsAndInterpolateConstantsExactly) {
    // 9 nodes per axis with no-flux sides: the ends are coarse (5 x 5) and P 1 = 1 everywhere.
    const GridBox fine = box_of({9, 9, 1}, 2);
    const auto a = to_dia(testing::box_diffusion_matrix({9, 9, 1}, 2, {0.1, 0.1, 1},
                                                        unit_coefficient, all_neumann, 1.0));
    const auto coarsening = multigrid::choose_coarsening(a, fine);
    EXPECT_EQ(coarsening.axes[0].first, 0);
    EXPECT_EQ(coarsening.axes[1].first, 0);
    EXPECT_EQ(coarsening.coarse.points[0], 5);
    // With the shift the weights are a little under the linear ones; without it, exact.
    const auto exact = to_dia(testing::box_diffusion_matrix({9, 9, 1}, 2, {0.1, 0.1, 1},
                                                            unit_coefficient, all_neumann, 0.0));
    const auto p = multigrid::interpolation_matrix(
        multigrid::operator_interpolation(exact, fine, coarsening), fine, coarsening);
    for (std::int64_t f = 0; f < fine.size(); ++f) {
        double sum = 0;
        for (std::int32_t k = p.row_ptr[f]; k < p.row_ptr[f + 1]; ++k) sum += p.values[k];
        EXPECT_NEAR(sum, 1.0, 1e-14) << "fine point " << f;
    }
}

TEST(MultigridTransfer, MixedSidesPutTheCoarsePointsWhereEachEndWantsThem) {
    // 8 nodes along x, Dirichlet at x = 0 and Neumann at the far end: coarse at 1, 3, 5, 7.
    const GridBox fine = box_of({8, 5, 1}, 2);
    const std::array<Side, 6> sides = {Side::dirichlet, Side::neumann,   Side::dirichlet,
                                       Side::dirichlet, Side::dirichlet, Side::dirichlet};
    const auto a =
        to_dia(testing::box_diffusion_matrix({8, 5, 1}, 2, {0.1, 0.1, 1}, unit_coefficient, sides));
    const auto coarsening = multigrid::choose_coarsening(a, fine);
    EXPECT_EQ(coarsening.axes[0].first, 1);
    EXPECT_EQ(coarsening.coarse.points[0], 4);
    EXPECT_EQ(coarsening.axes[1].first, 1);
    EXPECT_EQ(coarsening.coarse.points[1], 2);
}

TEST(MultigridTransfer, GalerkinOperatorOfTheLaplacianIsTheCoarseLaplacian) {
    // 1D: P^T tridiag(-1, 2, -1) P with linear P is tridiag(-1/2, 1, -1/2) on the coarse points
    // (the coarse Laplacian (1/(2h)^2) tridiag(-1, 2, -1) times h^2 2^2 / 2: R = P^T is twice
    // full weighting).
    const GridBox fine{1, {15, 1, 1}};
    const auto a = to_dia(
        testing::box_diffusion_matrix({15, 1, 1}, 1, {1, 1, 1}, unit_coefficient, all_dirichlet));
    const auto coarsening = multigrid::choose_coarsening(a, fine);
    ASSERT_EQ(coarsening.coarse.points[0], 7);
    const auto weights = multigrid::operator_interpolation(a, fine, coarsening);
    const auto dense = to_dense(to_csr(multigrid::galerkin_operator(a, fine, coarsening, weights)));
    for (std::int32_t i = 0; i < 7; ++i) {
        for (std::int32_t j = 0; j < 7; ++j) {
            const double expected = i == j ? 1.0 : std::abs(i - j) == 1 ? -0.5 : 0.0;
            EXPECT_NEAR(dense.at(i, j), expected, 1e-15) << i << ", " << j;
        }
    }
}

// The Galerkin operator summed point by point on the box equals P^T A P formed by general
// sparse products, for variable coefficients, odd sizes, mixed sides, 2D and 3D, and a box of
// two points along an axis (where one DIA offset holds different steps in different rows).
TEST(MultigridTransfer, BoxGalerkinOperatorEqualsSparseProducts) {
    const auto k = [](double x, double y, double z) { return 1.0 + 30.0 * x * y + 5.0 * z; };
    const std::array<Side, 6> mixed = {Side::dirichlet, Side::neumann, Side::neumann,
                                       Side::dirichlet, Side::neumann, Side::dirichlet};
    struct Case {
        std::array<std::int32_t, 3> points;
        int dimension;
    };
    for (const Case& c : {Case{{13, 10, 1}, 2}, Case{{9, 7, 6}, 3}, Case{{2, 9, 1}, 2}}) {
        const GridBox fine = box_of(c.points, c.dimension);
        const auto csr =
            testing::box_diffusion_matrix(c.points, c.dimension, {0.1, 0.07, 0.05}, k, mixed, 3.0);
        const auto a = to_dia(csr);
        const auto coarsening = multigrid::choose_coarsening(a, fine);
        ASSERT_TRUE(coarsening.coarsens()) << fine.describe();
        const auto weights = multigrid::operator_interpolation(a, fine, coarsening);
        const auto box =
            to_dense(to_csr(multigrid::galerkin_operator(a, fine, coarsening, weights)));
        const auto reference = to_dense(
            galerkin_product(csr, multigrid::interpolation_matrix(weights, fine, coarsening)));
        ASSERT_EQ(box.rows, reference.rows);
        double largest = 0;
        for (const double v : reference.values) largest = std::max(largest, std::abs(v));
        for (std::size_t e = 0; e < box.values.size(); ++e) {
            ASSERT_NEAR(box.values[e], reference.values[e], 1e-13 * largest)
                << fine.describe() << " entry " << e;
        }
    }
}

TEST(MultigridTransfer, RefusesRowsThatAreNotTheBoxPoints) {
    const auto a = to_dia(testing::box_diffusion_matrix({6, 6, 1}, 2, {0.1, 0.1, 1},
                                                        unit_coefficient, all_dirichlet));
    // As a 4 x 9 box, row 5 = (1, 1) couples to row 6 = (2, 1) (fine) but row 3 = (3, 0)
    // couples to row 4 = (0, 1): not a neighbour.
    try {
        multigrid::check_box_couplings(a, box_of({4, 9, 1}, 2));
        FAIL() << "accepted a matrix that is not on the box";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("not its neighbour in the 4x9 box"), std::string::npos)
            << e.what();
    }
    EXPECT_THROW(MultigridHierarchy<double>(make_cpu_backend(), a, box_of({5, 6, 1}, 2),
                                            MultigridParameters{}),
                 std::invalid_argument);
    // On its own 6 x 6 box every offset is one step, and only the rows on the faces a step
    // leaves by are read: an entry there that wraps round to the next line is found, the first
    // such row named (row 11 = (5, 1) couples to row 12 = (0, 2); row 17 too).
    EXPECT_TRUE(multigrid::check_box_couplings(a, box_of({6, 6, 1}, 2)));
    auto wrapped = a;
    for (const std::int64_t row : {17, 11}) wrapped.at(wrapped.find_diagonal(1), row) = -0.5;
    try {
        multigrid::check_box_couplings(wrapped, box_of({6, 6, 1}, 2));
        FAIL() << "accepted a coupling that wraps round to the next line";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("row 11 (5, 1) couples to row 12 (0, 2)"),
                  std::string::npos)
            << e.what();
    }
}

// A coupling along two axes at once (a diagonal step of the box) needs 2^dimension colours;
// couplings along the axes alone, two.
TEST(MultigridTransfer, ADiagonalCouplingAsksForMoreColours) {
    auto a = to_dia(testing::box_diffusion_matrix({6, 6, 1}, 2, {0.1, 0.1, 1}, unit_coefficient,
                                                  all_dirichlet));
    EXPECT_TRUE(multigrid::check_box_couplings(a, box_of({6, 6, 1}, 2)));
    // A diagonal of step (1, 1), zero but at one inner row: found wherever it lies.
    a.offsets.push_back(7);
    a.values.resize(a.values.size() + static_cast<std::size_t>(a.n), 0.0);
    a.at(a.num_diagonals() - 1, 20) = -0.25;
    EXPECT_FALSE(multigrid::check_box_couplings(a, box_of({6, 6, 1}, 2)));
}

// Multigrid-preconditioned CG on `a` (a box matrix) to ||r|| / ||b|| <= 1e-8 from x = 0 with a
// random b; the iterations it took (checked converged, and b - A x recomputed on the host).
std::int64_t mg_pcg_iterations(const CsrData<double>& a, const GridBox& box,
                               const MultigridParameters& parameters = {}) {
    const auto backend = test_backend();
    const DiaData<double> dia = to_dia(a);
    const DiaMatrix<double> matrix(backend, dia);
    const auto preconditioner = make_multigrid_preconditioner(backend, dia, box, parameters);
    const MultigridPreconditioner<double>& m = *preconditioner;
    MethodParameters method;
    method.criteria.relative_tolerance = 1e-8;
    method.criteria.max_iterations = 200;
    const ConjugateGradient<double> cg(matrix, &m, method);
    const auto b_host = testing::random_vector<double>(static_cast<std::size_t>(a.rows), 7);
    const auto b = Array<double>::from_host(backend, b_host);
    auto x = Array<double>(backend, b_host.size());
    fill(x, 0.0);
    const SolveResult result = cg.solve(b, x);
    EXPECT_TRUE(result.converged()) << m.describe() << ": " << result.summary();
    EXPECT_LE(testing::relative_residual(a, b_host, x.to_host()), 1.001e-8) << m.describe();
    return result.iterations;
}

// MG-PCG on the Dirichlet Poisson problem of m^dimension nodes for each m: at most `bound`
// iterations (the targets) each, and at most `spread` between the fewest and the most.
void expect_iterations_independent_of_h(int dimension, std::initializer_list<std::int32_t> sizes,
                                        std::int64_t bound, std::int64_t spread) {
    std::int64_t fewest = 1000, most = 0;
    for (const std::int32_t m : sizes) {
        const double h = 1.0 / (m + 1);
        const std::array<std::int32_t, 3> points{m, m, dimension == 3 ? m : 1};
        const auto a = testing::box_diffusion_matrix(points, dimension, {h, h, h}, unit_coefficient,
                                                     all_dirichlet);
        const std::int64_t iterations = mg_pcg_iterations(a, box_of(points, dimension));
        EXPECT_LE(iterations, bound) << m << "^" << dimension;
        fewest = std::min(fewest, iterations);
        most = std::max(most, iterations);
    }
    EXPECT_LE(most - fewest, spread);
}

// The cycle's minimum traffic, counted by hand for two levels: the 7 x 7 Laplacian in
// stencil storage (49 rows, a mask byte each) over a 3 x 3 coarsest level, in double.
// Per sweep 49 + 3 * 49 * 8 = 1225 bytes (masks, b and x read, x written), two sweeps and the
// residual (also 1225); restriction 49 * 8 + 9 * 8 + 9 (r, the coarse b, a weight class byte
// per coarse point) = 473; the coarse x zeroed, 72; interpolation 2 * 49 * 8 + 72 + 9 = 865;
// the coarsest level's dense inverse (81 + 18) * 8 = 792. A W-cycle visits it twice.
TEST(MultigridCycle, BytesPerCycleCountTheKernelsAsTheCycleVisitsThem) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    MultigridParameters parameters;
    parameters.coarsest_size = 16;
    parameters.precision = Precision::double_precision;
    const DiaData<double> a = testing::laplacian_2d(7);
    const MultigridHierarchy<double> v(test_backend(), a, box_of({7, 7, 1}, 2), parameters);
    ASSERT_EQ(v.levels().size(), 2u);
    const double own = 3 * 1225 + 473 + 72 + 865;
    EXPECT_DOUBLE_EQ(v.bytes_per_cycle(), own + 792);
    parameters.cycle = MultigridCycle::w;
    const MultigridHierarchy<double> w(test_backend(), a, box_of({7, 7, 1}, 2), parameters);
    EXPECT_DOUBLE_EQ(w.bytes_per_cycle(), own + 2 * 792);
}

// A double operator turned float on the back-end (a float cycle's finest level) holds each
// value rounded as a cast rounds it, in the same storage, and back again.
TEST(MultigridPcg, AnOperatorConvertedOnTheBackEndIsTheRoundedMatrix) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto backend = test_backend();
    const DiaData<double> varied = testing::random_dia<double>(3000, {-50, -1, 0, 1, 50}, 31);
    const DiaData<double> stencil = testing::laplacian_2d(40);
    for (const auto& [data, storage] :
         {std::pair{varied, DiaStorage::general}, std::pair{stencil, DiaStorage::stencil}}) {
        const DiaMatrix<double> twice(backend, data, storage);
        const DiaMatrix<float> once(twice);
        EXPECT_EQ(once.is_stencil(), storage == DiaStorage::stencil);
        const DiaData<float> rounded = once.host_data();
        const DiaData<double> expanded = twice.host_data();
        ASSERT_EQ(rounded.offsets, expanded.offsets);
        ASSERT_EQ(rounded.values.size(), expanded.values.size());
        for (std::size_t k = 0; k < rounded.values.size(); ++k) {
            ASSERT_EQ(rounded.values[k], static_cast<float>(expanded.values[k])) << k;
        }
        const DiaMatrix<double> widened(once);
        EXPECT_EQ(widened.host_data().values,
                  std::vector<double>(rounded.values.begin(), rounded.values.end()));
    }
}

TEST(MultigridPcg, PoissonIterationsDoNotGrowWithTheGrid2d) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    expect_iterations_independent_of_h(2, {31, 63, 127, 255}, 10, 2);
}

TEST(MultigridPcg, PoissonIterationsDoNotGrowWithTheGrid3d) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    expect_iterations_independent_of_h(3, {15, 31, 47, 63}, 12, 3);
}

TEST(MultigridPcg, OddUnequalSizesAndEveryKindOfSide) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const std::array<Side, 6> mixed = {Side::dirichlet, Side::neumann, Side::neumann,
                                       Side::dirichlet, Side::neumann, Side::dirichlet};
    const double h = 0.01;
    EXPECT_LE(mg_pcg_iterations(testing::box_diffusion_matrix({100, 37, 1}, 2, {h, h, 1},
                                                              unit_coefficient, mixed),
                                box_of({100, 37, 1}, 2)),
              10);
    EXPECT_LE(mg_pcg_iterations(testing::box_diffusion_matrix({30, 17, 23}, 3, {h, h, h},
                                                              unit_coefficient, mixed),
                                box_of({30, 17, 23}, 3)),
              12);
    // Neumann on every side with a time step's shift (backward Euler, dt = 10 h^2).
    EXPECT_LE(mg_pcg_iterations(
                  testing::box_diffusion_matrix({129, 129, 1}, 2, {h, h, 1}, unit_coefficient,
                                                all_neumann, 1.0 / (10 * h * h)),
                  box_of({129, 129, 1}, 2)),
              10);
}

TEST(MultigridPcg, CoefficientJumpOfAThousand) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto jump = [](double x, double y, double) { return x > 0.5 && y > 0.25 ? 1000.0 : 1.0; };
    for (const std::int32_t m : {63, 127}) {
        const double h = 1.0 / (m + 1);
        EXPECT_LE(mg_pcg_iterations(
                      testing::box_diffusion_matrix({m, m, 1}, 2, {h, h, 1}, jump, all_dirichlet),
                      box_of({m, m, 1}, 2)),
                  20)
            << m;
    }
}

TEST(MultigridPcg, SpacingsFourTimesApartBetweenAxes) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    // h_y = 4 h_x: the x couplings are 16 times the y ones; the hierarchy semi-coarsens in x.
    const std::int32_t m = 127;
    const double h = 1.0 / (m + 1);
    EXPECT_LE(mg_pcg_iterations(testing::box_diffusion_matrix({m, 31, 1}, 2, {h, 4 * h, 1},
                                                              unit_coefficient, all_dirichlet),
                                box_of({m, 31, 1}, 2)),
              20);
    EXPECT_LE(mg_pcg_iterations(testing::box_diffusion_matrix({63, 63, 15}, 3, {h, h, 4 * h},
                                                              unit_coefficient, all_dirichlet),
                                box_of({63, 63, 15}, 3)),
              20);
}

TEST(MultigridPcg, ChebyshevSmootherAndOtherCycles) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const std::int32_t m = 127;
    const double h = 1.0 / (m + 1);
    const auto a =
        testing::box_diffusion_matrix({m, m, 1}, 2, {h, h, 1}, unit_coefficient, all_dirichlet);
    MultigridParameters chebyshev;
    chebyshev.smoother = MultigridSmoother::chebyshev;
    chebyshev.pre_sweeps = chebyshev.post_sweeps = 2;
    EXPECT_LE(mg_pcg_iterations(a, box_of({m, m, 1}, 2), chebyshev), 12);
    MultigridParameters w;
    w.cycle = MultigridCycle::w;
    EXPECT_LE(mg_pcg_iterations(a, box_of({m, m, 1}, 2), w), 10);
    MultigridParameters f;
    f.cycle = MultigridCycle::f;
    EXPECT_LE(mg_pcg_iterations(a, box_of({m, m, 1}, 2), f), 10);
}

// A pure Neumann operator (no flux through any side, no shift) is singular with the constants
// as null space. Asked to (remove_constant_null_space), the solve removes the constant part of
// an incompatible b, says how much it was, and returns the solution of zero mean: with
// multigrid on the box and with CG + Jacobi. (Not asked, such a b has no solution and no
// method claims one: HardCases.InconsistentSingularSystemIsNotReportedConverged.)
TEST(MultigridPcg, PureNeumannIsSolvedForTheSolutionOfZeroMean) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const std::int32_t m = 65;
    const double h = 1.0 / m;
    const auto csr =
        testing::box_diffusion_matrix({m, m, 1}, 2, {h, h, 1}, unit_coefficient, all_neumann);
    const auto b_host = testing::random_vector<double>(static_cast<std::size_t>(csr.rows), 5, -0.5,
                                                       1.5);  // mean about 0.5
    double sum = 0, norm = 0;
    for (const double v : b_host) sum += v, norm += v * v;
    const double n = static_cast<double>(b_host.size());
    std::vector<double> compatible(b_host);
    for (double& v : compatible) v -= sum / n;
    const MatrixProperties properties = analyze(csr);
    ASSERT_TRUE(properties.zero_row_sums);
    for (const bool with_grid : {true, false}) {
        SolverRequest request;
        request.remove_constant_null_space = true;
        if (with_grid) request.grid = box_of({m, m, 1}, 2);
        const SolverPlan plan = plan_solver(properties, request);
        EXPECT_TRUE(plan.remove_constant);
        EXPECT_EQ(plan.first.preconditioner,
                  with_grid ? PreconditionerKind::multigrid : PreconditionerKind::jacobi);
        EXPECT_NE(plan.first.reason.find("solution of zero mean"), std::string::npos);
        MethodParameters parameters;
        parameters.criteria.max_iterations = 2000;
        const LinearSystemSolver<double> solver(backend, to_dia(csr), plan, parameters);
        const auto b = Array<double>::from_host(backend, b_host);
        Array<double> x(backend, b_host.size());
        fill(x, 0.0);
        const SolveReport report = solver.solve(b, x);
        ASSERT_TRUE(report.converged()) << report.result().summary();
        ASSERT_TRUE(report.removed_constant.has_value());
        EXPECT_NEAR(*report.removed_constant, std::abs(sum) / std::sqrt(n) / std::sqrt(norm),
                    1e-12);
        const auto solution = x.to_host();
        double mean = 0, largest = 0;
        for (const double v : solution) mean += v / n, largest = std::max(largest, std::abs(v));
        EXPECT_LE(std::abs(mean), 1e-12 * largest);
        EXPECT_LE(testing::relative_residual(csr, compatible, solution), 1.01e-8);
        if (with_grid) {
            EXPECT_LE(report.total_iterations(), 12);
        }
    }
}

TEST(MultigridCycle, AloneReducesTheResidualTenfoldPerCycle) {
    // A V(1,1) cycle with red-black Gauss-Seidel (red then black on both sides), full weighting
    // and bilinear interpolation has the two-grid factor 0.074 for the 5-point Laplacian
    // (Trottenberg, Oosterlee and Schueller, Multigrid, section 4.6): the residual contracts
    // about tenfold per cycle at any h. Allow 0.1.
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const std::int32_t m = 127;
    const double h = 1.0 / (m + 1);
    const auto a =
        testing::box_diffusion_matrix({m, m, 1}, 2, {h, h, 1}, unit_coefficient, all_dirichlet);
    MultigridParameters parameters;
    parameters.symmetric = false;
    const MultigridHierarchy<double> hierarchy(backend, to_dia(a), box_of({m, m, 1}, 2),
                                               parameters);
    const auto b_host = testing::random_vector<double>(static_cast<std::size_t>(a.rows), 3);
    const auto b = Array<double>::from_host(backend, b_host);
    auto x = Array<double>(backend, b_host.size());
    fill(x, 0.0);
    double previous = testing::relative_residual(a, b_host, x.to_host());
    for (int cycle = 1; cycle <= 8; ++cycle) {
        hierarchy.cycle(b, x);
        const double residual = testing::relative_residual(a, b_host, x.to_host());
        EXPECT_LT(residual / previous, 0.1) << "cycle " << cycle;
        previous = residual;
    }
    EXPECT_LT(previous, 1e-8);
}

}  // namespace
}  // namespace simrun::solvers

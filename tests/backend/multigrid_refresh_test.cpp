// New values on the same rows (a time step of another size: I + dt A): a multigrid hierarchy
// refreshed keeps what it decided and is, where a fresh build decides the same, that build to
// the bit (the same kernels on the same values); where a fresh build would decide otherwise it
// keeps its own levels. The same through LinearSystemSolver::update_values, whose solve then is
// a new solver's on the new values. One source built per back-end (SIMRUN_TEST_ON_CUDA: the GPU).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/multigrid/multigrid_hierarchy.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"
#include "support/test_backend.hpp"
#include "support/test_matrices.hpp"

namespace simrun::solvers {
namespace {

using testing::Side;
using testing::test_backend;

// The rows of a time step of size dt: I + dt A on the rows that couple (A the operator of
// `laplacian`), the rows that do not (identity rows) as they are.
DiaData<double> time_step_rows(const DiaData<double>& laplacian, double dt) {
    DiaData<double> a = laplacian;
    const int main = a.find_diagonal(0);
    for (std::int64_t i = 0; i < a.n; ++i) {
        bool couples = false;
        for (int d = 0; d < a.num_diagonals(); ++d) couples = couples || (d != main && a.at(d, i));
        if (!couples) continue;
        for (int d = 0; d < a.num_diagonals(); ++d) a.at(d, i) *= dt;
        a.at(main, i) += 1.0;
    }
    return a;
}

// -div(k grad u) on `points` with Dirichlet sides eliminated, k per point from `k`; x couplings
// scaled by `x_scale` (anisotropy).
DiaData<double> diffusion(std::array<std::int32_t, 3> points, int dimension,
                          double (*k)(double, double, double), double x_scale = 1.0) {
    const std::array<double, 3> h = {1.0 / std::sqrt(x_scale) / (points[0] + 1),
                                     1.0 / (points[1] + 1), 1.0 / (points[2] + 1)};
    const auto d = Side::dirichlet;
    return to_dia(testing::box_diffusion_matrix(points, dimension, h, k, {d, d, d, d, d, d}));
}

double unit_k(double, double, double) { return 1.0; }
double varying_k(double x, double y, double z) {
    return 1.5 + 0.5 * std::sin(1013.0 * x + 1731.0 * y + 2903.0 * z);
}
double checkerboard_k(double x, double y, double z) {
    const int parity = static_cast<int>(std::floor(8 * x)) + static_cast<int>(std::floor(8 * y)) +
                       static_cast<int>(std::floor(8 * z));
    return parity % 2 == 0 ? 1000.0 : 1.0;
}

template <typename T>
std::vector<T> cycle_on_random_b(const MultigridHierarchy<T>& hierarchy) {
    std::mt19937 generator(7);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    std::vector<T> b(hierarchy.size());
    for (T& v : b) v = static_cast<T>(value(generator));
    const auto& backend = hierarchy.backend();
    Array<T> x(backend, b.size());
    hierarchy.cycle_from_zero(Array<T>::from_host(backend, b), x);
    return x.to_host();
}

std::vector<std::string> boxes_of(const std::vector<MultigridLevelSummary>& levels) {
    std::vector<std::string> boxes;
    for (const auto& level : levels) boxes.push_back(level.box.describe());
    return boxes;
}

// A hierarchy of `before` refreshed with `after` against one built from `after`: the same levels
// and the same cycle, to the bit, with the caller's rows given in `storage` (or none given).
template <typename T>
void expect_refresh_is_a_fresh_build(const std::shared_ptr<const Backend>& backend,
                                     const DiaData<double>& before, const DiaData<double>& after,
                                     const GridBox& box, std::optional<DiaStorage> storage,
                                     const std::string& what) {
    SCOPED_TRACE(what);
    std::unique_ptr<DiaMatrix<double>> given_before, given_after;
    if (storage) {
        given_before = std::make_unique<DiaMatrix<double>>(backend, before, *storage);
        given_after = std::make_unique<DiaMatrix<double>>(backend, after, *storage);
    }
    MultigridHierarchy<T> refreshed(backend, before, box, MultigridParameters{},
                                    given_before.get());
    const std::vector<T> cycle_before = cycle_on_random_b(refreshed);
    refreshed.refresh(after, given_after.get());
    const MultigridHierarchy<T> fresh(backend, after, box, MultigridParameters{},
                                      given_after.get());
    ASSERT_EQ(boxes_of(refreshed.levels()), boxes_of(fresh.levels()));
    EXPECT_EQ(refreshed.describe(), fresh.describe());
    const std::vector<T> cycle = cycle_on_random_b(refreshed);
    EXPECT_EQ(cycle, cycle_on_random_b(fresh));
    EXPECT_NE(cycle, cycle_before);  // the new values are used
}

TEST(MultigridRefresh, IsTheHierarchyBuiltFromTheNewValues) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const GridBox square{2, {65, 65, 1}}, cube{3, {17, 17, 17}}, plate{2, {40, 40, 1}};
    const DiaData<double> poisson = diffusion({65, 65, 1}, 2, unit_k);
    // Constant coefficients: the levels made by the back-end, in row classes; the finest given
    // in each storage that holds it.
    for (const auto storage : {std::optional<DiaStorage>{}, std::optional(DiaStorage::general),
                               std::optional(DiaStorage::stencil)}) {
        expect_refresh_is_a_fresh_build<double>(backend, time_step_rows(poisson, 1e-3),
                                                time_step_rows(poisson, 1e-2), square, storage,
                                                "65x65, dt 1e-3 -> 1e-2");
    }
    const DiaData<double> poisson_3d = diffusion({17, 17, 17}, 3, unit_k);
    expect_refresh_is_a_fresh_build<double>(backend, time_step_rows(poisson_3d, 1e-2),
                                            time_step_rows(poisson_3d, 2.5e-3), cube,
                                            DiaStorage::stencil, "17^3");
    // Varying coefficients (the host takes the rows below the finest) and jumps (local bases).
    const DiaData<double> varying = diffusion({40, 40, 1}, 2, varying_k);
    expect_refresh_is_a_fresh_build<double>(backend, time_step_rows(varying, 1e-3),
                                            time_step_rows(varying, 3e-3), plate,
                                            DiaStorage::general, "40x40 varying k");
    const DiaData<double> jumps = diffusion({40, 40, 1}, 2, checkerboard_k);
    expect_refresh_is_a_fresh_build<double>(backend, time_step_rows(jumps, 1e-4),
                                            time_step_rows(jumps, 1e-3), plate, DiaStorage::general,
                                            "40x40 checkerboard");
    // A float cycle made from double rows.
    expect_refresh_is_a_fresh_build<float>(backend, time_step_rows(poisson, 1e-3),
                                           time_step_rows(poisson, 1e-2), square,
                                           DiaStorage::stencil, "65x65 float");
}

TEST(MultigridRefresh, KeepsWhatItDecidedAndRefusesRowsThatDoNotFit) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const GridBox box{2, {65, 65, 1}};
    const DiaData<double> isotropic = time_step_rows(diffusion({65, 65, 1}, 2, unit_k), 1e-3);
    const DiaData<double> anisotropic =
        time_step_rows(diffusion({65, 65, 1}, 2, unit_k, 100.0), 1e-3);
    MultigridHierarchy<double> hierarchy(backend, isotropic, box, MultigridParameters{});
    const std::vector<std::string> decided = boxes_of(hierarchy.levels());
    const std::vector<double> cycle_before = cycle_on_random_b(hierarchy);
    // Built from the strongly anisotropic rows the levels coarsen along x only...
    const MultigridHierarchy<double> fresh(backend, anisotropic, box, MultigridParameters{});
    ASSERT_NE(boxes_of(fresh.levels()), decided);
    // ...refreshed with them they stay as decided.
    hierarchy.refresh(anisotropic);
    EXPECT_EQ(boxes_of(hierarchy.levels()), decided);
    // Rows of another box are refused, and the hierarchy stays as it was.
    hierarchy.refresh(isotropic);
    const DiaData<double> smaller = time_step_rows(diffusion({33, 33, 1}, 2, unit_k), 1e-3);
    EXPECT_THROW(hierarchy.refresh(smaller), std::invalid_argument);
    EXPECT_EQ(cycle_on_random_b(hierarchy), cycle_before);
}

// The solution and iterations of `solver` on b, and whether it converged.
struct Solved {
    std::vector<double> x;
    std::int64_t iterations = 0;
    bool converged = false;
};

Solved solve(const LinearSystemSolver<double>& solver, const std::vector<double>& b) {
    const auto& backend = solver.backend();
    Array<double> x(backend, b.size());
    fill(x, 0.0);
    const SolveReport report = solver.solve(Array<double>::from_host(backend, b), x);
    return {x.to_host(), report.total_iterations(), report.converged()};
}

TEST(MultigridRefresh, UpdatedSolverSolvesAsANewOneOnTheNewValues) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const GridBox box{2, {65, 65, 1}};
    const DiaData<double> poisson = diffusion({65, 65, 1}, 2, unit_k);
    const DiaData<double> before = time_step_rows(poisson, 1e-3);
    const DiaData<double> after = time_step_rows(poisson, 1e-1);
    std::vector<double> b(static_cast<std::size_t>(before.n));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.37 * static_cast<double>(i));
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-10;
    for (const char* preconditioner : {"multigrid", "jacobi"}) {
        SCOPED_TRACE(preconditioner);
        SolverRequest request = SolverRequest::parse("cg", preconditioner, "stencil");
        request.grid = box;
        const SolverPlan plan = plan_solver(analyze(before), request);
        LinearSystemSolver<double> updated(backend, before, plan, parameters);
        const Solved first = solve(updated, b);
        updated.update_values(after);
        const Solved now = solve(updated, b);
        const Solved fresh = solve(LinearSystemSolver<double>(backend, after, plan, parameters), b);
        EXPECT_TRUE(now.converged);
        EXPECT_EQ(now.iterations, fresh.iterations);
        EXPECT_EQ(now.x, fresh.x);
        EXPECT_NE(now.x, first.x);
        // Rows of other diagonals, or of another size, are refused.
        DiaData<double> other = after;
        other.offsets.back() += 1;
        EXPECT_THROW(updated.update_values(other), std::invalid_argument);
        EXPECT_THROW(updated.update_values(time_step_rows(diffusion({33, 33, 1}, 2, unit_k), 1.0)),
                     std::invalid_argument);
    }
    // From CSR rows: the same, on their pattern; no new DIA values.
    SolverRequest request = SolverRequest::parse("cg", "multigrid", "stencil");
    request.grid = box;
    const SolverPlan plan = plan_solver(analyze(before), request);
    LinearSystemSolver<double> from_csr(backend, to_csr(before), plan, parameters);
    from_csr.update_values(to_csr(after));
    const Solved fresh =
        solve(LinearSystemSolver<double>(backend, to_csr(after), plan, parameters), b);
    const Solved now = solve(from_csr, b);
    EXPECT_EQ(now.x, fresh.x);
    EXPECT_EQ(now.iterations, fresh.iterations);
    EXPECT_THROW(from_csr.update_values(after), std::logic_error);
}

TEST(MultigridRefresh, AFailedUpdateLeavesTheSolverToBeBuiltAtTheNextSolve) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const GridBox box{2, {33, 33, 1}};
    const DiaData<double> good = time_step_rows(diffusion({33, 33, 1}, 2, unit_k), 1e-2);
    SolverRequest request = SolverRequest::parse("cg", "multigrid", "dia");
    request.grid = box;
    const SolverPlan plan = plan_solver(analyze(good), request);
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-10;
    LinearSystemSolver<double> solver(backend, good, plan, parameters);
    // A row without a positive diagonal entry: the operator takes it, the hierarchy refuses it
    // (naming the row), and so does the next solve, which builds the steps again.
    DiaData<double> bad = good;
    bad.at(bad.find_diagonal(0), 17 + 33 * 16) = 0.0;
    EXPECT_THROW(solver.update_values(bad), std::invalid_argument);
    const std::vector<double> b(static_cast<std::size_t>(good.n), 1.0);
    EXPECT_THROW(solve(solver, b), std::invalid_argument);
    // Good values again: it solves as a new solver does.
    solver.update_values(good);
    const Solved now = solve(solver, b);
    EXPECT_TRUE(now.converged);
    EXPECT_EQ(now.x, solve(LinearSystemSolver<double>(backend, good, plan, parameters), b).x);
}

}  // namespace
}  // namespace simrun::solvers

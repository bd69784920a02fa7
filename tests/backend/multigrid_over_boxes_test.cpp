// Multigrid over a process grid of boxes (ranks as threads of one process,
// tests/support/thread_ranks.hpp): a cycle whose levels are split in parts, each with a point
// of halo on every side another rank holds, is one process's cycle to rounding (the same coarse
// operators, the whole box's colours, the halo exchanged between them), with the levels split,
// gathered, or both; and CG with it takes one process's iterations to the same solution. Built
// per back-end: on CUDA the ranks share the GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/multigrid/multigrid_hierarchy.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"
#include "support/grid_boxes.hpp"
#include "support/solve_over_ranks.hpp"
#include "support/test_backend.hpp"
#include "support/test_matrices.hpp"
#include "support/thread_ranks.hpp"

namespace simrun::solvers {
namespace {

using testing::GridBoxes;
using testing::Side;
using testing::test_backend;
using testing::ThreadRanks;

struct Case {
    std::string name;
    std::array<std::int32_t, 3> points;
    int dimension;
    std::array<double, 3> h;
    std::array<Side, 6> sides;
    bool varying;  // a coefficient that jumps by 100 across a slanted plane
    MultigridParameters parameters;
    std::vector<std::array<int, 3>> process_grids;
    // The levels split over the ranks before the first gathered one, per process grid (0: the
    // finest gathered, its parts too thin).
    std::vector<std::size_t> split_levels;
};

std::vector<Case> cases() {
    const auto dirichlet = Side::dirichlet, neumann = Side::neumann;
    MultigridParameters split;  // the defaults, every level split that can be
    MultigridParameters chebyshev_w;
    chebyshev_w.smoother = MultigridSmoother::chebyshev;
    chebyshev_w.cycle = MultigridCycle::w;
    chebyshev_w.pre_sweeps = chebyshev_w.post_sweeps = 2;
    MultigridParameters f_small;
    f_small.cycle = MultigridCycle::f;
    f_small.coarsest_size = 16;
    MultigridParameters nonsymmetric;
    nonsymmetric.symmetric = false;
    for (MultigridParameters* p : {&split, &chebyshev_w, &f_small, &nonsymmetric}) {
        p->gather_size = 0;
    }
    return {
        // Uneven parts along both axes; 64 -> 32 -> 16 -> 8 -> 4 points across a part of 2x2,
        // the last level with parts of 2 points (then 1: gathered).
        {"2D varying, Dirichlet",
         {64, 64, 1},
         2,
         {1.0 / 65, 1.0 / 65, 1},
         {dirichlet, dirichlet, dirichlet, dirichlet, dirichlet, dirichlet},
         true,
         split,
         {{2, 2, 1}, {3, 2, 1}, {1, 3, 1}, {4, 1, 1}},
         {}},
        // Neumann ends (coarse points at the ends), a W-cycle with Chebyshev.
        {"2D Neumann, Chebyshev W",
         {33, 45, 1},
         2,
         {0.03, 0.025, 1},
         {neumann, dirichlet, neumann, neumann, dirichlet, dirichlet},
         false,
         chebyshev_w,
         {{2, 2, 1}, {3, 1, 1}},
         {}},
        // Strong coupling along x only: y is not coarsened (semi-coarsening), nonsymmetric.
        {"2D anisotropic",
         {40, 36, 1},
         2,
         {0.01, 0.1, 1},
         {dirichlet, dirichlet, dirichlet, dirichlet, dirichlet, dirichlet},
         false,
         nonsymmetric,
         {{2, 2, 1}},
         {}},
        // 3D, levels down to 16 points (F-cycle), split along one, two and three axes: the
        // Galerkin levels couple diagonal neighbours (8 colours, edges and corners of the halo),
        // and the coarse levels' parts and windows get fewer than 3 points across (their
        // offsets read from the points' coordinates).
        {"3D varying",
         {20, 18, 26},
         3,
         {0.05, 0.05, 0.04},
         {dirichlet, neumann, dirichlet, dirichlet, neumann, dirichlet},
         true,
         f_small,
         {{2, 1, 2}, {2, 2, 2}, {1, 3, 1}, {1, 1, 2}},
         {}},
        // Two points along an axis: a DIA offset names several steps there (the rows read
        // point by point), in 2D across and along the split, in 3D beside a split axis.
        {"2D two points across",
         {2, 40, 1},
         2,
         {0.3, 0.025, 1},
         {dirichlet, neumann, dirichlet, dirichlet, dirichlet, dirichlet},
         true,
         split,
         {{1, 4, 1}, {1, 3, 1}},
         {}},
        {"3D two points across",
         {10, 2, 12},
         3,
         {0.1, 0.3, 0.08},
         {dirichlet, dirichlet, neumann, dirichlet, dirichlet, dirichlet},
         false,
         f_small,
         {{2, 1, 2}, {1, 2, 2}},
         {}},
        // Parts of one point across: the finest level gathered.
        {"2D thin parts",
         {5, 20, 1},
         2,
         {0.05, 0.05, 1},
         {dirichlet, dirichlet, dirichlet, dirichlet, dirichlet, dirichlet},
         false,
         split,
         {{5, 1, 1}},
         {0}},
    };
}

DiaData<double> matrix_of(const Case& c) {
    const auto k = [&](double x, double y, double z) {
        return c.varying && x + 0.7 * y + 0.3 * z > 0.55 ? 100.0 : 1.0;
    };
    return to_dia(testing::box_diffusion_matrix(c.points, c.dimension, c.h, k, c.sides));
}

// The values of `whole` (on the points of `box`) at the points of `part`, x fastest, and in
// `at` where each lies in the box.
std::vector<double> part_of(const std::vector<double>& whole, const GridBox& box, const Box& part,
                            std::vector<std::int64_t>& at) {
    std::vector<double> values;
    for_each_point(part, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
        at.push_back(box.row(i, j, k));
        values.push_back(whole[static_cast<std::size_t>(at.back())]);
    });
    return values;
}

// The first cycle from zero (as a preconditioner takes it), the second from its result.
TEST(MultigridOverBoxes, ACycleIsOneProcessCycle) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    for (const Case& c : cases()) {
        SCOPED_TRACE(c.name);
        const DiaData<double> a = matrix_of(c);
        const GridBox box{c.dimension, {c.points[0], c.points[1], c.points[2]}};
        const auto n = static_cast<std::size_t>(a.n);
        std::vector<double> b(n);
        std::mt19937 generator(7);
        for (double& v : b) v = std::uniform_real_distribution<double>(-1, 1)(generator);
        const auto backend = test_backend();
        const MultigridHierarchy<double> whole(backend, a, box, c.parameters);
        Array<double> x1(backend, n);
        fill(x1, 0.0);
        whole.cycle(Array<double>::from_host(backend, b), x1);
        whole.cycle(Array<double>::from_host(backend, b), x1);
        const std::vector<double> u1 = x1.to_host();
        double scale = 0;
        for (const double v : u1) scale = std::max(scale, std::abs(v));
        for (std::size_t g = 0; g < c.process_grids.size(); ++g) {
            const auto& parts = c.process_grids[g];
            const GridBoxes grid{box.points, parts};
            SCOPED_TRACE(std::to_string(parts[0]) + "x" + std::to_string(parts[1]) + "x" +
                         std::to_string(parts[2]));
            ThreadRanks ranks(grid.ranks());
            ranks.run([&](std::shared_ptr<const Communicator> communicator) {
                const int r = communicator->rank();
                const auto on = test_backend(communicator);
                const PartRows<double> rows = testing::part_rows(a, grid, c.dimension, r);
                const MultigridHierarchy<double> split(on, rows, c.parameters);
                // The same levels as one process.
                ASSERT_EQ(split.levels().size(), whole.levels().size()) << split.describe();
                for (std::size_t l = 0; l < whole.levels().size(); ++l) {
                    EXPECT_EQ(split.levels()[l].box.describe(), whole.levels()[l].box.describe());
                    EXPECT_EQ(split.levels()[l].colours, whole.levels()[l].colours);
                }
                const std::string over = "over " + std::to_string(grid.ranks()) + " ranks";
                EXPECT_NE(split.describe().find(over), std::string::npos) << split.describe();
                if (!c.split_levels.empty() && c.split_levels[g] == 0) {
                    EXPECT_NE(split.describe().find("every level gathered"), std::string::npos)
                        << split.describe();
                }
                // This rank's part of b, and of the result.
                std::vector<std::int64_t> at;
                const std::vector<double> part_b = part_of(b, box, rows.part, at);
                const auto bp = Array<double>::from_host(on, part_b);
                Array<double> x(on, part_b.size());
                fill(x, std::numeric_limits<double>::quiet_NaN());  // not read: from zero
                // Every rank's set-up done before any cycle: ranks as threads share one CUDA
                // context, where freeing memory waits for the whole device, also for a
                // neighbour's halo wait on the GPU (SIMRUN_HALO=device).
                communicator->barrier();
                split.cycle_from_zero(bp, x);
                split.cycle(bp, x);
                const std::vector<double> got = x.to_host();
                for (std::size_t i = 0; i < got.size(); ++i) {
                    ASSERT_NEAR(got[i], u1[static_cast<std::size_t>(at[i])], 1e-12 * scale)
                        << c.name << ", " << grid.ranks() << " ranks: point " << at[i]
                        << " of rank " << r;
                }
            });
        }
    }
}

// Parts thinner than the ghost layers along a split axis: the level is split anew over fewer
// ranks along that axis (the first ones; the others only visit the levels below for their
// collectives, as often as the cycle does: W), as on slabs, and a cycle is still one
// process's.
TEST(MultigridOverBoxes, ThinPartsGoToFewerRanks) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    struct Fewer {
        std::int32_t nx, ny;
        std::array<int, 3> parts;
        MultigridCycle cycle;
        std::string held;  // describe()'s words for the level held by fewer ranks
    };
    const auto one = [](double, double, double) { return 1.0; };
    for (const Fewer& c : {Fewer{97, 25, {2, 2, 1}, MultigridCycle::v, "12x6 on 2, "},
                           Fewer{97, 97, {4, 1, 1}, MultigridCycle::w, "12x12 on 2, "},
                           Fewer{60, 61, {3, 2, 1}, MultigridCycle::f, "15x15 on 4, "}}) {
        SCOPED_TRACE(c.held);
        const std::array<std::int32_t, 3> points{c.nx, c.ny, 1};
        const DiaData<double> a = to_dia(testing::box_diffusion_matrix(
            points, 2, {1.0 / c.nx, 1.0 / c.ny, 1}, one, std::array<Side, 6>{}));
        const GridBox box{2, {c.nx, c.ny, 1}};
        MultigridParameters parameters;
        parameters.gather_size = 0;
        parameters.coarsest_size = 16;
        parameters.cycle = c.cycle;
        const auto backend = test_backend();
        const MultigridHierarchy<double> whole(backend, a, box, parameters);
        std::vector<double> b(static_cast<std::size_t>(a.n));
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.11 * static_cast<double>(i));
        Array<double> x1(backend, b.size());
        whole.cycle_from_zero(Array<double>::from_host(backend, b), x1);
        const std::vector<double> u1 = x1.to_host();
        double scale = 0;
        for (const double v : u1) scale = std::max(scale, std::abs(v));
        const GridBoxes grid{box.points, c.parts};
        ThreadRanks ranks(grid.ranks());
        ranks.run([&](std::shared_ptr<const Communicator> communicator) {
            const auto on = test_backend(communicator);
            const PartRows<double> rows = testing::part_rows(a, grid, 2, communicator->rank());
            const MultigridHierarchy<double> split(on, rows, parameters);
            EXPECT_NE(split.describe().find(c.held), std::string::npos) << split.describe();
            std::vector<std::int64_t> at;
            const std::vector<double> part_b = part_of(b, box, rows.part, at);
            Array<double> x(on, part_b.size());
            communicator->barrier();
            split.cycle_from_zero(Array<double>::from_host(on, part_b), x);
            const std::vector<double> got = x.to_host();
            for (std::size_t i = 0; i < got.size(); ++i) {
                ASSERT_NEAR(got[i], u1[static_cast<std::size_t>(at[i])], 1e-12 * scale)
                    << "point " << at[i];
            }
        });
    }
}

// CG with a cycle over a process grid: one process's iterations to the same solution, the
// cycle in the plan's precision or in float.
TEST(MultigridOverBoxes, CgTakesOneProcessIterations) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto one = [](double, double, double) { return 1.0; };
    const DiaData<double> a = to_dia(testing::diffusion_matrix(95, 2, one));
    const GridBox box{2, {95, 95, 1}};
    const auto n = static_cast<std::size_t>(a.n);
    std::vector<double> b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = std::sin(0.37 * static_cast<double>(i)) + 0.5;
    const std::optional<Precision> planned, in_float(Precision::single_precision);
    for (const auto& [precision, gather_size] :
         {std::pair{planned, std::int64_t{0}}, std::pair{in_float, std::int64_t{0}},
          std::pair{in_float, std::int64_t{65536}}}) {
        SCOPED_TRACE(std::string(precision ? "cycle in float" : "cycle in the plan's precision") +
                     ", gather_size " + std::to_string(gather_size));
        SolverRequest request = SolverRequest::parse("pcg", "auto", "dia");
        request.grid = box;
        request.multigrid.gather_size = gather_size;
        request.multigrid.precision = precision;
        MethodParameters parameters;
        parameters.criteria.relative_tolerance = 1e-11;
        const SolverPlan plan = plan_solver(analyze(a), request);
        ASSERT_EQ(plan.first.preconditioner, PreconditionerKind::multigrid) << plan.first.reason;
        const testing::RankSolve whole = testing::solve_on_one_rank(a, b, plan, parameters);
        ASSERT_TRUE(whole.report.converged());
        for (const std::array<int, 3> parts : {std::array{2, 2, 1}, std::array{3, 2, 1}}) {
            const GridBoxes grid{box.points, parts};
            SCOPED_TRACE(std::to_string(grid.ranks()) + " ranks");
            request.ranks = grid.ranks();
            const SolverPlan split_plan = plan_solver(analyze(a), request);
            EXPECT_EQ(split_plan.first.name(), plan.first.name());
            const std::vector<std::int64_t> renumbering = grid.renumbering();
            std::vector<double> b_ranks(n);
            for (std::size_t i = 0; i < n; ++i) {
                b_ranks[static_cast<std::size_t>(renumbering[i])] = b[i];
            }
            std::vector<std::int64_t> grid_index(n);
            for (std::size_t i = 0; i < n; ++i) {
                grid_index[static_cast<std::size_t>(renumbering[i])] = static_cast<std::int64_t>(i);
            }
            testing::solve_blocks_over_ranks(
                [&](int r) { return testing::part_rows(a, grid, 2, r); }, b_ranks, grid.firsts(),
                split_plan, parameters,
                [&](const testing::RankSolve& rank) {
                    EXPECT_TRUE(rank.report.converged());
                    const std::string& details = rank.report.attempts.back().preconditioner_details;
                    if (precision) {
                        EXPECT_NE(details.find("in float"), std::string::npos) << details;
                    }
                    EXPECT_EQ(details.find("every level gathered") != std::string::npos,
                              gather_size > 0)
                        << details;
                    // One process's cycle to rounding: the same count, or one more or fewer
                    // where the last residual lies that close to the tolerance.
                    EXPECT_LE(
                        std::abs(rank.report.total_iterations() - whole.report.total_iterations()),
                        1);
                    for (std::size_t i = 0; i < rank.x.size(); ++i) {
                        const double want = whole.x[static_cast<std::size_t>(
                            grid_index[static_cast<std::size_t>(rank.first) + i])];
                        EXPECT_NEAR(rank.x[i], want, 1e-9 * (1 + std::abs(want)));
                    }
                });
        }
    }
}

// A row at the box's end whose entry steps out of the box (in DIA it would wrap to the next
// line) is refused over ranks as one process refuses it: by the rank that holds it, the others
// learning that it failed (no rank left waiting); so is it by the split for the product.
TEST(MultigridOverBoxes, ACouplingOutOfTheBoxIsRefused) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto one = [](double, double, double) { return 1.0; };
    const DiaData<double> a = to_dia(testing::diffusion_matrix(20, 2, one));
    const GridBox box{2, {20, 20, 1}};
    // Row (19, 5) coupled to (20, 5): the point (0, 6) in DIA.
    DiaData<double> stray = a;
    const int plus_x = stray.find_diagonal(1);
    ASSERT_GE(plus_x, 0);
    stray.at(plus_x, box.row(19, 5, 0)) = -1.0;
    EXPECT_THROW(MultigridHierarchy<double>(test_backend(), stray, box, MultigridParameters{}),
                 std::invalid_argument);
    const GridBoxes grid{box.points, {2, 2, 1}};
    ThreadRanks ranks(grid.ranks());
    ranks.run([&](std::shared_ptr<const Communicator> communicator) {
        const auto on = test_backend(communicator);
        // The window's rows hold the stray entry at the window's offset of the step (+1, 0).
        PartRows<double> rows = testing::part_rows(a, grid, 2, communicator->rank());
        if (rows.part.contains(19, 5, 0)) {
            const Box window = rows.window_part();
            const int d = rows.window.find_diagonal(1);
            ASSERT_GE(d, 0);
            rows.window.at(d, window.index(19, 5, 0)) = -1.0;
        }
        if (rows.part.contains(19, 5, 0)) {
            EXPECT_THROW(MultigridHierarchy<double>(on, rows, MultigridParameters{}),
                         std::invalid_argument);
            EXPECT_THROW(split_part_rows(*communicator, rows), std::invalid_argument);
        } else {
            EXPECT_THROW(MultigridHierarchy<double>(on, rows, MultigridParameters{}), PeerFailure);
            EXPECT_THROW(split_part_rows(*communicator, rows), PeerFailure);
        }
    });
}

}  // namespace
}  // namespace simrun::solvers

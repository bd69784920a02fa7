// Multigrid over ranks (here threads of one process, tests/support/thread_ranks.hpp): a cycle
// whose levels are split in slabs over the ranks is one process's cycle to rounding (the same
// coarse operators, the whole box's colours, the halo exchanged between them), with the levels
// split, gathered, or both; and CG with it takes one process's iterations to the same
// solution. Built per back-end: on CUDA the ranks share the GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "multigrid/partitioned_levels.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/multigrid/multigrid_hierarchy.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"
#include "support/rank_blocks.hpp"
#include "support/solve_over_ranks.hpp"
#include "support/test_backend.hpp"
#include "support/test_matrices.hpp"
#include "support/thread_ranks.hpp"

namespace simrun::solvers {
namespace {

using testing::block_of;
using testing::block_starts;
using testing::Side;
using testing::test_backend;
using testing::ThreadRanks;

struct Case {
    std::string name;
    std::array<std::int32_t, 3> points;
    int dimension;
    std::array<double, 3> h;
    std::array<Side, 6> sides;
    bool varying;  // a coefficient that jumps by 100 across a slanted line
    // gather_size 0 here (the GPU's default gathers levels this small): every level that can
    // be is split.
    MultigridParameters parameters;
    std::vector<int> ranks;
    // Where > 0, gather_size is set to this level's size (one process's levels): the levels
    // before it split, it and the rest gathered.
    std::size_t gathered_by_size = 0;
    // Per rank count of `ranks` (where given): the first level whose slabs would be thinner
    // than the ghost planes. It and the levels after it are held by as many ranks as can hold
    // ghost_layers planes each, until that is one rank: from there they are gathered.
    std::vector<std::size_t> first_thin = {};
};

std::vector<Case> cases() {
    const auto dirichlet = Side::dirichlet, neumann = Side::neumann;
    MultigridParameters chebyshev_w;
    chebyshev_w.smoother = MultigridSmoother::chebyshev;
    chebyshev_w.cycle = MultigridCycle::w;
    chebyshev_w.pre_sweeps = chebyshev_w.post_sweeps = 2;
    MultigridParameters f_small;
    f_small.cycle = MultigridCycle::f;
    f_small.coarsest_size = 16;
    MultigridParameters nonsymmetric;
    nonsymmetric.symmetric = false;
    MultigridParameters split;  // the defaults
    // Levels down to 16 points, so that the split axis's slabs get thin (an F-cycle, and a
    // W-cycle: the ranks that hold none of a level visit the levels below as the others do).
    MultigridParameters thin_f;
    thin_f.coarsest_size = 16;
    thin_f.cycle = MultigridCycle::f;
    MultigridParameters thin_w = thin_f;
    thin_w.cycle = MultigridCycle::w;
    for (MultigridParameters* p :
         {&chebyshev_w, &f_small, &nonsymmetric, &split, &thin_f, &thin_w}) {
        p->gather_size = 0;
    }
    return {
        // Several split levels, then the rest gathered (2 ranks: 32, 16, 8 planes each).
        {"2D varying, Dirichlet",
         {64, 64, 1},
         2,
         {1.0 / 65, 1.0 / 65, 1},
         {dirichlet, dirichlet, dirichlet, dirichlet, dirichlet, dirichlet},
         true,
         split,
         {2, 3}},
        // Neumann ends along the split axis (the coarse points' choice at its ends), uneven
        // slabs, a W-cycle with Chebyshev.
        {"2D Neumann in y, Chebyshev W",
         {33, 45, 1},
         2,
         {0.03, 0.025, 1},
         {dirichlet, dirichlet, neumann, neumann, dirichlet, dirichlet},
         false,
         chebyshev_w,
         {2, 4}},
        // Strong coupling along x only: the split axis is not coarsened (semi-coarsening).
        {"2D anisotropic",
         {40, 36, 1},
         2,
         {0.01, 0.1, 1},
         {dirichlet, dirichlet, dirichlet, dirichlet, dirichlet, dirichlet},
         false,
         nonsymmetric,
         {3}},
        // 3D, levels down to 16 points (F-cycle).
        {"3D varying",
         {20, 18, 26},
         3,
         {0.05, 0.05, 0.04},
         {dirichlet, neumann, dirichlet, dirichlet, neumann, dirichlet},
         true,
         f_small,
         {2, 3}},
        // Fewer planes per rank than the ghost planes: the finest level is gathered.
        {"2D thin slabs",
         {21, 20, 1},
         2,
         {0.05, 0.05, 1},
         {dirichlet, dirichlet, dirichlet, dirichlet, dirichlet, dirichlet},
         false,
         split,
         {4}},
        // Thin slabs below the finest level: 97 planes over 4 ranks (24-25 each), 49 (12-13),
        // 25 (6-7), then level 3's 13 planes (3-4 a rank) split anew over the 2 ranks that can
        // hold 6 each, then 6 gathered; over 5 ranks 97 (19-20), 49 (9-10), then level 2's 25
        // (5 a rank) over 4 ranks, 13 over 2.
        {"2D thin coarse slabs, split over fewer ranks, F-cycle",
         {24, 97, 1},
         2,
         {0.01, 0.01, 1},
         {dirichlet, dirichlet, neumann, neumann, dirichlet, dirichlet},
         true,
         thin_f,
         {4, 5},
         0,
         {3, 2}},
        // The same in 3D with a W-cycle (the ranks that hold none of a level visit the gathered
        // levels below it as often as the others): 3 ranks, 49 planes (16-17), 25 (8-9), then
        // level 2's 13 (4-5 a rank) over 2.
        {"3D thin coarse slabs, W-cycle",
         {9, 10, 49},
         3,
         {0.02, 0.02, 0.02},
         {dirichlet, dirichlet, dirichlet, dirichlet, dirichlet, neumann},
         false,
         thin_w,
         {3},
         0,
         {2}},
        // Split at the finest level, gathered from the second on by its size.
        {"2D varying, gathered by size",
         {64, 64, 1},
         2,
         {1.0 / 65, 1.0 / 65, 1},
         {dirichlet, dirichlet, dirichlet, dirichlet, dirichlet, dirichlet},
         true,
         split,
         {2, 3},
         1},
    };
}

DiaData<double> matrix_of(const Case& c) {
    const auto k = [&](double x, double y, double) {
        return c.varying && x + 0.7 * y > 0.55 ? 100.0 : 1.0;
    };
    return to_dia(testing::box_diffusion_matrix(c.points, c.dimension, c.h, k, c.sides));
}

GridBox box_of(const Case& c) {
    return GridBox{c.dimension, {c.points[0], c.points[1], c.points[2]}};
}

std::int64_t plane_of(const GridBox& box) {
    return box.dimension == 2 ? box.points[0] : box.points[0] * box.points[1];
}

// The first cycle as a preconditioner takes it (from zero, x not read), the second from its result.
TEST(MultigridOverRanks, ACycleIsOneProcessCycle) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    for (const Case& c : cases()) {
        SCOPED_TRACE(c.name);
        const DiaData<double> a = matrix_of(c);
        const GridBox box = box_of(c);
        const auto n = static_cast<std::size_t>(a.n);
        std::vector<double> b(n);
        std::mt19937 generator(7);
        for (double& v : b) v = std::uniform_real_distribution<double>(-1, 1)(generator);
        const auto backend = test_backend();
        const MultigridHierarchy<double> whole(backend, a, box, c.parameters);
        MultigridParameters parameters = c.parameters;
        if (c.gathered_by_size > 0) {
            ASSERT_GT(whole.levels().size(), c.gathered_by_size);
            parameters.gather_size = whole.levels()[c.gathered_by_size].box.size();
        }
        Array<double> x1(backend, n);
        fill(x1, 0.0);
        whole.cycle(Array<double>::from_host(backend, b), x1);
        // A second cycle from the first's result (x not zero on entry).
        whole.cycle(Array<double>::from_host(backend, b), x1);
        const std::vector<double> u1 = x1.to_host();
        // A preconditioner's first cycle starts from zero whatever x holds (NaN here).
        Array<double> x0(backend, n);
        fill(x0, std::numeric_limits<double>::quiet_NaN());
        whole.cycle_from_zero(Array<double>::from_host(backend, b), x0);
        whole.cycle(Array<double>::from_host(backend, b), x0);
        EXPECT_EQ(x0.to_host(), u1);
        double scale = 0;
        for (const double v : u1) scale = std::max(scale, std::abs(v));
        for (const int count : c.ranks) {
            SCOPED_TRACE(std::to_string(count) + " ranks");
            const std::vector<std::int64_t> first = block_starts(a.n, count, plane_of(box));
            ThreadRanks ranks(count);
            ranks.run([&](std::shared_ptr<const Communicator> communicator) {
                const int r = communicator->rank();
                const std::int64_t begin = first[r], rows = first[r + 1] - first[r];
                const auto on = test_backend(communicator);
                const MultigridHierarchy<double> split(on, block_of(a, begin, rows), box,
                                                       parameters);
                // The same levels as one process.
                ASSERT_EQ(split.levels().size(), whole.levels().size());
                for (std::size_t l = 0; l < whole.levels().size(); ++l) {
                    EXPECT_EQ(split.levels()[l].box.describe(), whole.levels()[l].box.describe());
                }
                EXPECT_NE(split.describe().find("over " + std::to_string(count) + " ranks"),
                          std::string::npos)
                    << split.describe();
                if (!c.first_thin.empty()) {
                    const auto which = static_cast<std::size_t>(
                        std::find(c.ranks.begin(), c.ranks.end(), count) - c.ranks.begin());
                    std::string fewer = "(";
                    int holders = count;
                    std::size_t l = c.first_thin[which];
                    for (; l < whole.levels().size(); ++l) {
                        const GridBox& level = whole.levels()[l].box;
                        holders =
                            std::min(holders, static_cast<int>(level.points[level.dimension - 1] /
                                                               multigrid::ghost_layers));
                        if (holders < 2) break;
                        fewer += level.describe() + " on " + std::to_string(holders) + ", ";
                    }
                    ASSERT_LT(l, whole.levels().size());
                    fewer += "from " + whole.levels()[l].box.describe() + " gathered";
                    EXPECT_NE(split.describe().find(fewer), std::string::npos)
                        << split.describe() << "\n expected " << fewer;
                }
                if (c.gathered_by_size > 0) {
                    const std::string from =
                        "from " + whole.levels()[c.gathered_by_size].box.describe() + " gathered";
                    EXPECT_NE(split.describe().find(from), std::string::npos) << split.describe();
                }
                const auto part = std::span<const double>(b).subspan(
                    static_cast<std::size_t>(begin), static_cast<std::size_t>(rows));
                Array<double> x(on, static_cast<std::size_t>(rows));
                fill(x, std::numeric_limits<double>::quiet_NaN());  // not read: from zero
                split.cycle_from_zero(Array<double>::from_host(on, part), x);
                split.cycle(Array<double>::from_host(on, part), x);
                const std::vector<double> got = x.to_host();
                for (std::int64_t i = 0; i < rows; ++i) {
                    ASSERT_NEAR(got[static_cast<std::size_t>(i)],
                                u1[static_cast<std::size_t>(begin + i)], 1e-12 * scale)
                        << "row " << begin + i << " of rank " << r;
                }
            });
        }
    }
}

// A coarse level too thin for every rank, split anew over fewer ranks, that then does not
// coarsen (here: positive couplings, which the interpolation does not follow, leave the next
// level without any) is gathered after all, each rank's restriction writing its own planes of
// it: still one process's cycle.
TEST(MultigridOverRanks, ALevelSplitAnewThatDoesNotCoarsenIsGathered) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const GridBox box{2, {7, 49, 1}};
    DiaData<double> a{box.size(), {-7, -1, 0, 1, 7}, {}};
    a.values.assign(5 * static_cast<std::size_t>(a.n), 0.0);
    for (std::int64_t i = 0; i < a.n; ++i) {
        const std::int64_t x = i % 7, y = i / 7;
        a.at(2, i) = 5.0;
        if (y > 0) a.at(0, i) = 1.0;
        if (x > 0) a.at(1, i) = 1.0;
        if (x < 6) a.at(3, i) = 1.0;
        if (y < 48) a.at(4, i) = 1.0;
    }
    MultigridParameters parameters;
    parameters.gather_size = 0;
    parameters.coarsest_size = 16;
    const auto backend = test_backend();
    const MultigridHierarchy<double> whole(backend, a, box, parameters);
    ASSERT_EQ(whole.levels().size(), 2u) << whole.describe();  // the second does not coarsen
    std::vector<double> b(static_cast<std::size_t>(a.n));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(0.3 * static_cast<double>(i));
    Array<double> x1(backend, b.size());
    whole.cycle_from_zero(Array<double>::from_host(backend, b), x1);
    const std::vector<double> u1 = x1.to_host();
    // 5 ranks: 9-10 planes each; the next level's 25 planes would leave them 5, so they go to
    // 4 ranks, and are then gathered.
    const std::vector<std::int64_t> first = block_starts(a.n, 5, 7);
    ThreadRanks ranks(5);
    ranks.run([&](std::shared_ptr<const Communicator> communicator) {
        const int r = communicator->rank();
        const std::int64_t begin = first[r], rows = first[r + 1] - first[r];
        const auto on = test_backend(communicator);
        const MultigridHierarchy<double> split(on, block_of(a, begin, rows), box, parameters);
        EXPECT_NE(split.describe().find("from " + whole.levels()[1].box.describe() + " gathered"),
                  std::string::npos)
            << split.describe();
        const auto part = std::span<const double>(b).subspan(static_cast<std::size_t>(begin),
                                                             static_cast<std::size_t>(rows));
        Array<double> x(on, static_cast<std::size_t>(rows));
        split.cycle_from_zero(Array<double>::from_host(on, part), x);
        const std::vector<double> got = x.to_host();
        for (std::int64_t i = 0; i < rows; ++i) {
            ASSERT_NEAR(got[static_cast<std::size_t>(i)], u1[static_cast<std::size_t>(begin + i)],
                        1e-12)
                << "row " << begin + i << " of rank " << r;
        }
    });
}

// gather_size left to the back-end: a GPU gathers a level of at most 65536 points whole on every
// rank (its halo exchanges would cost more than its work), the CPU splits it; 0 splits on both.
TEST(MultigridOverRanks, TheBackEndChoosesWhereToGather) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto one = [](double, double, double) { return 1.0; };
    const DiaData<double> a = to_dia(testing::diffusion_matrix(95, 2, one));  // 9025 points
    const GridBox box{2, {95, 95, 1}};
    const bool gpu = test_backend()->kind() == BackendKind::cuda;
    MultigridParameters automatic, split;
    split.gather_size = 0;
    EXPECT_EQ(gather_size_on(automatic, BackendKind::cuda), 65536);
    EXPECT_EQ(gather_size_on(automatic, BackendKind::cpu), 0);
    EXPECT_EQ(gather_size_on(split, BackendKind::cuda), 0);
    const std::vector<std::int64_t> first = block_starts(a.n, 2, box.points[0]);
    ThreadRanks ranks(2);
    ranks.run([&](std::shared_ptr<const Communicator> communicator) {
        const int r = communicator->rank();
        const auto on = test_backend(communicator);
        const auto block = block_of(a, first[r], first[r + 1] - first[r]);
        const MultigridHierarchy<double> chosen(on, block, box, automatic);
        const MultigridHierarchy<double> all_split(on, block, box, split);
        const bool finest_gathered =
            chosen.describe().find("every level gathered") != std::string::npos;
        EXPECT_EQ(finest_gathered, gpu) << chosen.describe();
        EXPECT_EQ(all_split.describe().find("every level gathered"), std::string::npos)
            << all_split.describe();
    });
}

// CG with the multigrid the plan chooses (over ranks as on one process; the cycle in float on a
// GPU, in double on the CPU), and with the cycle in float everywhere (over ranks r is rounded
// straight into the finest level's window, and z widened from it), its levels split or the
// finest gathered whole: one process's iterations, and its solution.
TEST(MultigridOverRanks, CgTakesOneProcessIterations) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto one = [](double, double, double) { return 1.0; };
    const DiaData<double> a = to_dia(testing::diffusion_matrix(95, 2, one));
    const GridBox box{2, {95, 95, 1}};
    const auto n = static_cast<std::size_t>(a.n);
    std::vector<double> b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = std::sin(0.37 * static_cast<double>(i)) + 0.5;
    const std::optional<Precision> planned, in_float(Precision::single_precision);
    // Split where it can be (gather_size 0), or gathered whole from the finest level (9025
    // points).
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
        // One process: a single rank.
        const testing::RankSolve whole = testing::solve_on_one_rank(a, b, plan, parameters);
        const SolveReport& reference = whole.report;
        ASSERT_TRUE(reference.converged());
        const std::vector<double>& u1 = whole.x;
        for (const int count : {2, 3, 4}) {
            SCOPED_TRACE(std::to_string(count) + " ranks");
            request.ranks = count;
            const SolverPlan split_plan = plan_solver(analyze(a), request);
            EXPECT_EQ(split_plan.first.name(), plan.first.name());
            const std::vector<std::int64_t> first = block_starts(a.n, count, box.points[0]);
            testing::solve_over_ranks(a, b, first, split_plan, parameters, [&](const auto& rank) {
                EXPECT_TRUE(rank.report.converged());
                const std::string& details = rank.report.attempts.back().preconditioner_details;
                if (precision) {
                    EXPECT_NE(details.find("in float"), std::string::npos) << details;
                }
                EXPECT_EQ(details.find("every level gathered") != std::string::npos,
                          gather_size > 0)
                    << details;
                // The cycle is one process's to rounding: the same count, or one more or fewer
                // where the last residual lies that close to the tolerance.
                EXPECT_LE(std::abs(rank.report.total_iterations() - reference.total_iterations()),
                          1);
                for (std::size_t i = 0; i < rank.x.size(); ++i) {
                    const double want = u1[static_cast<std::size_t>(rank.first) + i];
                    EXPECT_NEAR(rank.x[i], want, 1e-9 * (1 + std::abs(want)));
                }
            });
        }
    }
}

}  // namespace
}  // namespace simrun::solvers

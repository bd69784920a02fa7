// A matrix split over ranks (here threads of one process, tests/support/thread_ranks.hpp): the
// product of the blocks with their halo equals the whole product, and a solve over the ranks
// takes the iterations of one process to the same solution. Built per back-end: on CUDA the
// ranks share the GPU, and the halo goes through host staging as it does under MPI where ranks
// share a GPU (tests/backend/device_halo_test.cpp keeps it on the GPU).
#include "simrun/solvers/matrices/distributed_matrix.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
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
using testing::test_backend;
using testing::ThreadRanks;

// A banded matrix with random entries on the offsets of a 2D grid's stencil (+-1, +-width),
// the entries that would leave the matrix zero.
DiaData<double> random_band(std::int64_t n, int width, unsigned seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    DiaData<double> a{n, {-width, -1, 0, 1, width}, {}};
    a.values.resize(5 * static_cast<std::size_t>(n));
    for (int d = 0; d < 5; ++d) {
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t j = i + a.offsets[static_cast<std::size_t>(d)];
            a.at(d, i) = j >= 0 && j < n ? value(generator) : 0.0;
        }
    }
    return a;
}

TEST(DistributedMatrix, BlocksWithTheirHaloGiveTheWholeProduct) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const std::int64_t n = 61;
    const int width = 7;
    const DiaData<double> a = random_band(n, width, 11);
    std::vector<double> x(static_cast<std::size_t>(n));
    std::mt19937 generator(5);
    for (double& v : x) v = std::uniform_real_distribution<double>(-1, 1)(generator);
    std::vector<double> expected(static_cast<std::size_t>(n), 0.0);
    for (std::int64_t i = 0; i < n; ++i) {
        for (int d = 0; d < a.num_diagonals(); ++d) {
            const std::int64_t j = i + a.offsets[static_cast<std::size_t>(d)];
            if (j >= 0 && j < n) expected[i] += a.at(d, i) * x[static_cast<std::size_t>(j)];
        }
    }
    for (const int count : {2, 3, 4}) {
        SCOPED_TRACE(std::to_string(count) + " ranks");
        const std::vector<std::int64_t> first = block_starts(n, count);
        ThreadRanks ranks(count);
        ranks.run([&](std::shared_ptr<const Communicator> communicator) {
            const int r = communicator->rank();
            const std::int64_t begin = first[r], rows = first[r + 1] - first[r];
            const auto backend = test_backend(communicator);
            SplitBlock<double> split = split_block(block_of(a, begin, rows));
            // Only the stencil's +-width diagonals reach the neighbours (+-1 crosses too, where
            // its entry at the block's edge is nonzero).
            EXPECT_EQ(split.before.width, r == 0 ? 0 : width);
            EXPECT_EQ(split.after.width, r == count - 1 ? 0 : width);
            const DistributedMatrix<double> block(
                std::make_unique<DiaMatrix<double>>(backend, split.inner), std::move(split.before),
                std::move(split.after));
            const auto xs = std::span<const double>(x).subspan(static_cast<std::size_t>(begin),
                                                               static_cast<std::size_t>(rows));
            const Array<double> local = Array<double>::from_host(backend, xs);
            Array<double> y(backend, static_cast<std::size_t>(rows));
            block.apply(local, y);
            const std::vector<double> got = y.to_host();
            for (std::int64_t i = 0; i < rows; ++i) {
                const double want = expected[static_cast<std::size_t>(begin + i)];
                EXPECT_NEAR(got[static_cast<std::size_t>(i)], want, 1e-14 * (1 + std::abs(want)))
                    << "row " << begin + i;
            }
            // One halo exchange counted per product, with the rows each neighbour reads:
            // `width` rows of x to each neighbour.
            const CommunicationCost& halo = communicator->times().halo;
            const int neighbours = (r > 0 ? 1 : 0) + (r + 1 < count ? 1 : 0);
            EXPECT_EQ(halo.count, 1);
            EXPECT_EQ(halo.bytes_sent, static_cast<double>(neighbours * width * sizeof(double)));
            EXPECT_GE(halo.seconds, 0.0);
            block.apply(local, y);
            EXPECT_EQ(communicator->times().halo.count, 2);
        });
    }
}

TEST(DistributedMatrix, ABlockNarrowerThanTheBandIsRefusedOnEveryRank) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const DiaData<double> a = random_band(20, 7, 3);
    const std::vector<std::int64_t> first{0, 15, 20};  // rank 1: 5 rows, the band reaches 7
    ThreadRanks ranks(2);
    ranks.run([&](std::shared_ptr<const Communicator> communicator) {
        const int r = communicator->rank();
        const auto backend = test_backend(communicator);
        SplitBlock<double> split = split_block(block_of(a, first[r], first[r + 1] - first[r]));
        EXPECT_THROW(
            DistributedMatrix<double>(std::make_unique<DiaMatrix<double>>(backend, split.inner),
                                      std::move(split.before), std::move(split.after)),
            std::invalid_argument);
    });
}

// CG + Jacobi on a 2D Laplacian (a grid's stencil, the band nx wide) over 1 to 4 ranks: the
// iterations of one process (the sums differ only in rounding) and the same solution.
TEST(DistributedMatrix, SolveOverRanksTakesTheIterationsOfOneProcess) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto one = [](double, double, double) { return 1.0; };
    const DiaData<double> a = to_dia(testing::diffusion_matrix(14, 2, one));
    const auto n = static_cast<std::size_t>(a.n);
    std::vector<double> b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = std::sin(0.37 * static_cast<double>(i)) + 0.5;
    SolverRequest request = SolverRequest::parse("cg", "jacobi", "dia");
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-10;
    const SolverPlan plan = plan_solver(analyze(a), request);
    // One process: a single rank.
    const testing::RankSolve whole = testing::solve_on_one_rank(a, b, plan, parameters);
    const SolveReport& reference = whole.report;
    ASSERT_TRUE(reference.converged());
    const std::vector<double>& u1 = whole.x;
    for (const int count : {2, 3, 4}) {
        SCOPED_TRACE(std::to_string(count) + " ranks");
        request.ranks = count;
        const SolverPlan split_plan = plan_solver(analyze(a), request);
        const std::vector<std::int64_t> first = block_starts(a.n, count);
        std::vector<double> residuals(static_cast<std::size_t>(count));
        testing::solve_over_ranks(a, b, first, split_plan, parameters, [&](const auto& rank) {
            EXPECT_TRUE(rank.report.converged());
            EXPECT_EQ(rank.report.total_iterations(), reference.total_iterations());
            residuals[static_cast<std::size_t>(rank.rank)] =
                rank.report.result().relative_residual();
            for (std::size_t i = 0; i < rank.x.size(); ++i) {
                const double want = u1[static_cast<std::size_t>(rank.first) + i];
                EXPECT_NEAR(rank.x[i], want, 1e-12 * (1 + std::abs(want)));
            }
        });
        // The reductions are global: every rank saw the same residuals, to the bit.
        for (const double residual : residuals) EXPECT_EQ(residual, residuals[0]);
    }
}

// SSOR and ILU(0) over ranks are block Jacobi (each rank's of its own block): CG + SSOR on an
// SPD system with a jumping coefficient and BiCGStab + ILU(0) on a nonsymmetric one reach one
// process's solution on 2-4 ranks, in fewer iterations than with no preconditioner on as many
// ranks.
TEST(DistributedMatrix, BlockJacobiSsorAndIluReachOneProcessSolution) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto jump = [](double x, double y, double) { return x + y > 1.0 ? 50.0 : 1.0; };
    struct Case {
        const char* method;
        const char* preconditioner;
        DiaData<double> a;
    };
    const Case cases[] = {
        {"cg", "ssor", to_dia(testing::diffusion_matrix(28, 2, jump))},
        {"bicgstab", "ilu0", to_dia(testing::convection_diffusion_matrix(28, 20.0, -10.0))},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(std::string(c.method) + " + " + c.preconditioner);
        const auto n = static_cast<std::size_t>(c.a.n);
        std::vector<double> b(n);
        for (std::size_t i = 0; i < n; ++i) b[i] = std::cos(0.11 * static_cast<double>(i));
        MethodParameters parameters;
        parameters.criteria.relative_tolerance = 1e-10;
        parameters.criteria.max_iterations = 2000;
        const auto plan_for = [&](const char* preconditioner, int ranks) {
            SolverRequest request = SolverRequest::parse(c.method, preconditioner, "dia");
            request.ranks = ranks;
            return plan_solver(analyze(c.a), request);
        };
        const testing::RankSolve whole =
            testing::solve_on_one_rank(c.a, b, plan_for(c.preconditioner, 1), parameters);
        ASSERT_TRUE(whole.report.converged());
        for (const int count : {2, 3, 4}) {
            SCOPED_TRACE(std::to_string(count) + " ranks");
            const std::vector<std::int64_t> first = block_starts(c.a.n, count, 28);
            std::vector<std::int64_t> plain(static_cast<std::size_t>(count));
            testing::solve_over_ranks(
                c.a, b, first, plan_for("none", count), parameters, [&](const auto& rank) {
                    plain[static_cast<std::size_t>(rank.rank)] = rank.report.total_iterations();
                });
            testing::solve_over_ranks(
                c.a, b, first, plan_for(c.preconditioner, count), parameters,
                [&](const auto& rank) {
                    EXPECT_TRUE(rank.report.converged());
                    EXPECT_LT(rank.report.total_iterations(),
                              plain[static_cast<std::size_t>(rank.rank)]);
                    for (std::size_t i = 0; i < rank.x.size(); ++i) {
                        const double want = whole.x[static_cast<std::size_t>(rank.first) + i];
                        EXPECT_NEAR(rank.x[i], want, 1e-7 * (1 + std::abs(want)));
                    }
                });
        }
    }
}

// A^T split as A is: each rank's block of the transpose, from its block of A and its
// neighbours' rows, is the whole transpose's block (also where one rank's block carries a
// diagonal the others lack); and BiCG (which multiplies by A^T) over ranks takes one process's
// iterations to its solution.
TEST(DistributedMatrix, TransposeBlocksAreTheWholeTransposeAndBiCgRuns) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const DiaData<double> a = random_band(61, 7, 23);
    const DiaData<double> whole_transpose = transpose(a);
    for (const int count : {2, 3, 4}) {
        SCOPED_TRACE(std::to_string(count) + " ranks");
        const std::vector<std::int64_t> first = block_starts(a.n, count);
        ThreadRanks ranks(count);
        ranks.run([&](std::shared_ptr<const Communicator> communicator) {
            const int r = communicator->rank();
            const std::int64_t begin = first[r], rows = first[r + 1] - first[r];
            DiaData<double> mine = block_of(a, begin, rows);
            if (r == 0) {
                // A diagonal of zeros the other ranks lack: the blocks go on the union.
                mine.offsets.push_back(3);
                mine.values.resize(mine.values.size() + static_cast<std::size_t>(rows), 0.0);
            }
            const DiaData<double> got = transpose_block(*communicator, mine);
            const DiaData<double> want = block_of(whole_transpose, begin, rows);
            for (int d = 0; d < want.num_diagonals(); ++d) {
                const int g = got.find_diagonal(want.offsets[static_cast<std::size_t>(d)]);
                for (std::int64_t i = 0; i < rows; ++i) {
                    EXPECT_EQ(g >= 0 ? got.at(g, i) : 0.0, want.at(d, i))
                        << "offset " << want.offsets[static_cast<std::size_t>(d)] << ", row "
                        << begin + i;
                }
            }
        });
    }
    const DiaData<double> c = to_dia(testing::convection_diffusion_matrix(24, 15.0, 5.0));
    std::vector<double> b(static_cast<std::size_t>(c.n));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(0.23 * static_cast<double>(i));
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-10;
    SolverRequest request = SolverRequest::parse("bicg", "jacobi", "dia");
    const testing::RankSolve whole =
        testing::solve_on_one_rank(c, b, plan_solver(analyze(c), request), parameters);
    ASSERT_TRUE(whole.report.converged());
    for (const int count : {2, 4}) {
        SCOPED_TRACE(std::to_string(count) + " ranks");
        request.ranks = count;
        testing::solve_over_ranks(
            c, b, block_starts(c.n, count, 24), plan_solver(analyze(c), request), parameters,
            [&](const auto& rank) {
                EXPECT_TRUE(rank.report.converged());
                EXPECT_LE(
                    std::abs(rank.report.total_iterations() - whole.report.total_iterations()), 1);
                for (std::size_t i = 0; i < rank.x.size(); ++i) {
                    const double want = whole.x[static_cast<std::size_t>(rank.first) + i];
                    EXPECT_NEAR(rank.x[i], want, 1e-8 * (1 + std::abs(want)));
                }
            });
    }
}

// Gauss-Seidel over ranks is hybrid (Gauss-Seidel within each rank's block, Jacobi between the
// blocks): on an M-matrix (a Laplacian plus a shift) it reaches one process's solution, and in
// no more iterations than Jacobi over as many ranks (a regular splitting closer to A).
TEST(DistributedMatrix, HybridGaussSeidelReachesOneProcessSolution) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const std::int32_t m = 20;
    const DiaData<double> a = to_dia(testing::shifted_laplacian(m, -0.5));
    std::vector<double> b(static_cast<std::size_t>(a.n));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = 1.0 + std::sin(0.3 * static_cast<double>(i));
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-10;
    parameters.criteria.max_iterations = 3000;
    const auto plan_for = [&](const char* method, int ranks) {
        SolverRequest request = SolverRequest::parse(method, "none", "dia");
        request.ranks = ranks;
        return plan_solver(analyze(a), request);
    };
    const testing::RankSolve whole =
        testing::solve_on_one_rank(a, b, plan_for("sor", 1), parameters);
    ASSERT_TRUE(whole.report.converged());
    for (const int count : {2, 3, 4}) {
        SCOPED_TRACE(std::to_string(count) + " ranks");
        const std::vector<std::int64_t> first = block_starts(a.n, count, m);
        std::vector<std::int64_t> jacobi(static_cast<std::size_t>(count));
        testing::solve_over_ranks(
            a, b, first, plan_for("jacobi", count), parameters, [&](const auto& rank) {
                jacobi[static_cast<std::size_t>(rank.rank)] = rank.report.total_iterations();
            });
        testing::solve_over_ranks(
            a, b, first, plan_for("sor", count), parameters, [&](const auto& rank) {
                EXPECT_TRUE(rank.report.converged());
                EXPECT_LE(rank.report.total_iterations(),
                          jacobi[static_cast<std::size_t>(rank.rank)]);
                for (std::size_t i = 0; i < rank.x.size(); ++i) {
                    const double want = whole.x[static_cast<std::size_t>(rank.first) + i];
                    EXPECT_NEAR(rank.x[i], want, 1e-8 * (1 + std::abs(want)));
                }
            });
    }
}

}  // namespace
}  // namespace simrun::solvers

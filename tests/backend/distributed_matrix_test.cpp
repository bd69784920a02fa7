// A matrix split over ranks (here threads of one process, tests/support/thread_ranks.hpp): the
// product of the blocks with their halo equals the whole product, and a solve over the ranks
// takes the iterations of one process to the same solution. Built per back-end: on CUDA the
// ranks share the GPU, and the halo goes through host staging as it does under MPI where ranks
// share a GPU (tests/backend/device_halo_test.cpp keeps it on the GPU).
#include "simrun/solvers/distributed/distributed_matrix.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"
#include "support/grid_boxes.hpp"
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

// A matrix's nonzero entries: (row, column, value).
struct Entry {
    std::int64_t row, column;
    double value;
};

// a's nonzero entries, its rows and columns renumbered (row i becomes to[i]; none given: kept).
std::vector<Entry> entries_of(const DiaData<double>& a, const std::vector<std::int64_t>& to = {}) {
    std::vector<Entry> entries;
    const auto number = [&](std::int64_t i) {
        return to.empty() ? i : to[static_cast<std::size_t>(i)];
    };
    for (std::int64_t i = 0; i < a.n; ++i) {
        for (int d = 0; d < a.num_diagonals(); ++d) {
            const std::int64_t j = i + a.offsets[static_cast<std::size_t>(d)];
            if (j >= 0 && j < a.n && a.at(d, i) != 0.0) {
                entries.push_back({number(i), number(j), a.at(d, i)});
            }
        }
    }
    return entries;
}

// The product over the ranks of the blocks of a matrix (its entries in the ranks' numbering;
// `first`: the ranks' first rows, then the size) against the whole product; and the halo
// counted: one exchange per product, with the rows of x each other rank reads (derived from the
// entries).
void expect_whole_product(const std::vector<Entry>& a, const std::vector<std::int64_t>& first,
                          const std::function<SplitBlock<double>(const Communicator&)>& block_of_rank) {
    const std::int64_t n = first.back();
    const int count = static_cast<int>(first.size()) - 1;
    std::vector<double> x(static_cast<std::size_t>(n));
    std::mt19937 generator(5);
    for (double& v : x) v = std::uniform_real_distribution<double>(-1, 1)(generator);
    std::vector<double> expected(static_cast<std::size_t>(n), 0.0);
    const auto rank_of = [&](std::int64_t row) {
        return static_cast<int>(std::upper_bound(first.begin(), first.end(), row) -
                                first.begin()) -
               1;
    };
    // Per rank, the rows of x each other rank reads from it: (reader, row).
    std::vector<std::set<std::pair<int, std::int64_t>>> read(static_cast<std::size_t>(count));
    for (const Entry& e : a) {
        expected[static_cast<std::size_t>(e.row)] += e.value * x[static_cast<std::size_t>(e.column)];
        const int reader = rank_of(e.row), holder = rank_of(e.column);
        if (reader != holder) read[static_cast<std::size_t>(holder)].insert({reader, e.column});
    }
    ThreadRanks ranks(count);
    ranks.run([&](std::shared_ptr<const Communicator> communicator) {
        const int r = communicator->rank();
        const std::int64_t begin = first[r], rows = first[r + 1] - first[r];
        const auto backend = test_backend(communicator);
        SplitBlock<double> split = block_of_rank(*communicator);
        const DistributedMatrix<double> block(
            std::make_unique<DiaMatrix<double>>(backend, split.inner), std::move(split.outside));
        const auto xs = std::span<const double>(x).subspan(static_cast<std::size_t>(begin),
                                                           static_cast<std::size_t>(rows));
        const Array<double> local = Array<double>::from_host(backend, xs);
        Array<double> y(backend, static_cast<std::size_t>(rows));
        block.apply(local, y);
        const std::vector<double> got = y.to_host();
        for (std::int64_t i = 0; i < rows; ++i) {
            const double want = expected[static_cast<std::size_t>(begin + i)];
            EXPECT_NEAR(got[static_cast<std::size_t>(i)], want, 1e-14 * (1 + std::abs(want)))
                << "row " << begin + i << " on rank " << r;
        }
        // The neighbours: the ranks that read this block's rows (the patterns are symmetric).
        std::set<int> readers;
        for (const auto& [reader, row] : read[static_cast<std::size_t>(r)]) readers.insert(reader);
        EXPECT_EQ(block.neighbours(), std::vector<int>(readers.begin(), readers.end()));
        const CommunicationCost& halo = communicator->times().halo;
        EXPECT_EQ(halo.count, 1);
        EXPECT_EQ(halo.bytes_sent,
                  static_cast<double>(read[static_cast<std::size_t>(r)].size() * sizeof(double)));
        EXPECT_GE(halo.seconds, 0.0);
        block.apply(local, y);
        EXPECT_EQ(communicator->times().halo.count, 2);
    });
}

TEST(DistributedMatrix, BlocksWithTheirHaloGiveTheWholeProduct) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const std::int64_t n = 61;
    const DiaData<double> a = random_band(n, 7, 11);
    const auto blocks = [&](const std::vector<std::int64_t>& first) {
        return [&a, first](const Communicator& c) {
            const int r = c.rank();
            return split_block(block_of(a, first[r], first[r + 1] - first[r]));
        };
    };
    for (const int count : {2, 3, 4}) {
        SCOPED_TRACE(std::to_string(count) + " ranks");
        const std::vector<std::int64_t> first = block_starts(n, count);
        expect_whole_product(entries_of(a), first, blocks(first));
    }
    // A block narrower than the band (rank 1: 5 rows, the band 7 wide): ranks 0 and 2 read
    // each other's rows too.
    SCOPED_TRACE("a narrow block");
    const std::vector<std::int64_t> first{0, 27, 32, n};
    expect_whole_product(entries_of(a), first, blocks(first));
}

// A grid split into boxes, numbered box by box: a rank's rows couple to the faces of the boxes
// beside it, and with a stencil reaching diagonal neighbours to their edges and corners too.
TEST(DistributedMatrix, BoxesOfAGridWithTheirHaloGiveTheWholeProduct) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    struct Case {
        testing::GridBoxes grid;
        int dimension;
        bool diagonals;
    };
    const Case cases[] = {
        {{{11, 9, 1}, {2, 2, 1}}, 2, true},   // 2 x 2 boxes, uneven, 9 points
        {{{13, 7, 1}, {3, 2, 1}}, 2, false},  // 3 x 2 boxes, 5 points
        {{{7, 6, 8}, {2, 1, 2}}, 3, true},    // 2 x 1 x 2 boxes, 27 points
        {{{6, 7, 6}, {2, 2, 1}}, 3, false},   // 2 x 2 x 1 boxes, 7 points
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(std::to_string(c.grid.parts[0]) + " x " + std::to_string(c.grid.parts[1]) +
                     " x " + std::to_string(c.grid.parts[2]) + " boxes, " +
                     std::to_string(c.dimension) + "D");
        const auto steps = testing::grid_steps(c.dimension, c.diagonals);
        std::mt19937 generator(17);
        std::uniform_real_distribution<double> random(-1.0, 1.0);
        const DiaData<double> a = testing::grid_matrix(
            c.grid, steps, [&](std::int64_t, int) { return random(generator); });
        const std::vector<std::int64_t> to = c.grid.renumbering();
        expect_whole_product(entries_of(a, to), c.grid.firsts(), [&](const Communicator& ranks) {
            return testing::box_block(a, c.grid, steps, ranks.rank());
        });
        // A^T's blocks from A's (transpose_block), as the whole transpose's.
        expect_whole_product(entries_of(transpose(a), to), c.grid.firsts(),
                             [&](const Communicator& ranks) {
                                 return transpose_block(
                                     ranks, testing::box_block(a, c.grid, steps, ranks.rank()));
                             });
    }
}

// A coupling outside the matrix, or to the block's own rows among those outside it, is refused
// on every rank with the same message, naming the rank whose block has it.
TEST(DistributedMatrix, CouplingsOutsideTheMatrixOrInsideTheBlockAreRefusedOnEveryRank) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const DiaData<double> a = random_band(20, 3, 3);
    const std::vector<std::int64_t> first{0, 10, 20};
    for (const std::int64_t column : {std::int64_t{-11}, std::int64_t{10}, std::int64_t{4}}) {
        SCOPED_TRACE("rank 1 couples to its column " + std::to_string(column));
        std::vector<std::string> messages(2);
        ThreadRanks ranks(2);
        ranks.run([&](std::shared_ptr<const Communicator> communicator) {
            const int r = communicator->rank();
            const auto backend = test_backend(communicator);
            SplitBlock<double> split = split_block(block_of(a, first[r], first[r + 1] - first[r]));
            if (r == 1) split.outside.add(2, column, 1.0);
            try {
                DistributedMatrix<double>(std::make_unique<DiaMatrix<double>>(backend, split.inner),
                                          std::move(split.outside));
            } catch (const std::invalid_argument& e) {
                messages[static_cast<std::size_t>(r)] = e.what();
            }
        });
        EXPECT_EQ(messages[0], messages[1]);
        EXPECT_NE(messages[0].find("rank 1's block (10 rows): its row 2 couples to column " +
                                   std::to_string(10 + column)),
                  std::string::npos)
            << messages[0];
        EXPECT_NE(messages[0].find(column == 4 ? "inside its own block" : "outside the matrix"),
                  std::string::npos)
            << messages[0];
    }
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

// Over boxes (a grid's rows numbered box by box, each rank's block given split): CG + Jacobi on
// a Laplacian takes one process's iterations to its solution, and BiCG + Jacobi on a
// convection-diffusion operator (A^T from the boxes' couplings) reaches it too, in 2D and 3D.
TEST(DistributedMatrix, SolvesOverBoxesReachOneProcessSolution) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    struct Case {
        testing::GridBoxes grid;
        int dimension;
        const char* method;
        double convection;
    };
    const Case cases[] = {
        {{{14, 13, 1}, {2, 2, 1}}, 2, "cg", 0.0},
        {{{7, 8, 7}, {2, 1, 2}}, 3, "cg", 0.0},
        {{{14, 13, 1}, {3, 2, 1}}, 2, "bicg", 0.4},
        {{{8, 7, 7}, {2, 2, 1}}, 3, "bicg", 0.4},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(std::string(c.method) + " in " + std::to_string(c.dimension) + "D over " +
                     std::to_string(c.grid.ranks()) + " boxes");
        const auto steps = testing::grid_steps(c.dimension, false);
        // -1 to each neighbour (-1 -+ convection along x), 2d on the diagonal.
        const DiaData<double> a = testing::grid_matrix(c.grid, steps, [&](std::int64_t, int d) {
            const testing::GridStep& step = steps[static_cast<std::size_t>(d)];
            if (step == testing::GridStep{0, 0, 0}) return 2.0 * c.dimension + 0.01;
            return -1.0 - c.convection * step[0];
        });
        std::vector<double> b(static_cast<std::size_t>(a.n));
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(0.37 * static_cast<double>(i));
        MethodParameters parameters;
        parameters.criteria.relative_tolerance = 1e-10;
        SolverRequest request = SolverRequest::parse(c.method, "jacobi", "dia");
        const testing::RankSolve whole =
            testing::solve_on_one_rank(a, b, plan_solver(analyze(a), request), parameters);
        ASSERT_TRUE(whole.report.converged());
        // b and the solution in the ranks' numbering.
        const std::vector<std::int64_t> to = c.grid.renumbering();
        std::vector<double> b_ranks(b.size()), u_ranks(b.size());
        for (std::size_t i = 0; i < b.size(); ++i) {
            b_ranks[static_cast<std::size_t>(to[i])] = b[i];
            u_ranks[static_cast<std::size_t>(to[i])] = whole.x[i];
        }
        request.ranks = c.grid.ranks();
        const auto plan = plan_solver(analyze(a), request);
        testing::solve_blocks_over_ranks(
            [&](int r) { return testing::box_block(a, c.grid, steps, r); }, b_ranks,
            c.grid.firsts(), plan, parameters, [&](const testing::RankSolve& rank) {
                EXPECT_TRUE(rank.report.converged());
                EXPECT_LE(
                    std::abs(rank.report.total_iterations() - whole.report.total_iterations()),
                    c.convection == 0.0 ? 0 : 1);
                for (std::size_t i = 0; i < rank.x.size(); ++i) {
                    const double want = u_ranks[static_cast<std::size_t>(rank.first) + i];
                    EXPECT_NEAR(rank.x[i], want,
                                (c.convection == 0.0 ? 1e-12 : 1e-8) * (1 + std::abs(want)));
                }
            });
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

// A^T split as A is: each rank's block of the transpose, from its block of A and the other
// ranks' couplings into it, is the whole transpose's block (slabs here, boxes above, blocks
// narrower than the band too); and BiCG (which multiplies by A^T) over ranks takes one
// process's iterations to its solution.
TEST(DistributedMatrix, TransposeBlocksAreTheWholeTransposeAndBiCgRuns) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const DiaData<double> a = random_band(61, 7, 23);
    for (const int count : {2, 3, 4, 0}) {
        SCOPED_TRACE(count == 0 ? std::string("a narrow block") : std::to_string(count) + " ranks");
        const std::vector<std::int64_t> first =
            count == 0 ? std::vector<std::int64_t>{0, 27, 32, a.n} : block_starts(a.n, count);
        expect_whole_product(entries_of(transpose(a)), first, [&](const Communicator& ranks) {
            const int r = ranks.rank();
            return transpose_block(ranks,
                                   split_block(block_of(a, first[r], first[r + 1] - first[r])));
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

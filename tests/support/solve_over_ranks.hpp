#pragma once
// A solve over ranks as threads (thread_ranks.hpp): each rank its block of rows
// (rank_blocks.hpp) on the test back-end, from x = 0.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "support/rank_blocks.hpp"
#include "support/test_backend.hpp"
#include "support/thread_ranks.hpp"

namespace simrun::testing {

// What one rank's solve gave: its report, its rows of x, and where they start.
struct RankSolve {
    int rank = 0;
    std::int64_t first = 0;
    solvers::SolveReport report;
    std::vector<double> x;
    std::string halo_path;  // how its back-end's halo travelled (Backend::halo_path)
};

// Solves with `plan` over starts.size() - 1 ranks, rank r holding rows starts[r] ..
// starts[r + 1] - 1 of the ranks' numbering: its block from block_of_rank(r) (DIA rows with
// their couplings beyond the block, or a SplitBlock), its part of b (given in that numbering)
// from starts[r] on. check(const RankSolve&) runs on each rank's thread.
template <typename BlockOfRank, typename Check>
void solve_blocks_over_ranks(BlockOfRank&& block_of_rank, const std::vector<double>& b,
                             const std::vector<std::int64_t>& starts,
                             const solvers::SolverPlan& plan,
                             const solvers::MethodParameters& parameters, Check&& check) {
    ThreadRanks ranks(static_cast<int>(starts.size()) - 1);
    ranks.run([&](std::shared_ptr<const solvers::Communicator> communicator) {
        const int r = communicator->rank();
        const std::int64_t first = starts[r], rows = starts[r + 1] - starts[r];
        const auto on = test_backend(communicator);
        const solvers::LinearSystemSolver<double> solver(on, block_of_rank(r), plan, parameters);
        const auto part = std::span<const double>(b).subspan(static_cast<std::size_t>(first),
                                                             static_cast<std::size_t>(rows));
        solvers::Array<double> x(on, static_cast<std::size_t>(rows));
        solvers::fill(x, 0.0);
        const auto b_part = solvers::Array<double>::from_host(on, part);
        // Every rank's set-up done before any solves: ranks as threads share one CUDA context,
        // where freeing memory waits for the whole device, also for a neighbour's halo wait on
        // the GPU (SIMRUN_HALO=device) that this rank's solve would end.
        communicator->barrier();
        RankSolve result{r, first, solver.solve(b_part, x), {}, on->halo_path()};
        result.x = x.to_host();
        check(result);
    });
}

// Solves a x = b with `plan` over starts.size() - 1 ranks (rank r: rows starts[r] ..
// starts[r + 1] - 1 of a's numbering); check(const RankSolve&) runs on each rank's thread.
template <typename Check>
void solve_over_ranks(const solvers::DiaData<double>& a, const std::vector<double>& b,
                      const std::vector<std::int64_t>& starts, const solvers::SolverPlan& plan,
                      const solvers::MethodParameters& parameters, Check&& check) {
    solve_blocks_over_ranks([&](int r) { return block_of(a, starts[r], starts[r + 1] - starts[r]); },
                            b, starts, plan, parameters, std::forward<Check>(check));
}

// The same solve on one rank (the whole matrix): the reference the ranks' solves are held to.
inline RankSolve solve_on_one_rank(const solvers::DiaData<double>& a, const std::vector<double>& b,
                                   const solvers::SolverPlan& plan,
                                   const solvers::MethodParameters& parameters) {
    RankSolve whole;
    solve_over_ranks(a, b, {0, a.n}, plan, parameters, [&](const RankSolve& r) { whole = r; });
    return whole;
}

}  // namespace simrun::testing

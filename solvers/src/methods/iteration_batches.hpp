#pragma once
// Iterations issued to the back-end in batches, with no host wait inside a batch, for methods
// whose scalars stay on the back-end (cg_device_state.hpp). A batch of any length is issued as
// recorded runs of 1, 2, 4, ... 64 iterations (on CUDA: graphs, recorded once per length and
// run again while the buffers stay the same: one node when the back-end runs the iterations in
// one persistent kernel), and the length of the next batch follows the residual's decay, so
// that few iterations are issued past convergence.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "base/device_iteration_state.hpp"
#include "base/kernel_table.hpp"
#include "residual_monitor.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/matrices/linear_operator.hpp"
#include "simrun/solvers/methods/iterative_solver.hpp"
#include "simrun/solvers/preconditioners/preconditioner.hpp"

namespace simrun::solvers {

class IterationBatches {
public:
    static constexpr int max_batch = 64;
    // The caller's buffers the recorded kernels use (x, b: those that may change between
    // solves), which identify the recordings: when they change, the recordings are made again.
    using Buffers = std::array<const void*, 2>;

    // issue(count) issues the kernels of `count` iterations; `buffers` (below) identifies the
    // buffers they use (when it changes, the recordings are made again).
    IterationBatches(const Backend& backend, std::function<void(std::int64_t)> issue)
        : backend_(backend), issue_(std::move(issue)) {}

    // Issues `count` iterations (1 .. max_batch) without waiting for them.
    void issue(std::int64_t count, const Buffers& buffers);

    // How many iterations the next batch should have: enough to reach `target` at the rate
    // the last iterations of `history` (||r_0||, ||r_1||, ...) fell at, plus one, at most
    // `remaining` and max_batch; 8 while the history is too short to say.
    static std::int64_t next_length(const std::vector<double>& history, double target,
                                    std::int64_t remaining);

private:
    const Backend& backend_;
    std::function<void(std::int64_t)> issue_;
    Buffers buffers_{};
    std::array<std::unique_ptr<RecordedWork>, 7> runs_;  // runs_[b]: 2^b iterations
};

// What a method's fused path takes: the operator's rows and M's pointwise factors (null: M = I).
template <typename T>
struct FusedOperands {
    RowMatrixView<T> rows;
    const T* factors;
};

// The fused operands when the method may run fused: the parameters allow it (fused kernels,
// no compensated dots), the operator exposes its rows and M (null: I) is pointwise.
template <typename T>
std::optional<FusedOperands<T>> fused_operands(const LinearOperator<T>& a,
                                               const Preconditioner<T>* m,
                                               const MethodParameters& parameters) {
    if (!parameters.fused_kernels || parameters.compensated_dots) return std::nullopt;
    const std::optional<RowMatrixView<T>> rows = a.row_view();
    const std::optional<const T*> factors =
        m != nullptr ? m->pointwise_factors() : std::optional<const T*>(nullptr);
    if (!rows || !factors) return std::nullopt;
    return FusedOperands<T>{*rows, *factors};
}

// The back-end side of a solve whose scalars stay there: the State (a method's *Scalars), the
// workspace of its fused steps (which the method's kernels are given with their vectors), and
// its batches. issue(state, count) issues `count` iterations of the method's kernels.
template <typename State, typename T>
class DeviceIterations {
public:
    using Issue = std::function<void(State*, std::int64_t)>;

    DeviceIterations(const std::shared_ptr<const Backend>& backend, Issue issue)
        : backend_(*backend),
          state_(backend, 1),
          partials_(backend, fused_reduction_slots),
          ticket_(Array<unsigned>::from_host(backend, std::vector<unsigned>{0u})),
          batches_(*backend, [this, issue = std::move(issue)](std::int64_t count) {
              issue(state_.data(), count);
          }) {}

    FusedWorkspace<T> workspace() { return {partials_.data(), ticket_.data()}; }

    // Uploads s (running, iteration 0), then issues batches and replays the ||r_k|| they
    // record through the monitor until the state stops, asking the caller's interrupt hook
    // after each batch. Returns true when the monitor stopped the solve (converged, diverged,
    // non-finite, interrupted: result says which); false when the state
    // stopped for another reason, which s (the final state) holds for the caller to report.
    // `buffers` are the caller's buffers the kernels use (IterationBatches::Buffers).
    bool run(State& s, ResidualMonitor& monitor, const SolveResult& result,
             const IterationBatches::Buffers& buffers) {
        backend_.copy_from_host(state_.data(), &s, sizeof s);
        std::int64_t recorded = 0;  // iterations whose ||r|| the monitor has seen
        while (s.running()) {
            batches_.issue(IterationBatches::next_length(result.residual_history, monitor.target(),
                                                         s.max_iterations - recorded),
                           buffers);
            backend_.copy_to_host(&s, state_.data(), sizeof s);
            while (recorded < s.iteration) {
                ++recorded;
                const double residual = s.history[(recorded - 1) % residual_history_capacity];
                if (monitor.record(residual, recorded)) return true;
            }
            if (s.running() && monitor.interrupted()) return true;
        }
        return false;
    }

private:
    const Backend& backend_;
    Array<State> state_;
    Array<T> partials_;
    Array<unsigned> ticket_;
    IterationBatches batches_;
};

// A KernelTable entry that issues `count` iterations of a fused method (cg_iterations, ...).
template <typename State, typename T, typename Vectors>
using IterationsEntry = void (*KernelTable<T>::*)(const Backend&, const RowMatrixView<T>&,
                                                  const Vectors&, State*, std::int64_t);

// What a fused method keeps between solves: its DeviceIterations (made at the first solve) and
// the matrix view and vectors the recorded batches read (set before each solve's first batch).
// Each method's FusedState (declared in its public header) is one of these.
template <typename State, typename Vectors, typename T>
struct FusedIterations {
    std::unique_ptr<DeviceIterations<State, T>> device;
    Vectors vectors{};
    RowMatrixView<T> view{};
};

// The method's fused state, made when first needed, with its DeviceIterations issuing `entry`
// on the state's view and vectors.
template <typename Fused, typename State, typename T, typename Vectors>
Fused& fused_iterations(std::unique_ptr<Fused>& fused,
                        const std::shared_ptr<const Backend>& backend,
                        IterationsEntry<State, T, Vectors> entry) {
    if (!fused) {
        fused = std::make_unique<Fused>();
        FusedIterations<State, Vectors, T>& f = *fused;
        f.device = std::make_unique<DeviceIterations<State, T>>(
            backend, [b = backend.get(), entry, &f](State* s, std::int64_t count) {
                (b->template kernels<T>().*entry)(*b, f.view, f.vectors, s, count);
            });
    }
    return *fused;
}

// A fused method's state before its first iteration: the monitor's limits, no iteration done,
// running (each method's phase enum has running = 0).
template <typename State>
State initial_state(const ResidualMonitor& monitor, std::int64_t max_iterations) {
    State s{};
    s.target = monitor.target();
    s.divergence = monitor.divergence();
    s.max_iterations = max_iterations;
    return s;
}

// The start of a fused method: r = b - A x recorded as iteration 0. Returns true when the
// solve ends there: the initial guess meets the criteria, or no iteration is allowed
// (status max_iterations).
template <typename T>
bool start_fused(ResidualMonitor& monitor, const LinearOperator<T>& a, const Array<T>& b,
                 const Array<T>& x, Array<T>& r, const MethodParameters& parameters,
                 SolveResult& result) {
    if (monitor.start(a, b, x, r, false)) return true;
    if (parameters.criteria.max_iterations >= 1) return false;
    result.status = SolveStatus::max_iterations;
    return true;
}

}  // namespace simrun::solvers

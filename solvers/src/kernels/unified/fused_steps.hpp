#pragma once
// A step of a method whose scalars stay on the back-end (cg_device_state.hpp): a pass over the
// rows that accumulates partial sums, then a finish that turns their totals into the next
// scalars (or stops the solve). A step is a struct with
//   static constexpr int sums;                        // at most fused_step_sums
//   Context setup(const State& state) const;          // the scalars its rows need
//   void row(std::int64_t i, const Context&, T (&partial)[sums]) const;
//   void finish(State& state, const T (&totals)[sums]) const;
// all SIMRUN_HOST_DEVICE; State has `bool running() const`. An iteration is a fixed sequence of
// steps, and each back-end's
//   fused_iterations<T>(backend, n, State* state, FusedWorkspace<T> workspace, count, steps...)
// runs `count` iterations of them (none once state->running() is false): setup once per thread
// (or chunk), row for every i in [0, n), then finish once, with the sums over all rows added in
// an order fixed by n, so a solve gives the same bits every run (the workspace:
// device_iteration_state.hpp).
#include <cstdint>

#include "device_math.hpp"
#include "iteration_decisions.hpp"
#include "base/device_iteration_state.hpp"
#include "simrun/solvers/base/host_device.hpp"

namespace simrun::solvers {

// The last step's record of an iteration: ||r_k|| into the state's history (k = 1, 2, ...), and
// whether the solve stops there as ResidualMonitor::stop_at decides on the host (non-finite,
// converged or diverged), so that the host's replay of the history reaches the same verdict.
template <typename State>
SIMRUN_HOST_DEVICE bool record_residual(State& s, std::int64_t k, double residual) {
    s.iteration = k;
    s.history[(k - 1) % residual_history_capacity] = residual;
    return residual_verdict(residual, s.target, s.divergence) != ResidualVerdict::go_on;
}

}  // namespace simrun::solvers

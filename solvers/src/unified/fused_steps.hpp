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
#include "simrun/solvers/cg_device_state.hpp"

#pragma once
// The state of a weighted-Jacobi solve kept in the back-end's memory (as cg_device_state.hpp is
// for CG): one step per iteration forms r_k = b - A x_k row by row, writes
// x_{k+1} = x_k + omega D^-1 r_k into the other of two buffers and sums ||r_k||^2; its finish
// records ||r_k|| and decides whether the solve goes on. The host records ||r_0|| itself (the
// monitor's start), so the first step only updates.
#include <cstdint>

#include "base/device_iteration_state.hpp"
#include "simrun/solvers/base/host_device.hpp"

namespace simrun::solvers {

enum class JacobiPhase : int {
    running = 0,
    residual_stop,   // converged, diverged or non-finite ||r||: the host's monitor says which
    max_iterations,  // the iteration limit came first
};

template <typename T>
struct JacobiScalars {
    // Set by the host before the first iteration (ResidualMonitor's limits).
    double target;      // stop when ||r|| <= target
    double divergence;  // ... or when ||r|| > divergence
    std::int64_t max_iterations;
    // Advanced on the back-end.
    std::int64_t iteration;  // the last k whose ||r_k|| is recorded
    std::int64_t current;    // k of the iterate x_k the next step reads (x[k % 2])
    JacobiPhase phase;
    double history[residual_history_capacity];  // ||r_k|| at history[(k - 1) % capacity]

    SIMRUN_HOST_DEVICE bool running() const { return phase == JacobiPhase::running; }
};

// The vectors of one solve, on the back-end.
template <typename T>
struct JacobiVectors {
    std::int64_t n;
    const T* inverse_diagonal;
    const T* b;
    T* x[2];  // x_k in x[k % 2]; x[0] is the caller's x
    T omega;
    FusedWorkspace<T> workspace;
};

}  // namespace simrun::solvers

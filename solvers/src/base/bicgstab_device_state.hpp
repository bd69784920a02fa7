#pragma once
// The state of a BiCGStab solve kept in the back-end's memory (as cg_device_state.hpp is for
// CG): each of an iteration's three steps reads the scalars the previous one left, the last
// block of its reduction (or every block of a persistent kernel) computes the next ones, and
// the update step records ||r|| and decides whether the solve goes on.
#include <cstdint>

#include "base/device_iteration_state.hpp"
#include "simrun/solvers/base/host_device.hpp"

namespace simrun::solvers {

// Where the solve stands. Anything but running makes the kernels no-ops.
enum class BiCgStabPhase : int {
    running = 0,
    residual_stop,     // converged, diverged or non-finite ||r||: the host's monitor says which
    max_iterations,    // the iteration limit came first
    rho_non_finite,    // r0'r is NaN or Inf
    rho_zero,          // r0'r = 0: r is orthogonal to the shadow residual
    r0v_non_finite,    // r0'v is NaN or Inf
    r0v_zero,          // r0'v = 0: alpha is undefined
    omega_non_finite,  // t't or t's is NaN or Inf
    omega_zero,        // t't = 0 or t's = 0: omega vanishes or is undefined
};

template <typename T>
struct BiCgStabScalars {
    // Set by the host before the first iteration (ResidualMonitor's limits).
    double target;      // stop when ||r|| <= target
    double divergence;  // ... or when ||r|| > divergence
    std::int64_t max_iterations;
    // Advanced on the back-end.
    std::int64_t iteration;  // iterations completed
    BiCgStabPhase phase;
    T rho;    // r0'r of the current residual
    T alpha;  // rho / r0'v of the current iteration
    T omega;  // t's / t't of the current iteration (0 when it ends at its half step)
    T beta;   // (rho_next / rho) (alpha / omega): weight of the old direction in the next one
    T breakdown_value;
    // ||s|| when it met the tolerance: the iteration ends at its half step (x += alpha M p,
    // r = s, omega = 0), and records this norm; negative otherwise.
    double half_step_residual;
    double history[residual_history_capacity];  // ||r_k|| at history[(k - 1) % capacity]

    SIMRUN_HOST_DEVICE bool running() const { return phase == BiCgStabPhase::running; }
};

// The vectors of one solve, on the back-end. s = r - alpha v is never stored: the steps that
// need it form it from r and v.
template <typename T>
struct BiCgStabVectors {
    std::int64_t n;
    const T* factors;  // pointwise preconditioner M = diag(factors) (Jacobi); null: M = I
    T* x;
    T* r;
    const T* r0;  // the shadow residual
    T* p[2];      // iteration k + 1 reads direction p[k % 2] and writes p[(k + 1) % 2]
    T* v[2];      // ... and v = A M p the same way
    T* t;         // A M s
    FusedWorkspace<T> workspace;
};

}  // namespace simrun::solvers

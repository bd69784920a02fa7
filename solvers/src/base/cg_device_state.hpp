#pragma once
// The state of a conjugate-gradient solve kept in the back-end's memory, so that iterations run
// one after another with no round trip to the host: each step reads the scalars the previous
// one left (alpha, beta, rho), the last block of each reduction (or every block of a persistent
// kernel) computes the next ones, records ||r|| and decides whether the solve goes on. The host
// issues a batch of iterations, then reads this state once (kernels issued after the solve stopped
// do nothing).
#include <cstdint>

#include "base/device_iteration_state.hpp"
#include "simrun/solvers/base/host_device.hpp"
#include "simrun/solvers/base/matrix_views.hpp"

namespace simrun::solvers {

// Where the solve stands. Anything but running makes the kernels no-ops.
enum class CgPhase : int {
    running = 0,
    residual_stop,         // converged, diverged or non-finite ||r||: the host's monitor says which
    max_iterations,        // the iteration limit came first
    direction_non_finite,  // p'Ap or rho is NaN or Inf
    direction_indefinite,  // p'Ap <= 0: A is not positive definite
    residual_indefinite,   // r'Mr <= 0 with r != 0: M is not positive definite
};

template <typename T>
struct CgScalars {
    // Set by the host before the first iteration (ResidualMonitor's limits).
    double target;      // stop when ||r|| <= target
    double divergence;  // ... or when ||r|| > divergence
    std::int64_t max_iterations;
    // Advanced on the back-end.
    std::int64_t iteration;  // iterations completed
    CgPhase phase;
    T rho;    // r'z of the current residual (z = M r)
    T alpha;  // rho / p'Ap of the current iteration
    T beta;   // rho_next / rho: weight of the old direction in the next one
    T breakdown_value;
    double history[residual_history_capacity];  // ||r_k|| at history[(k - 1) % capacity]

    SIMRUN_HOST_DEVICE bool running() const { return phase == CgPhase::running; }
};

// The vectors of one solve, on the back-end.
template <typename T>
struct CgVectors {
    std::int64_t n;
    const T* factors;  // pointwise preconditioner z = factors .* r (Jacobi); null: z = r
    T* x;
    T* r;
    T* q;     // A p
    T* p[2];  // iteration k + 1 reads direction p[k % 2] and writes p[(k + 1) % 2]
    FusedWorkspace<T> workspace;
};

// The vectors of one solve preconditioned by multicolour SSOR (z = M r: a forward then a
// backward sweep from z = 0, SsorPreconditioner), on the back-end. The iterations update p in
// place and keep z = M r stored, unlike the pointwise case, where z is formed row by row.
template <typename T>
struct CgSweepVectors {
    std::int64_t n;
    MulticolourSweepsView<T> m;
    bool product_from_sweeps;  // m holds A's entries (Preconditioner::sweeps_hold): A p from m
    T* x;
    T* r;
    T* z;
    T* p;
    T* q;  // A p
};

}  // namespace simrun::solvers

#pragma once
// The decisions an iteration takes, written once for the reference loops (methods/) and the
// fused steps (unified/*_kernels.inc.hpp): whether a residual norm stops the solve, and the
// checks of CG and BiCGStab in their order. The reference applies them to scalars it computed on
// the host, the fused finishes to the totals of their reductions, so both reach the same verdict by
// construction rather than by keeping two copies in step.
#include <cstdint>

#include "device_math.hpp"
#include "base/bicgstab_device_state.hpp"
#include "base/cg_device_state.hpp"
#include "simrun/solvers/base/host_device.hpp"

namespace simrun::solvers {

enum class ResidualVerdict { go_on, non_finite, converged, diverged };

// ||r_k|| against the stopping limits, in ResidualMonitor's order: NaN or Inf, then the
// tolerance (||r|| <= target), then divergence (||r|| > divergence).
SIMRUN_HOST_DEVICE inline ResidualVerdict residual_verdict(double residual, double target,
                                                           double divergence) {
    if (!is_finite(residual)) return ResidualVerdict::non_finite;
    if (residual <= target) return ResidualVerdict::converged;
    if (residual > divergence) return ResidualVerdict::diverged;
    return ResidualVerdict::go_on;
}

// CG after p'Ap: go on with alpha = rho / p'Ap, or stop on a non-finite p'Ap or rho, or on
// p'Ap <= 0 (A is not positive definite along p).
template <typename T>
SIMRUN_HOST_DEVICE CgPhase cg_direction_phase(T pq, T rho) {
    if (!is_finite(pq) || !is_finite(rho)) return CgPhase::direction_non_finite;
    if (pq <= T(0)) return CgPhase::direction_indefinite;
    return CgPhase::running;
}

// CG after the update of iteration k: the residual check on ||r_k|| first (its verdict is the
// monitor's), then r'Mr > 0 (M positive definite), then the iteration limit.
template <typename T>
SIMRUN_HOST_DEVICE CgPhase cg_update_phase(bool residual_stops, T rz, std::int64_t k,
                                           std::int64_t max_iterations) {
    if (residual_stops) return CgPhase::residual_stop;
    if (rz <= T(0)) return CgPhase::residual_indefinite;
    if (k >= max_iterations) return CgPhase::max_iterations;
    return CgPhase::running;
}

// BiCGStab before a direction: rho = r0'r finite and nonzero (zero: r is orthogonal to the
// shadow residual).
template <typename T>
SIMRUN_HOST_DEVICE BiCgStabPhase bicgstab_rho_phase(T rho) {
    if (!is_finite(rho)) return BiCgStabPhase::rho_non_finite;
    if (rho == T(0)) return BiCgStabPhase::rho_zero;
    return BiCgStabPhase::running;
}

// BiCGStab after v = A M p: r0'v finite and nonzero (alpha = rho / r0'v).
template <typename T>
SIMRUN_HOST_DEVICE BiCgStabPhase bicgstab_alpha_phase(T r0v) {
    if (!is_finite(r0v)) return BiCgStabPhase::r0v_non_finite;
    if (r0v == T(0)) return BiCgStabPhase::r0v_zero;
    return BiCgStabPhase::running;
}

// BiCGStab after s = r - alpha v: the half step ends the iteration (x += alpha M p, r = s) when
// ||s|| meets the tolerance; t = A M s is needed only otherwise.
SIMRUN_HOST_DEVICE inline bool bicgstab_half_step(double s_norm, double target) {
    return s_norm <= target;
}

// BiCGStab after t = A M s: t't and t's finite and nonzero (omega = t's / t't).
template <typename T>
SIMRUN_HOST_DEVICE BiCgStabPhase bicgstab_omega_phase(T tt, T ts) {
    if (!is_finite(tt) || !is_finite(ts)) return BiCgStabPhase::omega_non_finite;
    if (tt == T(0) || ts == T(0)) return BiCgStabPhase::omega_zero;
    return BiCgStabPhase::running;
}

}  // namespace simrun::solvers

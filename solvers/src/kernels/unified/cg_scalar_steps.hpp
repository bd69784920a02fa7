#pragma once
// CG's scalar steps, written once for every kernel that runs CG with its scalars on the back-end
// (unified/cg_kernels.inc.hpp, unified/cg_sweeps_in_block.hpp): from the totals of a reduction
// to the next scalars, or the phase that stops the solve (iteration_decisions.hpp decides it).
#include "base/cg_device_state.hpp"
#include "device_math.hpp"
#include "fused_steps.hpp"
#include "iteration_decisions.hpp"
#include "simrun/solvers/base/host_device.hpp"

namespace simrun::solvers {

// The step after p'Ap (by the last block of a reduction, or by each block's leader): alpha, or the
// breakdown that stops the solve (cg_direction_phase, the reference's decision).
template <typename T>
SIMRUN_HOST_DEVICE void finish_cg_direction(CgScalars<T>& s, T pq) {
    s.phase = cg_direction_phase(pq, s.rho);
    if (s.running()) {
        s.alpha = s.rho / pq;
    } else {
        s.breakdown_value = pq;
    }
}

// The step after the update: record ||r||, decide whether to go on (cg_update_phase, the
// reference's decision), and beta.
template <typename T>
SIMRUN_HOST_DEVICE void finish_cg_update(CgScalars<T>& s, T rr, T rz) {
    const std::int64_t k = s.iteration + 1;
    const bool stops = record_residual(s, k, static_cast<double>(square_root(rr)));
    s.phase = cg_update_phase(stops, rz, k, s.max_iterations);
    if (s.running()) {
        s.beta = rz / s.rho;
        s.rho = rz;
    } else if (s.phase == CgPhase::residual_indefinite) {
        s.breakdown_value = rz;
    }
}

}  // namespace simrun::solvers

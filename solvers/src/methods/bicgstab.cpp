#include "simrun/solvers/methods/bicgstab.hpp"

#include <cmath>

#include "check_sizes.hpp"
#include "iteration_batches.hpp"
#include "kernels/unified/iteration_decisions.hpp"
#include "residual_monitor.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers {
namespace {

// The outcome of a solve that stopped in `phase` (iteration_decisions.hpp decided it, in the
// reference loop and in the fused steps alike); `value` is the quantity that broke down.
void record_bicgstab_outcome(ResidualMonitor& monitor, BiCgStabPhase phase, double value,
                             SolveResult& result) {
    switch (phase) {
        case BiCgStabPhase::rho_non_finite:
            monitor.breakdown(SolveStatus::non_finite, "rho", value);
            break;
        case BiCgStabPhase::rho_zero:
            monitor.breakdown(SolveStatus::breakdown, "rho", 0.0);
            break;
        case BiCgStabPhase::r0v_non_finite:
            monitor.breakdown(SolveStatus::non_finite, "r0'v", value);
            break;
        case BiCgStabPhase::r0v_zero:
            monitor.breakdown(SolveStatus::breakdown, "r0'v", value);
            break;
        case BiCgStabPhase::omega_non_finite:
            monitor.breakdown(SolveStatus::non_finite, "t't", value);
            break;
        case BiCgStabPhase::omega_zero:
            monitor.breakdown(SolveStatus::breakdown, "omega", 0.0, 0);
            break;
        case BiCgStabPhase::max_iterations:
            result.status = SolveStatus::max_iterations;
            break;
        case BiCgStabPhase::residual_stop:  // the monitor recorded converged, diverged or
                                            // non_finite
        case BiCgStabPhase::running:
            break;
    }
}

}  // namespace

template <typename T>
BiCgStab<T>::BiCgStab(const LinearOperator<T>& a, const Preconditioner<T>* m,
                      MethodParameters parameters)
    : IterativeSolver<T>(parameters.criteria), a_(a), m_(m), parameters_(parameters) {
    for (Array<T>* v : {&r_, &r0_, &p_, &v_, &s_, &t_, &p_hat_, &s_hat_}) {
        *v = Array<T>(a.backend(), a.size());
    }
}

template <typename T>
struct BiCgStab<T>::FusedState : FusedIterations<BiCgStabScalars<T>, BiCgStabVectors<T>, T> {};

template <typename T>
BiCgStab<T>::~BiCgStab() = default;

template <typename T>
SolveResult BiCgStab<T>::iterate(const Array<T>& b, Array<T>& x) const {
    check_system_sizes("BiCGStab", a_.size(), b, x);
    if (const auto fused = fused_operands(a_, m_, parameters_)) {
        return solve_fused(fused->rows, fused->factors, b, x);
    }
    return solve_reference(b, x);
}

// Per iteration: the three fused steps (bicgstab_device_state.hpp,
// KernelTable::bicgstab_iterations); the host reads the scalars once per batch and replays
// ||r_k|| through the ResidualMonitor, which reaches the verdict the kernels reached.
template <typename T>
SolveResult BiCgStab<T>::solve_fused(const RowMatrixView<T>& a, const T* factors, const Array<T>& b,
                                     Array<T>& x) const {
    SolveResult result;
    ResidualMonitor monitor(this->criteria(), result, b, false);
    if (start_fused(monitor, a_, b, x, r_, parameters_, result)) return result;
    copy(r_, r0_);
    FusedState& fused =
        fused_iterations(fused_, a_.backend(), &KernelTable<T>::bicgstab_iterations);
    DeviceIterations<BiCgStabScalars<T>, T>& device = *fused.device;
    fused.view = a;
    fused.vectors = BiCgStabVectors<T>{static_cast<std::int64_t>(a_.size()),
                                       factors,
                                       x.data(),
                                       r_.data(),
                                       r0_.data(),
                                       {p_.data(), p_hat_.data()},
                                       {v_.data(), s_hat_.data()},
                                       t_.data(),
                                       device.workspace()};

    auto s = initial_state<BiCgStabScalars<T>>(monitor, this->criteria().max_iterations);
    s.rho = static_cast<T>(result.initial_residual * result.initial_residual);  // r0'r, r0 = r
    s.half_step_residual = -1.0;
    if (device.run(s, monitor, result, {x.data(), nullptr})) return result;
    record_bicgstab_outcome(monitor, s.phase, static_cast<double>(s.breakdown_value), result);
    return result;
}

// Per iteration: two SpMVs, two preconditioner applications, six reductions (r0'r, r0'v,
// ||s||, t's, t't, ||r||) and the fused updates: with DIA and Jacobi about
// (2 num_diagonals + 25) n values moved.
template <typename T>
SolveResult BiCgStab<T>::solve_reference(const Array<T>& b, Array<T>& x) const {
    const std::size_t n = a_.size();
    const Backend& backend = *a_.backend();
    const KernelTable<T>& k = backend.kernels<T>();
    const bool kahan = parameters_.compensated_dots;
    const IdentityPreconditioner<T> identity;
    const Preconditioner<T>& m = m_ != nullptr ? *m_ : identity;

    SolveResult result;
    ResidualMonitor monitor(this->criteria(), result, b, kahan);

    // r = b - A x, r0 = r (the shadow residual)
    if (monitor.start(a_, b, x, r_, kahan)) return result;
    copy(r_, r0_);
    T rho = 1, alpha = 1, omega = 1;

    if (this->criteria().max_iterations < 1) {
        result.status = SolveStatus::max_iterations;
        return result;
    }
    // Each decision is iteration_decisions.hpp's, as in the fused steps.
    const auto stop = [&](BiCgStabPhase phase, T value) {
        record_bicgstab_outcome(monitor, phase, static_cast<double>(value), result);
        return result;
    };
    for (std::int64_t iteration = 1;; ++iteration) {
        const T rho_next = dot(r0_, r_, kahan);
        BiCgStabPhase phase = bicgstab_rho_phase(rho_next);
        if (phase != BiCgStabPhase::running) return stop(phase, rho_next);
        if (iteration == 1) {
            copy(r_, p_);
        } else {
            // p = r + beta (p - omega v), beta = (rho_next / rho) (alpha / omega)
            k.bicgstab_p(backend, n, (rho_next / rho) * (alpha / omega), omega, r_.data(),
                         v_.data(), p_.data());
        }
        m.apply(p_, p_hat_);
        a_.apply(p_hat_, v_);
        const T r0v = dot(r0_, v_, kahan);
        phase = bicgstab_alpha_phase(r0v);
        if (phase != BiCgStabPhase::running) return stop(phase, r0v);
        alpha = rho_next / r0v;
        // s = r - alpha v
        copy(r_, s_);
        k.axpy(backend, n, -alpha, v_.data(), s_.data());
        const double s_norm = static_cast<double>(norm2(s_, kahan));
        if (bicgstab_half_step(s_norm, monitor.target())) {  // x = x + alpha p_hat, r = s
            k.axpy(backend, n, alpha, p_hat_.data(), x.data());
            copy(s_, r_);
            monitor.stop_at(s_norm, iteration);
            return result;
        }
        // t = A M s, omega = t's / t't
        m.apply(s_, s_hat_);
        a_.apply(s_hat_, t_);
        const T tt = dot(t_, t_, kahan);
        const T ts = dot(t_, s_, kahan);
        phase = bicgstab_omega_phase(tt, ts);
        if (phase != BiCgStabPhase::running) {
            return stop(phase, phase == BiCgStabPhase::omega_zero ? T(0) : tt);
        }
        omega = ts / tt;
        // x = x + alpha p_hat + omega s_hat, r = s - omega t
        k.bicgstab_update(backend, n, alpha, omega, p_hat_.data(), s_hat_.data(), s_.data(),
                          t_.data(), x.data(), r_.data());
        if (monitor.stop_at(static_cast<double>(norm2(r_, kahan)), iteration)) return result;
        if (iteration >= this->criteria().max_iterations) {
            return stop(BiCgStabPhase::max_iterations, T(0));
        }
        rho = rho_next;
    }
}

template class BiCgStab<float>;
template class BiCgStab<double>;

}  // namespace simrun::solvers

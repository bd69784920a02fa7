#include "simrun/solvers/methods/conjugate_gradient.hpp"

#include <cmath>
#include <optional>
#include <string>

#include "check_sizes.hpp"
#include "iteration_batches.hpp"
#include "kernels/unified/iteration_decisions.hpp"
#include "residual_monitor.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers {
namespace {

// The outcome of a solve that stopped in `phase` (iteration_decisions.hpp decided it, in the
// reference loop and in the fused steps alike); `value` is the quantity that broke down.
void record_cg_outcome(ResidualMonitor& monitor, CgPhase phase, double value, SolveResult& result) {
    switch (phase) {
        case CgPhase::direction_non_finite:
            monitor.breakdown(SolveStatus::non_finite, "p'Ap", value);
            break;
        case CgPhase::direction_indefinite:
            monitor.breakdown(SolveStatus::indefinite, "p'Ap", value);
            break;
        case CgPhase::residual_indefinite:
            monitor.breakdown(SolveStatus::indefinite, "r'Mr", value);
            break;
        case CgPhase::max_iterations:
            result.status = SolveStatus::max_iterations;
            break;
        case CgPhase::residual_stop:  // the monitor recorded converged, diverged or non_finite
        case CgPhase::running:
            break;
    }
}

// What the SSOR-fused path takes: the operator's rows and M's sweeps, where the parameters
// allow fused kernels (no compensated dots), the operator exposes its rows, M is multicolour
// SSOR and the back-end runs a system of this size in one block (KernelTable::fuses_cg_sweeps).
template <typename T>
struct SweepOperands {
    RowMatrixView<T> rows;
    MulticolourSweepsView<T> m;
};

template <typename T>
std::optional<SweepOperands<T>> sweep_operands(const LinearOperator<T>& a,
                                               const Preconditioner<T>* m,
                                               const MethodParameters& parameters) {
    if (!parameters.fused_kernels || parameters.compensated_dots || m == nullptr) {
        return std::nullopt;
    }
    const std::optional<MulticolourSweepsView<T>> sweeps = m->multicolour_sweeps();
    const std::optional<RowMatrixView<T>> rows = a.row_view();
    if (!sweeps || !rows) return std::nullopt;
    if (!a.backend()->template kernels<T>().fuses_cg_sweeps(static_cast<std::int64_t>(a.size()))) {
        return std::nullopt;
    }
    return SweepOperands<T>{*rows, *sweeps};
}

}  // namespace

template <typename T>
ConjugateGradient<T>::ConjugateGradient(const LinearOperator<T>& a, const Preconditioner<T>* m,
                                        MethodParameters parameters)
    : IterativeSolver<T>(parameters.criteria),
      a_(a),
      m_(m),
      parameters_(parameters),
      r_(a.backend(), a.size()),
      z_(a.backend(), a.size()),
      p_(a.backend(), a.size()),
      q_(a.backend(), a.size()) {}

template <typename T>
struct ConjugateGradient<T>::FusedState : FusedIterations<CgScalars<T>, CgVectors<T>, T> {};

template <typename T>
struct ConjugateGradient<T>::FusedSweepState : FusedIterations<CgScalars<T>, CgSweepVectors<T>, T> {
};

template <typename T>
ConjugateGradient<T>::~ConjugateGradient() = default;

template <typename T>
SolveResult ConjugateGradient<T>::iterate(const Array<T>& b, Array<T>& x) const {
    check_system_sizes("CG", a_.size(), b, x);
    if (const auto fused = fused_operands(a_, m_, parameters_)) {
        return solve_fused(fused->rows, fused->factors, b, x);
    }
    if (const auto sweeps = sweep_operands(a_, m_, parameters_)) {
        return solve_fused_sweeps(sweeps->rows, sweeps->m, b, x);
    }
    return solve_reference(b, x);
}

// Per iteration: the two fused steps (cg_device_state.hpp, KernelTable::cg_iterations); the host
// reads the scalars once per batch and replays ||r_k|| through the ResidualMonitor, which reaches
// the verdict the kernels reached (the same checks in the same order).
template <typename T>
SolveResult ConjugateGradient<T>::solve_fused(const RowMatrixView<T>& a, const T* factors,
                                              const Array<T>& b, Array<T>& x) const {
    const std::size_t n = a_.size();
    const Backend& backend = *a_.backend();
    const KernelTable<T>& k = backend.kernels<T>();

    SolveResult result;
    ResidualMonitor monitor(this->criteria(), result, b, false);
    if (start_fused(monitor, a_, b, x, r_, parameters_, result)) return result;

    FusedState& fused = fused_iterations(fused_, a_.backend(), &KernelTable<T>::cg_iterations);
    DeviceIterations<CgScalars<T>, T>& device = *fused.device;
    fused.view = a;
    fused.vectors = CgVectors<T>{
        static_cast<std::int64_t>(n), factors,           x.data(), r_.data(), q_.data(),
        {p_.data(), z_.data()},       device.workspace()};

    // rho = r'z: with M = I the ||r0||^2 just summed; else z in q (the first direction
    // overwrites it)
    T rho = static_cast<T>(result.initial_residual * result.initial_residual);
    if (factors != nullptr) {
        k.multiply(backend, n, factors, r_.data(), q_.data());
        rho = dot(r_, q_);
    }
    auto s = initial_state<CgScalars<T>>(monitor, this->criteria().max_iterations);
    s.rho = rho;
    if (device.run(s, monitor, result, {x.data(), nullptr})) return result;
    record_cg_outcome(monitor, s.phase, static_cast<double>(s.breakdown_value), result);
    return result;
}

// Per iteration: KernelTable::cg_sweep_iterations, the whole system in one block (on CUDA one
// launch per batch of iterations); the host replays ||r_k|| as in solve_fused.
template <typename T>
SolveResult ConjugateGradient<T>::solve_fused_sweeps(const RowMatrixView<T>& a,
                                                     const MulticolourSweepsView<T>& sweeps,
                                                     const Array<T>& b, Array<T>& x) const {
    SolveResult result;
    ResidualMonitor monitor(this->criteria(), result, b, false);
    if (start_fused(monitor, a_, b, x, r_, parameters_, result)) return result;

    FusedSweepState& fused =
        fused_iterations(fused_sweeps_, a_.backend(), &KernelTable<T>::cg_sweep_iterations);
    fused.view = a;
    fused.vectors = CgSweepVectors<T>{static_cast<std::int64_t>(a_.size()),
                                      sweeps,
                                      m_->sweeps_hold(a_),
                                      x.data(),
                                      r_.data(),
                                      z_.data(),
                                      p_.data(),
                                      q_.data()};
    m_->apply(r_, z_);
    auto s = initial_state<CgScalars<T>>(monitor, this->criteria().max_iterations);
    s.rho = dot(r_, z_);
    if (fused.device->run(s, monitor, result, {x.data(), nullptr})) return result;
    record_cg_outcome(monitor, s.phase, static_cast<double>(s.breakdown_value), result);
    return result;
}

// Per iteration: SpMV (A p), preconditioner (z = M r), three dot products (p'q, r'r, r'z) and
// the two fused updates: with DIA and Jacobi about (num_diagonals + 13) n values moved.
template <typename T>
SolveResult ConjugateGradient<T>::solve_reference(const Array<T>& b, Array<T>& x) const {
    const std::size_t n = a_.size();
    const Backend& backend = *a_.backend();
    const KernelTable<T>& k = backend.kernels<T>();
    const bool kahan = parameters_.compensated_dots;
    const IdentityPreconditioner<T> identity;
    const Preconditioner<T>& m = m_ != nullptr ? *m_ : identity;

    SolveResult result;
    ResidualMonitor monitor(this->criteria(), result, b, kahan);

    // r = b - A x
    if (monitor.start(a_, b, x, r_, kahan)) return result;

    // z = M r, p = z, rho = r'z
    m.apply(r_, z_);
    copy(z_, p_);
    T rho = dot(r_, z_, kahan);

    if (this->criteria().max_iterations < 1) {
        result.status = SolveStatus::max_iterations;
        return result;
    }
    for (std::int64_t iteration = 1;; ++iteration) {
        a_.apply(p_, q_);
        const T pq = dot(p_, q_, kahan);
        // p'Ap and rho finite, p'Ap > 0 (iteration_decisions.hpp)
        CgPhase phase = cg_direction_phase(pq, rho);
        if (phase != CgPhase::running) {
            record_cg_outcome(monitor, phase, static_cast<double>(pq), result);
            return result;
        }
        // x = x + alpha p, r = r - alpha q with alpha = rho / p'Ap
        k.cg_step_2(backend, n, rho / pq, p_.data(), q_.data(), x.data(), r_.data());
        const bool stops = monitor.stop_at(static_cast<double>(norm2(r_, kahan)), iteration);
        // z = M r, rho_next = r'z (not needed once the residual stopped the solve)
        T rho_next = T(0);
        if (!stops) {
            m.apply(r_, z_);
            rho_next = dot(r_, z_, kahan);
        }
        // the residual's verdict, then r'Mr > 0, then the iteration limit
        phase = cg_update_phase(stops, rho_next, iteration, this->criteria().max_iterations);
        if (phase != CgPhase::running) {
            record_cg_outcome(monitor, phase, static_cast<double>(rho_next), result);
            return result;
        }
        // p = z + beta p with beta = rho_next / rho
        k.cg_step_1(backend, n, rho_next / rho, z_.data(), p_.data());
        rho = rho_next;
    }
}

template class ConjugateGradient<float>;
template class ConjugateGradient<double>;

}  // namespace simrun::solvers

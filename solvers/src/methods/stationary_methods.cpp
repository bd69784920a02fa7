#include "simrun/solvers/methods/stationary_methods.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "check_sizes.hpp"
#include "iteration_batches.hpp"
#include "residual_monitor.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers {

template <typename T>
WeightedJacobi<T>::WeightedJacobi(const LinearOperator<T>& a, std::span<const T> diagonal,
                                  MethodParameters parameters)
    : IterativeSolver<T>(parameters.criteria),
      a_(a),
      parameters_(parameters),
      r_(a.backend(), a.size()) {
    if (diagonal.size() != a.size()) {
        throw DimensionMismatch("Jacobi: " + std::to_string(diagonal.size()) +
                                " diagonal entries for " + std::to_string(a.size()) + " rows");
    }
    std::vector<T> inverse(diagonal.begin(), diagonal.end());
    for (std::size_t i = 0; i < inverse.size(); ++i) {
        if (inverse[i] == T(0) || !std::isfinite(static_cast<double>(inverse[i]))) {
            throw std::invalid_argument("Jacobi: diagonal entry of row " + std::to_string(i) +
                                        " is zero or not finite");
        }
        inverse[i] = T(1) / inverse[i];
    }
    inverse_diagonal_ = Array<T>::from_host(a.backend(), inverse);
}

template <typename T>
struct WeightedJacobi<T>::FusedState : FusedIterations<JacobiScalars<T>, JacobiVectors<T>, T> {};

template <typename T>
WeightedJacobi<T>::~WeightedJacobi() = default;

template <typename T>
SolveResult WeightedJacobi<T>::iterate(const Array<T>& b, Array<T>& x) const {
    check_system_sizes("Jacobi", a_.size(), b, x);
    // (No preconditioner: the fused operands' factors are those of M = I.)
    if (const auto fused = fused_operands<T>(a_, nullptr, parameters_)) {
        return solve_fused(fused->rows, b, x);
    }
    return solve_reference(b, x);
}

// Per iteration: the fused step (jacobi_device_state.hpp, KernelTable::jacobi_iterations); the
// host reads the scalars once per batch and replays ||r_k|| through the ResidualMonitor. The
// iterates alternate between x and r_; the one the solve stopped at ends in x.
template <typename T>
SolveResult WeightedJacobi<T>::solve_fused(const RowMatrixView<T>& a, const Array<T>& b,
                                           Array<T>& x) const {
    SolveResult result;
    ResidualMonitor monitor(this->criteria(), result, b, false);
    if (start_fused(monitor, a_, b, x, r_, parameters_, result)) return result;
    FusedState& fused = fused_iterations(fused_, a_.backend(), &KernelTable<T>::jacobi_iterations);
    DeviceIterations<JacobiScalars<T>, T>& device = *fused.device;
    fused.view = a;
    fused.vectors = JacobiVectors<T>{static_cast<std::int64_t>(a_.size()),
                                     inverse_diagonal_.data(),
                                     b.data(),
                                     {x.data(), r_.data()},
                                     static_cast<T>(parameters_.omega),
                                     device.workspace()};
    auto s = initial_state<JacobiScalars<T>>(monitor, this->criteria().max_iterations);
    const bool stopped = device.run(s, monitor, result, {x.data(), b.data()});
    if (s.current % 2 == 1) copy(r_, x);
    if (!stopped) result.status = SolveStatus::max_iterations;
    return result;
}

// Per iteration: one SpMV, the residual norm and x = x + omega D^-1 r.
template <typename T>
SolveResult WeightedJacobi<T>::solve_reference(const Array<T>& b, Array<T>& x) const {
    const bool kahan = parameters_.compensated_dots;
    SolveResult result;
    ResidualMonitor monitor(this->criteria(), result, b, kahan);
    const Backend& backend = *a_.backend();
    for (std::int64_t iteration = 0;; ++iteration) {
        if (monitor.stop_at(compute_residual(a_, b, x, r_, kahan), iteration)) return result;
        if (iteration == this->criteria().max_iterations) break;
        backend.kernels<T>().scaled_axpy(backend, x.size(), static_cast<T>(parameters_.omega),
                                         inverse_diagonal_.data(), r_.data(), x.data());
    }
    result.status = SolveStatus::max_iterations;
    return result;
}

template <typename T>
MulticolourSor<T>::MulticolourSor(std::shared_ptr<const Backend> backend, const CsrData<T>& a,
                                  MethodParameters parameters, const LinearOperator<T>* whole)
    : IterativeSolver<T>(parameters.criteria),
      matrix_(backend, a),
      sweeper_(backend, a),
      parameters_(parameters),
      whole_(whole),
      r_(backend, static_cast<std::size_t>(a.rows)) {
    if (whole_ != nullptr) own_ = Array<T>(backend, static_cast<std::size_t>(a.rows));
    if (!(parameters.omega > 0.0 && parameters.omega < 2.0)) {
        throw std::invalid_argument("SOR: omega must lie in (0, 2), got " +
                                    std::to_string(parameters.omega));
    }
}

// Per iteration: one forward multicolour sweep (about one SpMV of traffic) and the residual
// (one SpMV and a norm).
template <typename T>
SolveResult MulticolourSor<T>::iterate(const Array<T>& b, Array<T>& x) const {
    const LinearOperator<T>& a = whole_ != nullptr ? *whole_ : matrix_;
    check_system_sizes("SOR", a.size(), b, x);
    const bool kahan = parameters_.compensated_dots;
    SolveResult result;
    ResidualMonitor monitor(this->criteria(), result, b, kahan);
    for (std::int64_t iteration = 0;; ++iteration) {
        if (monitor.stop_at(compute_residual(a, b, x, r_, kahan), iteration)) return result;
        if (iteration == this->criteria().max_iterations) break;
        if (whole_ == nullptr) {
            sweeper_.forward(b, x, static_cast<T>(parameters_.omega));
            continue;
        }
        // Over ranks the block's right side is b less the neighbours' part of A x:
        // r + A_block x = b - (A - A_block) x (a product of the block and an update more).
        matrix_.apply(x, own_);
        axpy(T(1), r_, own_);
        sweeper_.forward(own_, x, static_cast<T>(parameters_.omega));
    }
    result.status = SolveStatus::max_iterations;
    return result;
}

template class WeightedJacobi<float>;
template class WeightedJacobi<double>;
template class MulticolourSor<float>;
template class MulticolourSor<double>;

}  // namespace simrun::solvers

#include "simrun/solvers/methods/bicg.hpp"

#include <cmath>
#include <string>

#include "base/kernel_table.hpp"
#include "check_sizes.hpp"
#include "residual_monitor.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers {

template <typename T>
BiConjugateGradient<T>::BiConjugateGradient(const LinearOperator<T>& a,
                                            const LinearOperator<T>& a_transpose,
                                            const Preconditioner<T>* m, MethodParameters parameters)
    : IterativeSolver<T>(parameters.criteria),
      a_(a),
      at_(a_transpose),
      m_(m),
      parameters_(parameters) {
    if (a_transpose.size() != a.size()) {
        throw DimensionMismatch("BiCG: A has " + std::to_string(a.size()) + " rows, A^T has " +
                                std::to_string(a_transpose.size()));
    }
    for (Array<T>* v : {&r_, &rt_, &z_, &zt_, &p_, &pt_, &q_, &qt_}) {
        *v = Array<T>(a.backend(), a.size());
    }
}

// Per iteration: SpMVs with A and A^T, two preconditioner applications, three reductions
// (p~'Ap, ||r||, z'r~) and the updates of x, r, r~, p, p~.
template <typename T>
SolveResult BiConjugateGradient<T>::iterate(const Array<T>& b, Array<T>& x) const {
    const std::size_t n = a_.size();
    check_system_sizes("BiCG", n, b, x);
    const Backend& backend = *a_.backend();
    const KernelTable<T>& k = backend.kernels<T>();
    const bool kahan = parameters_.compensated_dots;
    const IdentityPreconditioner<T> identity;
    const Preconditioner<T>& m = m_ != nullptr ? *m_ : identity;
    auto finite = [](T value) { return std::isfinite(static_cast<double>(value)); };

    SolveResult result;
    ResidualMonitor monitor(this->criteria(), result, b, kahan);

    // r = b - A x, r~ = r, z = M r, z~ = M^T r~ (= M r~), p = z, p~ = z~, rho = z'r~
    if (monitor.start(a_, b, x, r_, kahan)) return result;
    copy(r_, rt_);
    m.apply(r_, z_);
    m.apply(rt_, zt_);
    copy(z_, p_);
    copy(zt_, pt_);
    T rho = dot(z_, rt_, kahan);

    for (std::int64_t iteration = 1; iteration <= this->criteria().max_iterations; ++iteration) {
        if (!finite(rho)) {
            monitor.breakdown(SolveStatus::non_finite, "rho", static_cast<double>(rho));
            return result;
        }
        if (rho == T(0)) {
            monitor.breakdown(SolveStatus::breakdown, "rho", 0.0);
            return result;
        }
        a_.apply(p_, q_);
        at_.apply(pt_, qt_);
        const T ptq = dot(pt_, q_, kahan);
        if (!finite(ptq) || ptq == T(0)) {
            monitor.breakdown(finite(ptq) ? SolveStatus::breakdown : SolveStatus::non_finite,
                              "p~'Ap", static_cast<double>(ptq));
            return result;
        }
        const T alpha = rho / ptq;
        // x = x + alpha p, r = r - alpha q, r~ = r~ - alpha q~
        k.cg_step_2(backend, n, alpha, p_.data(), q_.data(), x.data(), r_.data());
        k.axpy(backend, n, -alpha, qt_.data(), rt_.data());
        if (monitor.stop_at(static_cast<double>(norm2(r_, kahan)), iteration)) return result;
        m.apply(r_, z_);
        m.apply(rt_, zt_);
        const T rho_next = dot(z_, rt_, kahan);
        // p = z + beta p, p~ = z~ + beta p~ with beta = rho_next / rho
        k.cg_step_1(backend, n, rho_next / rho, z_.data(), p_.data());
        k.cg_step_1(backend, n, rho_next / rho, zt_.data(), pt_.data());
        rho = rho_next;
    }
    result.status = SolveStatus::max_iterations;
    return result;
}

template class BiConjugateGradient<float>;
template class BiConjugateGradient<double>;

}  // namespace simrun::solvers

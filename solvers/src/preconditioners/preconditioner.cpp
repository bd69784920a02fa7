#include "simrun/solvers/preconditioners/preconditioner.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/kernel_table.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers {

template <typename T>
std::vector<T> diagonal_of(const CsrData<T>& a) {
    std::vector<T> diagonal(static_cast<std::size_t>(std::min(a.rows, a.cols)), T(0));
    for (std::int32_t i = 0; i < static_cast<std::int32_t>(diagonal.size()); ++i) {
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (a.col[k] == i) diagonal[static_cast<std::size_t>(i)] += a.values[k];
        }
    }
    return diagonal;
}

template <typename T>
void IdentityPreconditioner<T>::apply(const Array<T>& r, Array<T>& z) const {
    copy(r, z);
}

template <typename T>
JacobiPreconditioner<T>::JacobiPreconditioner(std::shared_ptr<const Backend> backend,
                                              std::span<const T> diagonal) {
    std::vector<T> inverse(diagonal.begin(), diagonal.end());
    for (std::size_t i = 0; i < inverse.size(); ++i) {
        if (inverse[i] == T(0) || !std::isfinite(static_cast<double>(inverse[i]))) {
            throw std::invalid_argument("Jacobi preconditioner: diagonal entry of row " +
                                        std::to_string(i) + " is " + std::to_string(inverse[i]) +
                                        "; it must be nonzero");
        }
        inverse[i] = T(1) / inverse[i];
    }
    inverse_diagonal_ = Array<T>::from_host(std::move(backend), inverse);
}

template <typename T>
JacobiPreconditioner<T>::JacobiPreconditioner(const DiaMatrix<T>& matrix)
    : JacobiPreconditioner(matrix.backend(), matrix.diagonal().to_host()) {}

template <typename T>
void JacobiPreconditioner<T>::apply(const Array<T>& r, Array<T>& z) const {
    multiply(inverse_diagonal_, r, z);
}

template <typename T>
SsorPreconditioner<T>::SsorPreconditioner(std::shared_ptr<const Backend> backend,
                                          const CsrData<T>& a, T omega, const LinearOperator<T>* of)
    : sweeper_(std::move(backend), a), omega_(omega), of_(of) {
    if (!(omega > T(0) && omega < T(2))) {
        throw std::invalid_argument("SSOR preconditioner: omega must lie in (0, 2)");
    }
}

// z = (forward then backward multicolour SOR sweep from z = 0) applied to r.
template <typename T>
void SsorPreconditioner<T>::apply(const Array<T>& r, Array<T>& z) const {
    // The forward and backward sweeps: one launch for a small system on the GPU, a launch per
    // colour above (recorded once: a CUDA graph, no launch latency per colour).
    const T* r_data = r.data();
    T* z_data = z.data();
    const std::size_t n = z.size();
    recorded_.run(r.backend(), r_data, z_data, [this, r_data, z_data, n] {
        const Backend& backend = *sweeper_.backend();
        backend.kernels<T>().fill(backend, n, T(0), z_data);
        sweeper_.symmetric(r_data, z_data, omega_);
    });
}

template std::vector<float> diagonal_of(const CsrData<float>&);
template std::vector<double> diagonal_of(const CsrData<double>&);
template class IdentityPreconditioner<float>;
template class IdentityPreconditioner<double>;
template class JacobiPreconditioner<float>;
template class JacobiPreconditioner<double>;
template class SsorPreconditioner<float>;
template class SsorPreconditioner<double>;

}  // namespace simrun::solvers

#include "simrun/solvers/preconditioner.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "simrun/solvers/vector_ops.hpp"

namespace simrun::solvers {

template <typename T>
void IdentityPreconditioner<T>::apply(const Array<T>& r, Array<T>& z) const {
    if (r.size() != z.size()) {
        throw DimensionMismatch("identity preconditioner: r has " + std::to_string(r.size()) +
                                " values, z has " + std::to_string(z.size()));
    }
    if (r.size() > 0) r.backend().copy(z.data(), r.data(), r.size() * sizeof(T));
}

template <typename T>
JacobiPreconditioner<T>::JacobiPreconditioner(const DiaMatrix<T>& matrix) {
    std::vector<T> inverse = matrix.diagonal().to_host();
    for (std::size_t i = 0; i < inverse.size(); ++i) {
        if (inverse[i] == T(0) || !std::isfinite(inverse[i])) {
            throw std::invalid_argument("Jacobi preconditioner: diagonal entry of row " +
                                        std::to_string(i) + " is " + std::to_string(inverse[i]) +
                                        "; it must be nonzero");
        }
        inverse[i] = T(1) / inverse[i];
    }
    inverse_diagonal_ = Array<T>::from_host(matrix.backend(), inverse);
}

template <typename T>
void JacobiPreconditioner<T>::apply(const Array<T>& r, Array<T>& z) const {
    multiply(inverse_diagonal_, r, z);
}

template class IdentityPreconditioner<float>;
template class IdentityPreconditioner<double>;
template class JacobiPreconditioner<float>;
template class JacobiPreconditioner<double>;

}  // namespace simrun::solvers

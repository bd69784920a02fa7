#include "simrun/solvers/multigrid/multigrid_preconditioner.hpp"

#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers {

template <typename T>
void MultigridPreconditioner<T>::apply(const Array<T>& r, Array<T>& z) const {
    fill(z, T(0));
    hierarchy_->cycle(r, z);
}

template class MultigridPreconditioner<float>;
template class MultigridPreconditioner<double>;

}  // namespace simrun::solvers

#pragma once
// Biconjugate gradients: CG's short recurrences for nonsymmetric A, using A^T (given as its own
// operator, built once) and a preconditioner equal to its transpose (none or Jacobi).
// Breakdowns are reported with the quantity that vanished: p~'Ap or rho = z'r~.
#include "simrun/solvers/matrices/linear_operator.hpp"
#include "simrun/solvers/methods/iterative_solver.hpp"
#include "simrun/solvers/preconditioners/preconditioner.hpp"

namespace simrun::solvers {

template <typename T>
class BiConjugateGradient final : public IterativeSolver<T> {
public:
    // a_transpose must be the transpose of a; m (if given) must be symmetric.
    BiConjugateGradient(const LinearOperator<T>& a, const LinearOperator<T>& a_transpose,
                        const Preconditioner<T>* m, MethodParameters parameters);

private:
    SolveResult iterate(const Array<T>& b, Array<T>& x) const override;
    const LinearOperator<T>& a_;
    const LinearOperator<T>& at_;
    const Preconditioner<T>* m_;
    MethodParameters parameters_;
    mutable Array<T> r_, rt_, z_, zt_, p_, pt_, q_, qt_;  // workspace: 8n values
};

}  // namespace simrun::solvers

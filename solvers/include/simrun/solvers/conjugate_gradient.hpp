#pragma once
// Preconditioned conjugate gradients for symmetric positive definite A (and SPD M).
// Reports indefinite (with p'Ap or r'Mr) when A or M turns out not to be positive definite.
#include "simrun/solvers/iterative_solver.hpp"
#include "simrun/solvers/linear_operator.hpp"
#include "simrun/solvers/preconditioner.hpp"

namespace simrun::solvers {

template <typename T>
class ConjugateGradient final : public IterativeSolver<T> {
public:
    // The operator and preconditioner must outlive the solver; a null preconditioner is M = I.
    ConjugateGradient(const LinearOperator<T>& a, const Preconditioner<T>* m,
                      MethodParameters parameters);
    SolveResult solve(const Array<T>& b, Array<T>& x) const override;

private:
    const LinearOperator<T>& a_;
    const Preconditioner<T>* m_;
    MethodParameters parameters_;
    mutable Array<T> r_, z_, p_, q_;  // workspace on the operator's back-end: 4n values
};

}  // namespace simrun::solvers

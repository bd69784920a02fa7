#pragma once
// BiCGStab (van der Vorst) with right preconditioning, for nonsymmetric A. Breakdowns are
// reported with the quantity that vanished: rho = r0'r, r0'v, or omega.
#include "simrun/solvers/iterative_solver.hpp"
#include "simrun/solvers/linear_operator.hpp"
#include "simrun/solvers/preconditioner.hpp"

namespace simrun::solvers {

template <typename T>
class BiCgStab final : public IterativeSolver<T> {
public:
    BiCgStab(const LinearOperator<T>& a, const Preconditioner<T>* m, MethodParameters parameters);
    SolveResult solve(const Array<T>& b, Array<T>& x) const override;

private:
    const LinearOperator<T>& a_;
    const Preconditioner<T>* m_;
    MethodParameters parameters_;
    mutable Array<T> r_, r0_, p_, v_, s_, t_, p_hat_, s_hat_;  // workspace: 8n values
};

}  // namespace simrun::solvers

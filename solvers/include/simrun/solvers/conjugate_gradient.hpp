#pragma once
// Preconditioned conjugate gradients for symmetric positive definite A (and SPD M).
// Built once from parameters and an operator; solve() may be called many times (each time step
// warm-starts from the x it is given). The workspace lives on the operator's back-end.
#include <memory>

#include "simrun/solvers/linear_operator.hpp"
#include "simrun/solvers/preconditioner.hpp"
#include "simrun/solvers/solve_result.hpp"

namespace simrun::solvers {

template <typename T>
class ConjugateGradient {
public:
    struct Parameters {
        StoppingCriteria criteria;
    };

    // The operator and preconditioner must outlive the solver. A null preconditioner means M = I.
    ConjugateGradient(const LinearOperator<T>& a, const Preconditioner<T>* m,
                      Parameters parameters);

    // Solves A x = b from the initial guess in x. Returns the outcome; never throws for a solve
    // that fails to converge. When p'Ap <= 0 the status is indefinite and x is the last iterate.
    // Throws DimensionMismatch when b or x do not match the operator.
    SolveResult solve(const Array<T>& b, Array<T>& x) const;

    const Parameters& parameters() const { return parameters_; }

private:
    const LinearOperator<T>& a_;
    const Preconditioner<T>* m_;
    Parameters parameters_;
    // Workspace: residual, preconditioned residual, search direction, A p (4n values).
    mutable Array<T> r_, z_, p_, q_;
};

}  // namespace simrun::solvers

#pragma once
// BiCGStab (van der Vorst) with right preconditioning, for nonsymmetric A. Breakdowns are
// reported with the quantity that vanished: rho = r0'r, r0'v, or omega.
//
// Two implementations of the one algorithm, as for CG. Fused (the default where the operator
// exposes its rows and M is pointwise): three steps (passes over the rows) per iteration, each
// product folded with the vector it multiplies and the dot products it feeds
// (unified/bicgstab_kernels.inc.hpp), the scalars on the back-end, the host looking in once per
// batch of iterations. Reference (any operator and preconditioner, compensated dots, or
// fused_kernels = false): one kernel per operation, the host checking each iteration.
#include <cstdint>
#include <memory>

#include "simrun/solvers/matrices/linear_operator.hpp"
#include "simrun/solvers/methods/iterative_solver.hpp"
#include "simrun/solvers/preconditioners/preconditioner.hpp"

namespace simrun::solvers {

template <typename T>
class BiCgStab final : public IterativeSolver<T> {
public:
    // The operator and preconditioner must outlive the solver; a null preconditioner is M = I.
    BiCgStab(const LinearOperator<T>& a, const Preconditioner<T>* m, MethodParameters parameters);
    ~BiCgStab() override;

private:
    SolveResult iterate(const Array<T>& b, Array<T>& x) const override;
    SolveResult solve_reference(const Array<T>& b, Array<T>& x) const;
    SolveResult solve_fused(const RowMatrixView<T>& a, const T* factors, const Array<T>& b,
                            Array<T>& x) const;

    const LinearOperator<T>& a_;
    const Preconditioner<T>* m_;
    MethodParameters parameters_;
    // Workspace: 8n values. The fused path keeps its two directions in p and p_hat, their
    // products in v and s_hat, and t in t.
    mutable Array<T> r_, r0_, p_, v_, s_, t_, p_hat_, s_hat_;
    // The fused path's scalars, reduction workspace, recorded batches and the vectors they
    // name, made at its first solve (methods/iteration_batches.hpp).
    struct FusedState;
    mutable std::unique_ptr<FusedState> fused_;
};

}  // namespace simrun::solvers

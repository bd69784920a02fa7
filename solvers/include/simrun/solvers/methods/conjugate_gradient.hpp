#pragma once
// Preconditioned conjugate gradients for symmetric positive definite A (and SPD M).
// Reports indefinite (with p'Ap or r'Mr) when A or M turns out not to be positive definite.
//
// Three implementations of the one algorithm. Fused (the default where the operator exposes its
// rows and M is pointwise): two kernels per iteration (p' = z + beta p folded into q = A p'
// with p'q; the x and r update with r'r and r'z), the scalars on the back-end, the host
// looking in once per batch of iterations (on CUDA a batch is one graph launch): 10 vector
// passes per iteration, the floor. Reference (any operator and preconditioner, compensated
// dots, or fused_kernels = false): one kernel per operation, the host checking each iteration.
// Fused with sweeps (M multicolour SSOR on a system the back-end runs in one block: up to 32768
// rows on CUDA, 16384 on one CPU core): every step and colour of an iteration in one block,
// one launch per batch of iterations.
#include <cstdint>
#include <memory>

#include "simrun/solvers/matrices/linear_operator.hpp"
#include "simrun/solvers/methods/iterative_solver.hpp"
#include "simrun/solvers/preconditioners/preconditioner.hpp"

namespace simrun::solvers {

template <typename T>
class ConjugateGradient final : public IterativeSolver<T> {
public:
    // The operator and preconditioner must outlive the solver; a null preconditioner is M = I.
    ConjugateGradient(const LinearOperator<T>& a, const Preconditioner<T>* m,
                      MethodParameters parameters);
    ~ConjugateGradient() override;

private:
    SolveResult iterate(const Array<T>& b, Array<T>& x) const override;
    SolveResult solve_reference(const Array<T>& b, Array<T>& x) const;
    SolveResult solve_fused(const RowMatrixView<T>& a, const T* factors, const Array<T>& b,
                            Array<T>& x) const;
    SolveResult solve_fused_sweeps(const RowMatrixView<T>& a,
                                   const MulticolourSweepsView<T>& sweeps, const Array<T>& b,
                                   Array<T>& x) const;

    const LinearOperator<T>& a_;
    const Preconditioner<T>* m_;
    MethodParameters parameters_;
    // Workspace on the operator's back-end, 4n values: r, z (the fused path's second
    // direction), p, q.
    mutable Array<T> r_, z_, p_, q_;
    // The fused path's scalars, reduction workspace, recorded batches and the vectors they
    // name, made at its first solve (methods/iteration_batches.hpp).
    struct FusedState;
    mutable std::unique_ptr<FusedState> fused_;
    // The same for the SSOR-fused path (a small system in one block).
    struct FusedSweepState;
    mutable std::unique_ptr<FusedSweepState> fused_sweeps_;
};

}  // namespace simrun::solvers

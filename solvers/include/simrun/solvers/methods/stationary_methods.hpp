#pragma once
// Stationary iterations: weighted Jacobi, x += omega D^-1 (b - A x), and multicolour SOR
// (Gauss-Seidel for omega = 1), sweeping the colours of a greedy colouring in parallel.
// Both converge for strictly diagonally dominant A; otherwise they may stall or diverge, which
// the status reports.
//
// Jacobi runs fused where the operator exposes its rows (and fused_kernels, no compensated
// dots): one step (a pass over the rows) per iteration forms the residual, updates x into a second
// buffer and sums
// ||r||^2, with the scalars on the back-end and the host looking in once per batch
// (jacobi_device_state.hpp); else one kernel per operation, the host checking each iteration.
#include <memory>
#include <span>

#include "simrun/solvers/matrices/csr_data.hpp"
#include "simrun/solvers/matrices/linear_operator.hpp"
#include "simrun/solvers/matrices/sparse_matrices.hpp"
#include "simrun/solvers/methods/iterative_solver.hpp"
#include "simrun/solvers/preconditioners/multicolour.hpp"

namespace simrun::solvers {

template <typename T>
class WeightedJacobi final : public IterativeSolver<T> {
public:
    // Throws std::invalid_argument when a diagonal entry is zero.
    WeightedJacobi(const LinearOperator<T>& a, std::span<const T> diagonal,
                   MethodParameters parameters);
    ~WeightedJacobi() override;

private:
    SolveResult iterate(const Array<T>& b, Array<T>& x) const override;
    SolveResult solve_reference(const Array<T>& b, Array<T>& x) const;
    SolveResult solve_fused(const RowMatrixView<T>& a, const Array<T>& b, Array<T>& x) const;

    const LinearOperator<T>& a_;
    MethodParameters parameters_;
    Array<T> inverse_diagonal_;
    mutable Array<T> r_;  // the residual; the fused path's second iterate
    // The fused path's scalars, reduction workspace, recorded batches and the vectors they
    // name, made at its first solve (methods/iteration_batches.hpp).
    struct FusedState;
    mutable std::unique_ptr<FusedState> fused_;
};

template <typename T>
class MulticolourSor final : public IterativeSolver<T> {
public:
    // Throws std::invalid_argument when a diagonal entry is zero or omega is outside (0, 2).
    // Over ranks `a` is this rank's own block of `whole`, the distributed operator (whose
    // product reaches the neighbours' rows): hybrid Gauss-Seidel, each rank sweeping its block
    // with its neighbours' values of the previous iteration (Jacobi between the ranks,
    // Gauss-Seidel within), which converges where both do (diagonal dominance).
    MulticolourSor(std::shared_ptr<const Backend> backend, const CsrData<T>& a,
                   MethodParameters parameters, const LinearOperator<T>* whole = nullptr);
    int num_colours() const { return sweeper_.num_colours(); }

private:
    SolveResult iterate(const Array<T>& b, Array<T>& x) const override;
    CsrMatrix<T> matrix_;  // A (over ranks the block), for the residual
    MulticolourSweeper<T> sweeper_;
    MethodParameters parameters_;
    const LinearOperator<T>* whole_;
    mutable Array<T> r_, own_;  // over ranks own_: the block's right side
};

}  // namespace simrun::solvers

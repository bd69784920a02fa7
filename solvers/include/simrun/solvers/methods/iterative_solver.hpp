#pragma once
// The interface every iterative method offers: solve A x = b from the initial guess in x.
// A method is built once from its operator(s) and parameters and may solve many systems.
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/methods/solve_result.hpp"

namespace simrun::solvers {

// What every method takes besides its operators.
struct MethodParameters {
    StoppingCriteria criteria;
    // Compensated (Neumaier) dot products: slower, less rounding in long sums.
    bool compensated_dots = false;
    // Relaxation weight for Jacobi and SOR (1 = plain Jacobi / Gauss-Seidel).
    double omega = 1.0;
    // GMRES's restart length m: a cycle builds at most m basis vectors (m + 1 stored).
    int restart = 30;
    // Fused kernels with the method's scalars kept on the back-end, where the method, the
    // format and the preconditioner allow (CG with DIA, ELLPACK-R or short-row CSR, no or
    // Jacobi preconditioner, plain dots). false: one kernel per operation and the host checks
    // every iteration (the reference the fused path is tested against).
    bool fused_kernels = true;
};

template <typename T>
class IterativeSolver {
public:
    virtual ~IterativeSolver() = default;
    // Solves from the initial guess in x. Never throws for a solve that fails to converge: the
    // status says why it stopped and x holds the last iterate (after non_finite it may hold
    // NaN or Inf; LinearSystemSolver then restores the initial guess). Throws
    // DimensionMismatch when b or x do not match the operator.
    virtual SolveResult solve(const Array<T>& b, Array<T>& x) const = 0;
};

}  // namespace simrun::solvers

#pragma once
// Restarted GMRES(m) with right preconditioning (Saad and Schultz; Saad, Iterative Methods,
// Algorithm 9.5): for any nonsingular A, symmetric or not, definite or not. Right
// preconditioning (A M u = r, x = x0 + M u) keeps the residual that the least-squares problem
// minimises the true one, b - A x, so the monitor stops on ||b - A x||, never on a preconditioned
// norm.
//
// Arnoldi by classical Gram-Schmidt, the products of a step with every basis vector (and the
// new vector's own norm) in one deterministic reduction (KernelTable::basis_dots: one round
// trip), the subtraction and the normalisation in one pass (basis_combine). Where the new
// vector loses more than half its squared norm to the projection (cancellation: its remaining
// norm from Pythagoras is then inaccurate, and its orthogonality too), a second pass orthogonalises
// it again ("twice is enough": Giraud, Langou and Rozloznik 2005). The Hessenberg matrix is
// reduced by Givens rotations on the host as it grows, so |g_{j+1}| is ||b - A x_j|| at every
// step without forming x_j; x is formed at the end of a cycle.
//
// A cycle ends after `restart` steps (MethodParameters::restart), at convergence, or on a
// happy breakdown (the new vector vanishes: the Krylov space holds the solution). Each new
// cycle starts from b - A x recomputed, which replaces the estimate as the iteration's
// residual. Non-finite products end the solve as non_finite, naming the quantity.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "simrun/solvers/matrices/linear_operator.hpp"
#include "simrun/solvers/methods/iterative_solver.hpp"
#include "simrun/solvers/preconditioners/preconditioner.hpp"

namespace simrun::solvers {

// The restart lengths GMRES accepts: the basis holds restart + 1 vectors.
inline constexpr int max_gmres_restart = 128;

// What is wrong with a restart length, e.g. "must be in [1, 128], got 0", or nothing. The
// input file, the command line and Gmres check the same way and place the message themselves.
std::optional<std::string> find_restart_problem(std::int64_t restart);

template <typename T>
class Gmres final : public IterativeSolver<T> {
public:
    // The operator and preconditioner must outlive the solver; a null preconditioner is M = I.
    // Throws std::invalid_argument for a restart length outside [1, max_gmres_restart].
    Gmres(const LinearOperator<T>& a, const Preconditioner<T>* m, MethodParameters parameters);

private:
    SolveResult iterate(const Array<T>& b, Array<T>& x) const override;
    const LinearOperator<T>& a_;
    const Preconditioner<T>* m_;
    MethodParameters parameters_;
    int restart_;
    // Workspace: (restart + 1) basis vectors, z = M v_j (with a preconditioner) and the
    // correction M V y: (restart + 3) n values.
    mutable std::vector<Array<T>> basis_;
    mutable Array<T> z_, correction_;
};

}  // namespace simrun::solvers

#pragma once
// The coarsest level's solve of a multigrid hierarchy: x = A^-1 b by a dense inverse
// (coarsest_solve.cpp), or over ranks the level gathered whole on every rank and one process's
// hierarchy of the rest cycled on it (gathered_solve.hpp).
#include <memory>

#include "multigrid/coarsest_inverse.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/multigrid/multigrid_parameters.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
struct Level;

template <typename T>
class CoarsestSolve {
public:
    virtual ~CoarsestSolve() = default;
    // x = the level's solution (or a cycle's correction, `kind`, added to x) for b. `x_zero`: x
    // is zero on every rank, so it need not be gathered; `timed`: the cycle is being timed by
    // level (no recording).
    virtual void solve(Level<T>& level, const T* b, T* x, MultigridCycle kind, bool x_zero,
                       bool timed) const = 0;
    // The bytes a solve must move at least.
    virtual double bytes(const Level<T>& level) const = 0;
};

// y = A^-1 b, the inverse uploaded in T.
template <typename T>
std::unique_ptr<CoarsestSolve<T>> dense_solve(std::shared_ptr<const Backend> backend,
                                              const CoarsestInverse& coarsest);

}  // namespace simrun::solvers::multigrid

#pragma once
// The multigrid cycle over a hierarchy's levels: smooth, residual, restrict, visit the next
// level, interpolate, smooth. How a level reaches the next one's vectors is its link's
// (coarse_link.hpp), the coarsest level's solve its own (coarsest_solve.hpp), the smoothing its
// smoother's (smoother.hpp): the cycle never names a layout.
#include <cstddef>
#include <memory>
#include <vector>

#include "multigrid/level.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/multigrid/multigrid_parameters.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
class Cycle {
public:
    using Levels = std::vector<std::unique_ptr<Level<T>>>;
    // The levels and parameters are the caller's, which outlive the cycle.
    Cycle(std::shared_ptr<const Backend> backend, const Levels& levels,
          const MultigridParameters& parameters)
        : backend_(std::move(backend)), levels_(levels), parameters_(parameters) {}

    // x = x + a `kind` cycle's correction for A x = b on level `l` (b and x the level's, as
    // its link above gives them). With `seconds`, each level's own work is timed between
    // synchronisations into seconds[level]. `x_zero`: x is zero on every rank (a cycle from
    // zero), so a gathered finest level need not gather it.
    void run(std::size_t l, const T* b, T* x, MultigridCycle kind, std::vector<double>* seconds,
             bool x_zero = false) const;
    // The bytes level `l` and those below move at least as a `kind` cycle visits them.
    double bytes(std::size_t l, MultigridCycle kind) const;

private:
    std::shared_ptr<const Backend> backend_;
    const Levels& levels_;
    const MultigridParameters& parameters_;
};

}  // namespace simrun::solvers::multigrid

#pragma once
// Over ranks, the first level gathered whole on every rank: each rank's part of its b (and on
// the finest level of x) gathered to every rank, then one process's hierarchy of the rest
// cycled on each rank, and where the parts came from windows, a window's values given back.
#include <memory>

#include "distributed/redistribution.hpp"
#include "multigrid/coarsest_solve.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
class Hierarchy;

// `gather`: each rank's points of the level, from the vector the level above gives (the
// level's own whole vector, gathered in place, or a window), to the whole on every rank;
// `window_of` (null where gathered in place): the whole back to this rank's window.
template <typename T>
std::unique_ptr<CoarsestSolve<T>> gathered_solve(std::unique_ptr<Hierarchy<T>> rest,
                                                 std::unique_ptr<Redistribution<T>> gather,
                                                 std::unique_ptr<Redistribution<T>> window_of);

}  // namespace simrun::solvers::multigrid

#pragma once
// Over ranks, the first level gathered whole on every rank: each rank's part of its b (and on
// the finest level of x) gathered to every rank, then one process's hierarchy of the rest
// cycled on each rank, and where the parts came from windows, a window's values given back.
#include <memory>

#include "multigrid/coarsest_solve.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
class Hierarchy;

// `Gather`: LevelGather<T> (slab_exchange.hpp: the parts already in the level's vectors) or
// BoxGather<T> (box_exchange.hpp: the parts taken from the ranks' windows, and given back).
template <typename T, typename Gather>
std::unique_ptr<CoarsestSolve<T>> gathered_solve(std::unique_ptr<Hierarchy<T>> rest,
                                                 std::unique_ptr<Gather> gather);

}  // namespace simrun::solvers::multigrid

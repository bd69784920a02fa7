#pragma once
// Inside the library: a MultigridHierarchy's parts (hierarchy.hpp), for what the public class
// does not offer a program (MultigridPreconditioner's cycle on the finest level's own vectors).
#include "multigrid/hierarchy.hpp"
#include "simrun/solvers/multigrid/multigrid_hierarchy.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
struct HierarchyAccess {
    static const Hierarchy<T>& parts(const MultigridHierarchy<T>& hierarchy) {
        return *hierarchy.parts_;
    }
};

}  // namespace simrun::solvers::multigrid

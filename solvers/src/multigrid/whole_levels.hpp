#pragma once
// One process's levels: the plan (level_plan.hpp) over the partition of one part, made as the
// builder asks for each level. A level's rows are taken as they lie (the caller's on the finest
// level, read in place; below, the Galerkin product of the level above, as coarse_step.hpp makes
// it on the whole box, once the level above is made: made()), its coarsening chosen from them,
// until a level is the last
// (last_level) or does not coarsen: the coarsest, solved by its dense inverse. Also the rest of a
// hierarchy over ranks below the level gathered whole on every rank, on each rank alone: no
// collective (the builder makes it inside all_or_none's local work).
#include <cstdint>

#include "multigrid/coarse_step.hpp"
#include "multigrid/level_plan.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/multigrid/multigrid_parameters.hpp"

namespace simrun::solvers::multigrid {

class WholeLevels final : public LevelPlan {
public:
    // `rows`: a matrix on the points of `box` (x fastest), which outlives the plan. Throws
    // std::invalid_argument where `parameters` are out of range or the rows are not the box's
    // points.
    WholeLevels(const DiaData<double>& rows, const GridBox& box,
                const MultigridParameters& parameters);

    // Checks the level's couplings (std::invalid_argument naming the first entry that couples
    // no neighbour) and plans it.
    PartitionedLevel* next_level() override;
    // The next level's rows from `level`'s, then `level`'s rows and weights released.
    void made(PartitionedLevel& level) override;
    GatheredPlan* gathered_end() override { return nullptr; }

private:
    MultigridParameters parameters_;
    GridBox box_;  // the next level's box
    const DiaData<double>* finest_;
    DiaData<double> coarse_rows_;  // the next level's rows below the finest
    PartitionedLevel level_;       // the level given last
    CoarseStep step_;              // its step to the next level, without the coarse rows
    int index_ = 0;
    bool done_ = false;
};

}  // namespace simrun::solvers::multigrid

#include "multigrid/whole_levels.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "multigrid/coarse_step.hpp"

namespace simrun::solvers::multigrid {

WholeLevels::WholeLevels(const DiaData<double>& rows, const GridBox& box,
                         const MultigridParameters& parameters)
    : parameters_(parameters), box_(box), finest_(&rows) {
    parameters_.validate();
    if (rows.n != box.size()) {
        throw std::invalid_argument("multigrid: the matrix has " + std::to_string(rows.n) +
                                    " rows but the box " + box.describe() + " has " +
                                    std::to_string(box.size()) + " points");
    }
}

PartitionedLevel* WholeLevels::next_level() {
    if (done_) return nullptr;
    // The level given last is made and released (made()): the next one afresh.
    level_ = PartitionedLevel{};
    level_.partition = Partition::whole(box_);
    if (index_ == 0) {
        level_.given = finest_;
    } else {
        level_.window_operator = std::move(coarse_rows_);
    }
    const DiaData<double>& rows = level_.rows();
    level_.along_axes = check_box_couplings(rows, box_);
    BoxCoarsening coarsening;
    if (!last_level(parameters_, box_.size(), index_)) coarsening = choose_coarsening(rows, box_);
    if (!coarsening.coarsens()) {
        level_.coarsest = true;
        done_ = true;
        return &level_;
    }
    // The step on the whole box: its transfer is the coarsening; its coarse rows, the next
    // level's as they lie, once this level is made (made()).
    step_ = coarse_transfer(rows, whole_part(box_), coarsening);
    level_.transfer = step_.transfer;
    level_.weights = std::move(step_.weights);
    return &level_;
}

void WholeLevels::made(PartitionedLevel& level) {
    if (!level.coarsest) {
        step_.weights = std::move(level.weights);
        coarse_rows_ = coarse_rows(level.rows(), whole_part(box_), step_);
        box_ = step_.transfer.coarse;
        ++index_;
    }
    step_ = {};
    LevelPlan::made(level);
}

}  // namespace simrun::solvers::multigrid

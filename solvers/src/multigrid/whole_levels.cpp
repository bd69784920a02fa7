#include "multigrid/whole_levels.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "multigrid/coarse_step.hpp"
#include "multigrid/host_values.hpp"
#include "multigrid/local_bases.hpp"

namespace simrun::solvers::multigrid {

WholeLevels::WholeLevels(const DiaData<double>& rows, const GridBox& box,
                         const MultigridParameters& parameters,
                         std::shared_ptr<const Backend> backend,
                         const DiaMatrix<double>* rows_on_backend,
                         const std::vector<LevelDecision>* decided)
    : parameters_(parameters),
      box_(box),
      finest_(&rows),
      backend_(std::move(backend)),
      finest_on_backend_(rows_on_backend),
      decided_(decided) {
    parameters_.validate();
    if (rows.n != box.size()) {
        throw std::invalid_argument("multigrid: the matrix has " + std::to_string(rows.n) +
                                    " rows but the box " + box.describe() + " has " +
                                    std::to_string(box.size()) + " points");
    }
    if (backend_ && finest_on_backend_ != nullptr) {
        if (finest_on_backend_->size() != static_cast<std::size_t>(rows.n) ||
            finest_on_backend_->offsets() != rows.offsets) {
            throw std::invalid_argument(
                "multigrid: the rows on the back-end are not the rows given (" +
                std::to_string(finest_on_backend_->size()) + " rows of " +
                std::to_string(finest_on_backend_->offsets().size()) + " diagonals against " +
                std::to_string(rows.n) + " of " + std::to_string(rows.offsets.size()) + ")");
        }
        finest_classes_ = rows_in_classes(backend_, *finest_on_backend_);
    }
}

bool WholeLevels::finest_jumps(double ratio) const {
    return finest_classes_ ? has_coefficient_jumps(finest_classes_->host.class_table(), ratio)
                           : has_coefficient_jumps(*finest_, ratio);
}

void WholeLevels::take_rows() {
    if (index_ == 0) {
        level_.given = finest_;
        if (finest_classes_) level_.rows_on_backend = &*finest_classes_;
        return;
    }
    if (!next_) {
        level_.window_operator = std::move(coarse_rows_);
        return;
    }
    rows_ = std::move(*next_);
    next_.reset();
    if (classify_rows(backend_, rows_)) {
        const DiagonalSteps steps(rows_.host, box_);
        if (steps.decoded) {
            level_.rows_on_backend = &rows_;
            ++levels_on_backend_;
            return;
        }
        // A box too thin along an axis for each diagonal to be one step: checked entry by
        // entry, on the host.
        level_.window_operator = rows_.host.expanded();
    } else {
        level_.window_operator = DiaData<double>{rows_.n, rows_.offsets, rows_.values.to_host()};
    }
    rows_ = BackendRows{};
    backend_ = nullptr;  // the host makes the rest
}

BoxCoarsening WholeLevels::decide(const DiagonalSteps& steps) {
    if (decided_ != nullptr) {
        if (static_cast<std::size_t>(index_) >= decided_->size()) {
            throw std::logic_error("multigrid: more levels than the decisions kept");
        }
        const LevelDecision& decision = (*decided_)[static_cast<std::size_t>(index_)];
        level_.along_axes = decision.along_axes;
        return decision.coarsest ? BoxCoarsening{} : decision.transfer;
    }
    const bool last = last_level(parameters_, box_.size(), index_);
    if (level_.rows_on_backend != nullptr) {
        // The caller's couplings are checked (on the faces, where the steps are decoded); a
        // Galerkin product's are neighbours' by construction.
        const ClassRows& rows = level_.rows_on_backend->host;
        level_.along_axes = level_.given != nullptr ? check_box_couplings(*level_.given, box_)
                                                    : classes_along_axes(rows, steps);
        if (last) return {};
        return decide_coarsening(measure_coarsening(rows, box_, whole_part(box_), {0, 0, 0}, box_),
                                 box_);
    }
    const DiaData<double>& rows = level_.rows();
    level_.along_axes = check_box_couplings(rows, box_);
    return last ? BoxCoarsening{} : choose_coarsening(rows, box_);
}

DiaView<double> WholeLevels::rows_view() {
    if (index_ > 0) return rows_.view();
    if (finest_on_backend_ == nullptr) {
        finest_uploaded_ =
            std::make_unique<DiaMatrix<double>>(backend_, *finest_, DiaStorage::general);
        finest_on_backend_ = finest_uploaded_.get();
    }
    return finest_on_backend_->view();
}

void WholeLevels::plan_transfer(const BoxCoarsening& coarsening, const DiagonalSteps& steps) {
    if (!backend_) {
        // On the whole box the step's transfer is the coarsening; its coarse rows, the next
        // level's as they lie, once this level is made (made()).
        step_ = coarse_transfer(level_.rows(), whole_part(box_), coarsening);
        level_.transfer = step_.transfer;
        level_.weights = std::move(step_.weights);
        return;
    }
    step_.transfer = coarsening;
    level_.transfer = coarsening;
    // The collapsed weights are final where no row is at a jump (follow_strong_couplings then
    // leaves them): said by the classes, or where the rows step along the axes by the jumps.
    const bool final_weights = level_.rows_on_backend != nullptr && steps.decoded
                                   ? !classes_at_jump(level_.rows_on_backend->host, steps)
                                   : collapsed_weights_final(level_.rows(), steps, box_);
    if (final_weights) {
        weights_ = collapsed_weights(backend_, rows_view(), steps, box_, coarsening);
        ++weights_on_backend_;
    } else {
        // Local bases where the couplings jump: the host reads the rows around them.
        const bool host_rows = level_.given != nullptr || level_.rows_on_backend == nullptr;
        const DiaData<double> expanded =
            host_rows ? DiaData<double>{} : level_.rows_on_backend->host.expanded();
        const DiaData<double>& rows = host_rows ? level_.rows() : expanded;
        weights_ =
            Array<double>::from_host(backend_, operator_interpolation(rows, box_, coarsening));
    }
    level_.weights_on_backend = &weights_;
}

PartitionedLevel* WholeLevels::next_level() {
    if (done_) return nullptr;
    // The level given last is made and released (made()): the next one afresh.
    level_ = PartitionedLevel{};
    level_.partition = Partition::whole(box_);
    take_rows();
    steps_.emplace(level_.rows_on_backend != nullptr
                       ? DiagonalSteps(level_.rows_on_backend->host, box_)
                       : DiagonalSteps(level_.rows(), box_));
    const BoxCoarsening coarsening = decide(*steps_);
    if (!coarsening.coarsens()) {
        // The coarsest: its dense inverse is made from its rows on the host (a few thousand).
        if (level_.rows_on_backend != nullptr && level_.given == nullptr) {
            level_.window_operator = rows_.host.expanded();
        }
        level_.rows_on_backend = nullptr;
        level_.coarsest = true;
        done_ = true;
        return &level_;
    }
    plan_transfer(coarsening, *steps_);
    return &level_;
}

void WholeLevels::made(PartitionedLevel& level) {
    if (!level.coarsest) {
        if (backend_) {
            next_ = galerkin_rows(backend_, rows_view(), *steps_, box_, step_.transfer, weights_);
        } else {
            step_.weights = std::move(level.weights);
            coarse_rows_ = coarse_rows(level.rows(), whole_part(box_), step_);
        }
        box_ = step_.transfer.coarse;
        ++index_;
    }
    step_ = {};
    weights_ = Array<double>();
    if (index_ > 0) {  // the finest level's copies on the back-end are done with
        level.rows_on_backend = nullptr;
        finest_classes_.reset();
        finest_uploaded_.reset();
        finest_on_backend_ = nullptr;
    }
    LevelPlan::made(level);
}

}  // namespace simrun::solvers::multigrid

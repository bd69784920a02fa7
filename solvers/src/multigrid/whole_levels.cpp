#include "multigrid/whole_levels.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "multigrid/coarse_step.hpp"
#include "multigrid/host_values.hpp"
#include "multigrid/local_bases.hpp"

namespace simrun::solvers::multigrid {
namespace {

// Whether a diagonal of `rows` whose step moves along several axes holds a nonzero entry (then
// Gauss-Seidel needs 2^dimension colours): from the classes' rows, whose entries outside the
// level are zero.
bool classes_along_axes(const ClassRows& rows, const DiagonalSteps& steps) {
    for (int d = 0; d < rows.num_diagonals(); ++d) {
        const Coordinates& s = steps.steps[static_cast<std::size_t>(d)];
        const int moves = (s[0] != 0) + (s[1] != 0) + (s[2] != 0);
        if (moves <= 1) continue;
        for (std::size_t c = 0; c < rows.classes(); ++c) {
            if (rows.table[c * rows.offsets.size() + static_cast<std::size_t>(d)] != 0.0) {
                return false;
            }
        }
    }
    return true;
}

}  // namespace

WholeLevels::WholeLevels(const DiaData<double>& rows, const GridBox& box,
                         const MultigridParameters& parameters,
                         std::shared_ptr<const Backend> backend,
                         const DiaMatrix<double>* rows_on_backend)
    : parameters_(parameters),
      box_(box),
      finest_(&rows),
      backend_(std::move(backend)),
      finest_on_backend_(rows_on_backend) {
    parameters_.validate();
    if (rows.n != box.size()) {
        throw std::invalid_argument("multigrid: the matrix has " + std::to_string(rows.n) +
                                    " rows but the box " + box.describe() + " has " +
                                    std::to_string(box.size()) + " points");
    }
}

void WholeLevels::take_rows() {
    if (index_ == 0) {
        level_.given = finest_;
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
    const bool last = last_level(parameters_, box_.size(), index_);
    if (level_.rows_on_backend != nullptr) {
        // Made by the Galerkin product: its couplings are neighbours' by construction.
        const ClassRows& rows = rows_.host;
        level_.along_axes = classes_along_axes(rows, steps);
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
    const bool jumps = level_.rows_on_backend != nullptr
                           ? has_coefficient_jumps(rows_.host.class_table(), local_basis_jump_ratio)
                           : has_coefficient_jumps(level_.rows(), local_basis_jump_ratio);
    if (steps_along_one_axis(steps) && !jumps) {
        // The collapsed weights are final: made by the back-end.
        weights_ = collapsed_weights(backend_, rows_view(), steps, box_, coarsening);
    } else {
        // Local bases where the couplings jump: the host reads the rows around them.
        const DiaData<double> expanded =
            level_.rows_on_backend != nullptr ? rows_.host.expanded() : DiaData<double>{};
        const DiaData<double>& rows = level_.rows_on_backend != nullptr ? expanded : level_.rows();
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
    steps_.emplace(level_.rows_on_backend != nullptr ? DiagonalSteps(rows_.host, box_)
                                                     : DiagonalSteps(level_.rows(), box_));
    const BoxCoarsening coarsening = decide(*steps_);
    if (!coarsening.coarsens()) {
        // The coarsest: its dense inverse is made from its rows on the host (a few thousand).
        if (level_.rows_on_backend != nullptr) {
            level_.window_operator = rows_.host.expanded();
            level_.rows_on_backend = nullptr;
        }
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
    finest_uploaded_.reset();
    LevelPlan::made(level);
}

}  // namespace simrun::solvers::multigrid

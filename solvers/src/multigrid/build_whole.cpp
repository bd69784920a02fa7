// One process's hierarchy: each level's operator the Galerkin product of the one above, until
// a level is small enough (or cannot be coarsened) to be solved by its dense inverse.
#include <optional>
#include <stdexcept>
#include <string>

#include "multigrid/coarsest_inverse.hpp"
#include "multigrid/finest_entry.hpp"
#include "multigrid/hierarchy.hpp"
#include "multigrid/level_transfer.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/multigrid/multigrid_setup_error.hpp"

namespace simrun::solvers::multigrid {
namespace {

// The coarsest level, `a` on `box` (number `index`): its dense inverse.
template <typename T>
void make_coarsest(const std::shared_ptr<const Backend>& backend, Level<T>& level,
                   const DiaData<double>& a, std::size_t index) {
    if (level.box.size() > 4096) {
        throw MultigridSetupError("multigrid: the box " + level.box.describe() +
                                  " cannot be coarsened below " + std::to_string(level.box.size()) +
                                  " points, too many to solve directly");
    }
    level.coarsest = dense_solve<T>(backend, invert_coarsest(to_csr(a)));
    if (index > 0) {
        level.b = Array<T>(backend, static_cast<std::size_t>(level.box.size()));
        level.x = Array<T>(backend, static_cast<std::size_t>(level.box.size()));
    }
}

}  // namespace

template <typename T>
void Hierarchy<T>::build_whole(const DiaData<double>& fine, const GridBox& box,
                               FinestOperator<T> finest) {
    parameters_.validate();
    size_ = static_cast<std::size_t>(box.size());
    if (fine.n != box.size()) {
        throw std::invalid_argument("multigrid: the matrix has " + std::to_string(fine.n) +
                                    " rows but the box " + box.describe() + " has " +
                                    std::to_string(box.size()) + " points");
    }
    // Each level's operator: the fine matrix, then each Galerkin product.
    std::optional<DiaData<double>> owned;
    const DiaData<double>* level_matrix = &fine;
    GridBox level_box = box;
    for (std::size_t index = 0;; ++index) {
        const DiaData<double>& a = *level_matrix;
        auto level = std::make_unique<Level<T>>();
        level->box = level_box;
        level->shape = shape_of(level_box);
        const bool along_axes = check_box_couplings(a, level_box);
        const int colours = along_axes ? 2 : 1 << level_box.dimension;
        const bool last_allowed = index + 1 >= static_cast<std::size_t>(parameters_.max_levels);
        BoxCoarsening coarsening;
        if (level_box.size() > parameters_.coarsest_size && !last_allowed) {
            coarsening = choose_coarsening(a, level_box);
        }
        if (!coarsening.coarsens()) {
            make_coarsest(backend_, *level, a, index);
            summaries_.push_back({level_box, 0, 0});
            levels_.push_back(std::move(level));
            break;
        }
        LevelRows rows{a, coarsening, std::nullopt};
        SmootherSetup setup;
        setup.colours = colours;
        make_level(backend_, smoother_, *level, rows, index, finest, setup, index > 0);
        level->link = offset_link<T>(backend_, 0);
        summaries_.push_back(
            {level_box, level->a->view().num_diagonals, colours, level->a->storage()});
        levels_.push_back(std::move(level));
        owned = galerkin_operator(a, level_box, coarsening, *rows.weights);
        level_matrix = &*owned;
        level_box = coarsening.coarse;
    }
    entry_ = whole_entry(backend_, cycle_, parameters_);
}

template void Hierarchy<float>::build_whole(const DiaData<double>&, const GridBox&,
                                            FinestOperator<float>);
template void Hierarchy<double>::build_whole(const DiaData<double>&, const GridBox&,
                                             FinestOperator<double>);

}  // namespace simrun::solvers::multigrid

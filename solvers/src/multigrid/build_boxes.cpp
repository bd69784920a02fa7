// The hierarchy over a process grid (box_levels.hpp): every level a part per rank with a point
// of halo on every side another rank holds; then a level gathered whole on every rank from
// the ranks' windows.
#include <optional>
#include <vector>

#include "multigrid/box_exchange.hpp"
#include "multigrid/box_levels.hpp"
#include "multigrid/finest_entry.hpp"
#include "multigrid/gathered_solve.hpp"
#include "multigrid/hierarchy.hpp"

namespace simrun::solvers::multigrid {
namespace {

// What the smoother takes of a part: colour c of the whole box is the window's c with the
// parity of the window's first point flipped in ((i + j + k) mod 2 with 2 colours, each axis's
// parity bit with more); the axes split; this rank's part in the window.
SmootherSetup part_setup(const BoxLevel& split, int dimension) {
    SmootherSetup setup;
    setup.colours = split.along_axes ? 2 : 1 << dimension;
    setup.split_axes = split.split_axes;
    for (std::size_t axis = 0; axis < 3; ++axis) {
        if ((split.window.lower[axis] & 1) == 0) continue;
        setup.colour_flip ^= setup.colours == 2 ? 1 : 1 << axis;
    }
    Box own;
    for (std::size_t axis = 0; axis < 3; ++axis) {
        own.lower[axis] = split.own.lower[axis] - split.window.lower[axis];
        own.upper[axis] = split.own.upper[axis] - split.window.lower[axis];
    }
    setup.own = own;
    setup.zeroed = true;
    return setup;
}

// Where this rank's points lie in the finest window.
Array<std::int64_t> own_index(const std::shared_ptr<const Backend>& backend,
                              const BoxLevel& finest) {
    std::vector<std::int64_t> own;
    for_each_point(finest.own, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
        own.push_back(finest.window.index(i, j, k));
    });
    return Array<std::int64_t>::from_host(backend, own);
}

}  // namespace

template <typename T>
void Hierarchy<T>::build_boxes(const PartRows<double>& rows,
                               std::optional<DiaStorage> fine_storage) {
    parameters_.validate();
    size_ = static_cast<std::size_t>(rows.part.size());
    const Communicator& ranks = backend_->communicator();
    const int dimension = rows.box.dimension;
    MultigridParameters planned = parameters_;
    planned.gather_size = gather_size_on(parameters_, backend_->kind());
    BoxHierarchy plan = plan_box_hierarchy(ranks, rows, planned);
    const auto rank = static_cast<std::size_t>(ranks.rank());
    FinestOperator<T> finest;
    finest.storage = fine_storage;
    Array<std::int64_t> finest_index;
    for (std::size_t l = 0; l < plan.levels.size(); ++l) {
        BoxLevel& split = plan.levels[l];
        auto level = std::make_unique<Level<T>>();
        level->box = split.window.shape(dimension);
        level->shape = shape_of(level->box);
        const SmootherSetup setup = part_setup(split, dimension);
        split_holders_.push_back(ranks.size());
        const bool next_gathered = l + 1 == plan.levels.size();
        all_or_none(ranks, [&] {
            LevelRows level_rows{split.window_operator, split.transfer, std::move(split.weights)};
            make_level(backend_, smoother_, *level, level_rows, l, finest, setup, true);
            if (l == 0) finest_index = own_index(backend_, split);
            // Where the next level is gathered, the transfer's coarse window (this rank's part
            // of it grown by a point), which the gather takes the part from and gives back to.
            level->link =
                next_gathered
                    ? window_link<T>(backend_, static_cast<std::size_t>(split.coarse_window.size()))
                    : offset_link<T>(backend_, 0);
        });
        level->spectrum_bound = ranks.max(level->spectrum_bound);
        // Collective (a device halo is opened with the neighbours): outside all_or_none.
        level->spread.halo = std::make_unique<HaloOf<T, BoxHalo<T>>>(
            std::make_unique<BoxHalo<T>>(backend_, split.box, split.parts));
        summaries_.push_back(
            {split.box, level->a->view().num_diagonals, setup.colours, level->a->storage()});
        levels_.push_back(std::move(level));
        split.window_operator = {};
    }
    std::unique_ptr<Hierarchy<T>> rest;
    auto gathered = gathered_level(plan.gathered, plan.gathered_box, plan.levels.size(), rest);
    // This rank's part of the gathered level lies in the level above's coarse window, or on the
    // finest level is the part itself.
    const Box window =
        plan.levels.empty() ? plan.gathered_parts[rank] : plan.levels.back().coarse_window;
    gathered->coarsest = gathered_solve(
        std::move(rest),
        std::make_unique<BoxGather<T>>(backend_, plan.gathered_box, plan.gathered_parts, window));
    levels_.push_back(std::move(gathered));
    entry_ = scatter_entry(backend_, cycle_, parameters_, *levels_.front(), std::move(finest_index),
                           plan.levels.empty());
}

template void Hierarchy<float>::build_boxes(const PartRows<double>&, std::optional<DiaStorage>);
template void Hierarchy<double>::build_boxes(const PartRows<double>&, std::optional<DiaStorage>);

}  // namespace simrun::solvers::multigrid

// The hierarchy over ranks, from its plan (partitioned_levels.hpp): every level a part per rank
// (possibly none, where the level is held by fewer ranks) with a point of halo on every side
// another rank holds; then a level gathered whole on every rank.
#include <optional>
#include <utility>
#include <vector>

#include "multigrid/finest_entry.hpp"
#include "multigrid/gathered_solve.hpp"
#include "multigrid/hierarchy.hpp"
#include "multigrid/partitioned_levels.hpp"

namespace simrun::solvers::multigrid {
namespace {

// What the smoother takes of a part: colour c of the whole box is the window's c with the
// parity of the window's first point flipped in ((i + j + k) mod 2 with 2 colours, each axis's
// parity bit with more); the axes split; this rank's part in the window.
SmootherSetup part_setup(const PartitionedLevel& planned, int dimension) {
    SmootherSetup setup;
    setup.colours = planned.along_axes ? 2 : 1 << dimension;
    setup.split_axes = planned.split_axes;
    const Box window = planned.window();
    for (std::size_t axis = 0; axis < 3; ++axis) {
        if ((window.lower[axis] & 1) == 0) continue;
        setup.colour_flip ^= setup.colours == 2 ? 1 : 1 << axis;
    }
    setup.own = relative_to(planned.partition.part(), window);
    setup.zeroed = true;
    return setup;
}

// Where this rank's points lie in the finest window.
Array<std::int64_t> own_index(const std::shared_ptr<const Backend>& backend,
                              const PartitionedLevel& finest) {
    std::vector<std::int64_t> own;
    const Box window = finest.window();
    for_each_point(finest.partition.part(),
                   [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
                       own.push_back(window.index(i, j, k));
                   });
    return Array<std::int64_t>::from_host(backend, own);
}

// The link to the next level (this rank holding the level).
template <typename T>
std::unique_ptr<CoarseLink<T>> link_of(const std::shared_ptr<const Backend>& backend,
                                       const PartitionedLevel& planned) {
    if (planned.handoff) return handoff_link<T>(backend, *planned.handoff);
    if (planned.coarse_window_points > 0) {
        return window_link<T>(backend, static_cast<std::size_t>(planned.coarse_window_points));
    }
    return offset_link<T>(backend, static_cast<std::size_t>(planned.coarse_offset));
}

}  // namespace

template <typename T>
void Hierarchy<T>::build_partitioned(PartitionedHierarchy plan, std::size_t size,
                                     std::optional<DiaStorage> fine_storage) {
    size_ = size;
    const Communicator& ranks = backend_->communicator();
    FinestOperator<T> finest;
    finest.storage = fine_storage;
    for (std::size_t l = 0; l < plan.levels.size(); ++l) {
        add_partitioned_level(plan.levels[l], l, finest);
    }
    std::unique_ptr<Hierarchy<T>> rest;
    GatheredPlan& whole = plan.gathered;
    auto gathered = gathered_level(whole.rows, whole.box, plan.levels.size(), rest);
    const auto rank = static_cast<std::size_t>(ranks.rank());
    std::unique_ptr<Redistribution<T>> window_of;
    // The window from the whole (each rank's from its own copy of it), where the gather reads
    // a window; agreed on every rank.
    all_or_none(ranks, [&] {
        if (!whole.window) return;
        VectorLayout window_points(whole.sources.size());
        window_points[rank] = part_runs(whole.box, *whole.window, *whole.window);
        window_of = Redistribution<T>::point_to_point(
            backend_, whole_on_every_rank(whole.box.size(), ranks.size()), window_points);
    });
    // Collective (the gather opens a device halo along the line of ranks).
    auto gather = Redistribution<T>::gather_on_every_rank(backend_, whole.sources);
    if (plan.levels.empty() && !whole.window && !whole.sources[rank].empty()) {
        // The finest level gathered in place: this rank's points in it.
        gathered->spread.own_offset = static_cast<std::size_t>(whole.sources[rank].front().local);
    }
    gathered->coarsest = gathered_solve(std::move(rest), std::move(gather), std::move(window_of));
    levels_.push_back(std::move(gathered));
    const bool finest_gathered = plan.levels.empty();
    // Where this rank's part is one run of its window's points (whole planes of it, as a
    // slab's is), b and x enter the finest level by one copy.
    if (finest_gathered
            ? !whole.window
            : one_run_of(plan.levels.front().partition.part(), plan.levels.front().window())) {
        entry_ = offset_entry(backend_, cycle_, parameters_, *levels_.front(), size_);
    } else {
        entry_ = scatter_entry(
            backend_, cycle_, parameters_, *levels_.front(),
            finest_gathered ? Array<std::int64_t>() : own_index(backend_, plan.levels.front()),
            finest_gathered);
    }
}

template <typename T>
void Hierarchy<T>::add_partitioned_level(PartitionedLevel& planned, std::size_t l,
                                         FinestOperator<T>& finest) {
    const Communicator& ranks = backend_->communicator();
    const int dimension = planned.box().dimension;
    auto level = std::make_unique<Level<T>>();
    const Box window = planned.window();
    level->box = window.shape(dimension);
    level->shape = shape_of(level->box);
    const SmootherSetup setup = part_setup(planned, dimension);
    level->spread.holds = planned.holds();
    split_holders_.push_back(planned.holders);
    all_or_none(ranks, [&] {
        if (!planned.holds()) return;
        LevelRows rows{planned.window_operator, planned.transfer, std::move(planned.weights)};
        make_level(backend_, smoother_, *level, rows, l, finest, setup, true);
        const Box& part = planned.partition.part();
        level->spread.own_offset =
            static_cast<std::size_t>(window.index(part.lower[0], part.lower[1], part.lower[2]));
        level->link = link_of<T>(backend_, planned);
    });
    // A rank that holds none of the level only visits the levels below.
    if (!level->link) level->link = offset_link<T>(backend_, 0);
    // The smoother's bound is the whole level's (every rank's rows).
    level->spectrum_bound = ranks.max(level->spectrum_bound);
    // Collective (a device halo is opened with the neighbours): outside all_or_none.
    level->spread.halo =
        std::make_unique<HaloExchange<T>>(backend_, halo_plan(planned.partition, planned.window()));
    summaries_.push_back(
        level->a != nullptr
            ? Summary{planned.box(), level->a->view().num_diagonals, setup.colours,
                      level->a->storage()}
            : Summary{planned.box(), planned.window_operator.num_diagonals(), setup.colours});
    levels_.push_back(std::move(level));
    // The level is on the back-end: its host rows go before the next's are converted.
    planned.window_operator = {};
}

template void Hierarchy<float>::build_partitioned(PartitionedHierarchy, std::size_t,
                                                  std::optional<DiaStorage>);
template void Hierarchy<double>::build_partitioned(PartitionedHierarchy, std::size_t,
                                                   std::optional<DiaStorage>);

}  // namespace simrun::solvers::multigrid

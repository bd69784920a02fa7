// The one build of a multigrid hierarchy, from its plan over a partition of each level's box
// (level_plan.hpp): every level made from this rank's rows on its window, its transfer and
// weights (level_builder.hpp). A level split over ranks adds the ranks' agreement, the whole
// level's smoother bound and its halo exchange; one process's hierarchy (the partition of one
// part) ends with the coarsest level's dense inverse and has its whole cycle recorded; over ranks
// the levels end with the first level gathered whole on every rank, whose rest is one process's
// hierarchy on each rank, built the same way (gathered_solve.cpp).
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "multigrid/coarsest_inverse.hpp"
#include "multigrid/finest_entry.hpp"
#include "multigrid/gathered_solve.hpp"
#include "multigrid/hierarchy.hpp"
#include "multigrid/level_plan.hpp"
#include "multigrid/partitioned_levels.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/multigrid/multigrid_setup_error.hpp"

namespace simrun::solvers::multigrid {
namespace {

// What the smoother takes of a part: colour c of the whole box is the window's c with the
// parity of the window's first point flipped in ((i + j + k) mod 2 with 2 colours, each axis's
// parity bit with more); the axes split, and those whose parity the colours take slowest;
// where the level is split, this rank's part in the window (the points next to the halo) and
// vectors zeroed once.
SmootherSetup part_setup(const PartitionedLevel& planned, int dimension, unsigned slow_axes) {
    SmootherSetup setup;
    setup.colours = planned.along_axes ? 2 : 1 << dimension;
    setup.split_axes = planned.split_axes;
    setup.slow_axes = slow_axes;
    const Box window = planned.window();
    for (std::size_t axis = 0; axis < 3; ++axis) {
        if ((window.lower[axis] & 1) == 0) continue;
        setup.colour_flip ^= setup.colours == 2 ? 1 : 1 << axis;
    }
    if (planned.split()) {
        setup.own = relative_to(planned.partition.part(), window);
        setup.zeroed = true;
    }
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

// The same as a range of the finest window, in its coordinates.
BoxRange own_range(const PartitionedLevel& finest) {
    const Box own = relative_to(finest.partition.part(), finest.window());
    BoxRange range{};
    for (std::size_t axis = 0; axis < 3; ++axis) {
        range.lower[axis] = own.lower[axis];
        range.upper[axis] = own.upper[axis];
    }
    return range;
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
void Hierarchy<T>::build(LevelPlan& plan, std::size_t size, FinestOperator<T> finest) {
    size_ = size;
    std::size_t l = 0;
    for (; PartitionedLevel* planned = plan.next_level(); ++l) {
        // By default the colours take the parity across the finest level's split slowest, on
        // every level (the rest below a gathered level too: it takes these parameters).
        if (l == 0 && !parameters_.slow_colour_axes) {
            parameters_.slow_colour_axes = planned->split() ? planned->split_axes : 0u;
        }
        decisions_.push_back({planned->transfer, planned->along_axes, planned->coarsest});
        if (planned->coarsest) {
            add_coarsest_level(*planned, l);
        } else {
            add_level(*planned, l, finest);
        }
        if (l == 0) enter_finest(*planned);
        plan.made(*planned);
    }
    if (GatheredPlan* gathered = plan.gathered_end()) add_gathered_level(*gathered, l);
}

template <typename T>
void Hierarchy<T>::enter_finest(const PartitionedLevel& planned) {
    if (!planned.split()) {
        // One process's hierarchy: the caller's vectors are the finest level's, and the whole
        // cycle is recorded once (on CUDA a graph).
        entry_ = whole_entry(backend_, cycle_, parameters_);
        return;
    }
    // Agreed over the ranks: the levels below have collectives to reach (an upload may fail
    // on one rank alone).
    all_or_none(backend_->communicator(), [&] {
        if (one_run_of(planned.partition.part(), planned.window())) {
            // This rank's part is one run of its window's points (whole planes of it, as a
            // slab's is): b and x enter by one copy.
            entry_ = offset_entry(backend_, cycle_, parameters_, *levels_.front(), size_);
        } else {
            entry_ = scatter_entry(backend_, cycle_, parameters_, *levels_.front(),
                                   own_index(backend_, planned), own_range(planned), false);
        }
    });
}

template <typename T>
void Hierarchy<T>::add_level(PartitionedLevel& planned, std::size_t l, FinestOperator<T>& finest) {
    const Communicator& ranks = backend_->communicator();
    const int dimension = planned.box().dimension;
    auto level = std::make_unique<Level<T>>();
    const Box window = planned.window();
    level->box = window.shape(dimension);
    level->shape = shape_of(level->box);
    const SmootherSetup setup =
        part_setup(planned, dimension, parameters_.slow_colour_axes.value_or(0u));
    level->spread.holds = planned.holds();
    const auto make = [&] {
        if (!planned.holds()) return;
        // The host's rows where the plan has them (the caller's finest, read in place), else
        // the classes of rows made by the back-end.
        const bool host_rows = planned.given != nullptr || planned.rows_on_backend == nullptr;
        LevelRows rows{.rows = host_rows ? &planned.rows() : nullptr,
                       .rows_on_backend = planned.rows_on_backend,
                       .coarsening = planned.transfer,
                       .weights = &planned.weights,
                       .weights_on_backend = planned.weights_on_backend};
        make_level(backend_, smoother_, *level, rows, l, finest, setup, planned.split() || l > 0);
        const Box& part = planned.partition.part();
        level->spread.own_offset =
            static_cast<std::size_t>(window.index(part.lower[0], part.lower[1], part.lower[2]));
        level->link = link_of<T>(backend_, planned);
    };
    if (planned.split()) {
        split_holders_.push_back(planned.holders);
        all_or_none(ranks, make);
        // A rank that holds none of the level only visits the levels below.
        if (!level->link) level->link = offset_link<T>(backend_, 0);
        // The smoother's bound is the whole level's (every rank's rows).
        level->spectrum_bound = ranks.max(level->spectrum_bound);
        // Collective (a device halo is opened with the neighbours): outside all_or_none.
        level->spread.halo =
            std::make_unique<HaloExchange<T>>(backend_, halo_plan(planned.partition, window));
    } else {
        make();  // one part: no other rank to agree with, no halo
    }
    summaries_.push_back(
        level->a != nullptr
            ? Summary{planned.box(), level->a->view().num_diagonals, setup.colours,
                      level->a->storage()}
            : Summary{planned.box(), planned.rows().num_diagonals(), setup.colours});
    levels_.push_back(std::move(level));
}

template <typename T>
void Hierarchy<T>::add_coarsest_level(const PartitionedLevel& planned, std::size_t l) {
    const GridBox& box = planned.box();
    if (box.size() > 4096) {
        throw MultigridSetupError("multigrid: the box " + box.describe() +
                                  " cannot be coarsened below " + std::to_string(box.size()) +
                                  " points, too many to solve directly");
    }
    auto level = std::make_unique<Level<T>>();
    level->box = box;
    level->shape = shape_of(box);
    level->coarsest = dense_solve<T>(backend_, invert_coarsest(to_csr(planned.rows())));
    if (l > 0) {
        level->b = Array<T>(backend_, static_cast<std::size_t>(box.size()));
        level->x = Array<T>(backend_, static_cast<std::size_t>(box.size()));
    }
    summaries_.push_back({box, 0, 0});
    levels_.push_back(std::move(level));
}

template <typename T>
void Hierarchy<T>::add_gathered_level(GatheredPlan& whole, std::size_t split_levels) {
    const Communicator& ranks = backend_->communicator();
    std::unique_ptr<Hierarchy<T>> rest;
    auto gathered = gathered_level(whole.rows, whole.box, split_levels, rest);
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
    const bool finest_gathered = split_levels == 0;
    if (finest_gathered && !whole.window && !whole.sources[rank].empty()) {
        // The finest level gathered in place: this rank's points in it.
        gathered->spread.own_offset = static_cast<std::size_t>(whole.sources[rank].front().local);
    }
    gathered->coarsest = gathered_solve(std::move(rest), std::move(gather), std::move(window_of));
    levels_.push_back(std::move(gathered));
    if (!finest_gathered) return;
    // The finest level gathered: b and x enter at this rank's offset in it, or are the window
    // the gather reads.
    if (!whole.window) {
        entry_ = offset_entry(backend_, cycle_, parameters_, *levels_.front(), size_);
    } else {
        entry_ = scatter_entry(backend_, cycle_, parameters_, *levels_.front(),
                               Array<std::int64_t>(), BoxRange{}, true);
    }
}

template void Hierarchy<float>::build(LevelPlan&, std::size_t, FinestOperator<float>);
template void Hierarchy<double>::build(LevelPlan&, std::size_t, FinestOperator<double>);

}  // namespace simrun::solvers::multigrid

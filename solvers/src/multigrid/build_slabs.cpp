// The hierarchy over ranks split in slabs (slab_levels.hpp): every level a slab of planes per
// rank with a plane of halo on each side; where its slabs get thin, a level split anew over
// fewer ranks (the others hold none of it); then a level gathered whole on every rank.
#include <optional>

#include "multigrid/finest_entry.hpp"
#include "multigrid/gathered_solve.hpp"
#include "multigrid/hierarchy.hpp"
#include "multigrid/slab_exchange.hpp"
#include "multigrid/slab_levels.hpp"

namespace simrun::solvers::multigrid {
namespace {

// What the smoother takes of a slab: colour c of the whole box is the window's c, or with the
// last axis's parity bit flipped where the window starts on an odd plane ((i + j + k) mod 2
// with 2 colours); the last axis split; this rank's planes in the window.
SmootherSetup slab_setup(const SlabLevel& slab, const GridBox& box) {
    SmootherSetup setup;
    setup.colours = slab.along_axes ? 2 : 1 << box.dimension;
    if ((slab.window_first_plane() & 1) != 0) {
        setup.colour_flip = setup.colours == 2 ? 1 : 1 << (box.dimension - 1);
    }
    setup.split_axes = 1u << (box.dimension - 1);
    Box own = whole_part(slab.window);
    const auto slow = static_cast<std::size_t>(box.dimension - 1);
    own.lower[slow] = slab.halo_before ? 1 : 0;
    own.upper[slow] = own.lower[slow] + slab.planes;
    setup.own = own;
    setup.zeroed = true;
    return setup;
}

}  // namespace

template <typename T>
void Hierarchy<T>::build_slabs(const DiaData<double>& block, const GridBox& box,
                               std::optional<DiaStorage> fine_storage) {
    parameters_.validate();
    size_ = static_cast<std::size_t>(block.n);
    const Communicator& ranks = backend_->communicator();
    MultigridParameters planned = parameters_;
    planned.gather_size = gather_size_on(parameters_, backend_->kind());
    SlabHierarchy plan = plan_slab_hierarchy(ranks, block, box, planned);
    FinestOperator<T> finest;
    finest.storage = fine_storage;
    for (std::size_t l = 0; l < plan.levels.size(); ++l) {
        SlabLevel& slab = plan.levels[l];
        auto level = std::make_unique<Level<T>>();
        level->box = slab.window;
        level->shape = shape_of(slab.window);
        const SmootherSetup setup = slab_setup(slab, box);
        level->spread.holds = slab.holds();
        split_holders_.push_back(slab.holders);
        all_or_none(ranks, [&] {
            if (!slab.holds()) return;
            LevelRows rows{slab.window_operator, slab.transfer, std::move(slab.weights)};
            make_level(backend_, smoother_, *level, rows, l, finest, setup, true);
            level->spread.own_offset = static_cast<std::size_t>(slab.halo_before ? slab.plane : 0);
            if (slab.handoff) {
                const SlabHandoff& h = *slab.handoff;
                level->link = handoff_link<T>(
                    backend_, std::make_unique<LevelHandoff<T>>(backend_, h.restricted, h.reached,
                                                                h.held, h.plane));
            } else {
                level->link =
                    offset_link<T>(backend_, static_cast<std::size_t>(slab.coarse_offset));
            }
        });
        // A rank that holds none of the level only visits the levels below.
        if (!level->link) level->link = offset_link<T>(backend_, 0);
        // The smoother's bound is the whole level's (every rank's rows).
        level->spectrum_bound = ranks.max(level->spectrum_bound);
        // Collective (a device halo is opened with the neighbours): outside all_or_none.
        level->spread.halo = std::make_unique<HaloOf<T, SlabHalo<T>>>(std::make_unique<SlabHalo<T>>(
            backend_, slab.plane, slab.planes, slab.halo_before, slab.halo_after));
        summaries_.push_back(
            level->a != nullptr
                ? Summary{slab.box, level->a->view().num_diagonals, setup.colours,
                          level->a->storage()}
                : Summary{slab.box, slab.window_operator.num_diagonals(), setup.colours});
        levels_.push_back(std::move(level));
        // The level is on the back-end: its host rows go before the next's are converted.
        slab.window_operator = {};
    }
    std::unique_ptr<Hierarchy<T>> rest;
    auto gathered = gathered_level(plan.gathered, plan.gathered_box, plan.levels.size(), rest);
    // Collective (a device halo is opened with the neighbours): outside all_or_none.
    auto gather = std::make_unique<LevelGather<T>>(backend_, std::move(plan.gathered_starts));
    if (plan.levels.empty()) {  // the finest level gathered: this rank's points in it
        gathered->spread.own_offset =
            static_cast<std::size_t>(gather->starts()[static_cast<std::size_t>(ranks.rank())]);
    }
    gathered->coarsest = gathered_solve(std::move(rest), std::move(gather));
    levels_.push_back(std::move(gathered));
    entry_ = offset_entry(backend_, cycle_, parameters_, *levels_.front(), size_);
}

template void Hierarchy<float>::build_slabs(const DiaData<double>&, const GridBox&,
                                            std::optional<DiaStorage>);
template void Hierarchy<double>::build_slabs(const DiaData<double>&, const GridBox&,
                                             std::optional<DiaStorage>);

}  // namespace simrun::solvers::multigrid

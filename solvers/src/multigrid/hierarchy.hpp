#pragma once
// The parts of a MultigridHierarchy (multigrid_hierarchy.hpp): its levels (level.hpp), the
// cycle over them (cycle.hpp), how a caller's b and x reach the finest level (finest_entry.hpp),
// and the summaries describe() reads. Built by one path (build_partitioned.cpp) from a plan over
// a partition of each level's box (level_plan.hpp): over ranks the planner's
// (partitioned_levels.hpp), on one process the partition of one part (whole_levels.hpp), each
// level made by the one routine of level_builder.hpp.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "multigrid/cycle.hpp"
#include "multigrid/level.hpp"
#include "multigrid/level_builder.hpp"
#include "multigrid/level_plan.hpp"
#include "simrun/solvers/multigrid/multigrid_hierarchy.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
class FinestEntry;
class LevelPlan;
struct PartitionedLevel;
struct GatheredPlan;

template <typename T>
class Hierarchy {
public:
    using Summary = MultigridLevelSummary;
    // `on_this_rank`: one process's hierarchy even over several ranks (of a level gathered
    // whole on each).
    Hierarchy(std::shared_ptr<const Backend> backend, const MultigridParameters& parameters,
              bool on_this_rank = false);
    ~Hierarchy();
    Hierarchy(const Hierarchy&) = delete;
    Hierarchy& operator=(const Hierarchy&) = delete;

    // Whether the levels are split over ranks (the back-end's communicator has several and
    // this is not one process's hierarchy of a gathered level).
    bool split() const;
    // An automatic cycle made V or W (MultigridCycle) by whether the operator's coefficients
    // jump on some rank; collective over ranks.
    void resolve_cycle(bool jumps_on_this_rank);

    // Makes the levels `plan` gives, finest first, and how b and x enter the finest (one
    // process's: the whole cycle recorded). `size`: this rank's points of the finest level;
    // `finest`: its operator where the caller has one.
    void build(LevelPlan& plan, std::size_t size, FinestOperator<T> finest);
    // What each level's plan decided (one process's hierarchy; build() records them).
    const std::vector<LevelDecision>& decisions() const { return decisions_; }
    // The parameters the planner over ranks takes (the back-end's gather size).
    MultigridParameters planned_parameters() const;

    void cycle(const Array<T>& b, Array<T>& x) const;
    void cycle_from_zero(const Array<T>& b, Array<T>& x) const;
    std::vector<double> time_levels(const Array<T>& b, Array<T>& x, int cycles) const;
    double bytes_per_cycle() const { return cycle_.bytes(0, parameters_.cycle); }
    std::string describe() const;
    // The cycle over the levels (a gathered level's sub-hierarchy runs it at other kinds).
    const Cycle<T>& runner() const { return cycle_; }

    // Over ranks, where this rank's points lie in the finest window (MultigridPreconditioner,
    // through hierarchy_access.hpp): z = a cycle from zero on r, both in the other precision,
    // r rounded straight into the finest level's b and z widened straight out of its x
    // (FinestEntry::run_other_from_zero). enters_other(): whether it serves.
    bool enters_other() const;
    void cycle_other_from_zero(const OtherPrecision<T>* r, OtherPrecision<T>* z) const;

    const MultigridParameters& parameters() const { return parameters_; }
    const std::shared_ptr<const Backend>& backend() const { return backend_; }
    const std::vector<Summary>& summaries() const { return summaries_; }
    std::size_t size() const { return size_; }

private:
    // A level that coarsens (number `index`), its link to the next; where it is split, with its
    // halo exchange and agreed over the ranks.
    void add_level(PartitionedLevel& planned, std::size_t index, FinestOperator<T>& finest);
    // One process's coarsest level: its dense inverse (MultigridSetupError where it has more
    // than 4096 points).
    void add_coarsest_level(const PartitionedLevel& planned, std::size_t index);
    // Over ranks, after `split_levels` split ones: the first level gathered whole on every rank,
    // with its solve (gathered_level) and the gather.
    void add_gathered_level(GatheredPlan& whole, std::size_t split_levels);
    // The first level gathered whole on every rank: its whole b and x and one process's
    // hierarchy of the rest on each rank, its levels added to the summaries. Its solve is made
    // by the builder, with the gather.
    std::unique_ptr<Level<T>> gathered_level(const DiaData<double>& rows, const GridBox& box,
                                             std::size_t split_levels,
                                             std::unique_ptr<Hierarchy<T>>& rest);
    // How b and x reach the finest level `planned`, once it is made.
    void enter_finest(const PartitionedLevel& planned);
    void check_sizes(const Array<T>& b, const Array<T>& x) const;

    std::shared_ptr<const Backend> backend_;
    MultigridParameters parameters_;
    bool on_this_rank_ = false;
    SmootherKind<T> smoother_;
    std::vector<std::unique_ptr<Level<T>>> levels_;
    Cycle<T> cycle_;
    std::unique_ptr<FinestEntry<T>> entry_;
    std::vector<Summary> summaries_;
    std::vector<LevelDecision> decisions_;
    std::size_t size_ = 0;
    std::size_t split_levels_ = 0;    // over ranks: the levels split, then one gathered
    std::vector<int> split_holders_;  // over ranks: how many ranks hold each split level
};

}  // namespace simrun::solvers::multigrid

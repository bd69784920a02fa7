#pragma once
// The parts of a MultigridHierarchy (multigrid_hierarchy.hpp): its levels (level.hpp), the
// cycle over them (cycle.hpp), how a caller's b and x reach the finest level (finest_entry.hpp),
// and the summaries describe() reads. Built by one of two builders, each in its own file: one
// process (build_whole.cpp: its cycle recorded whole, the levels' operators made as they are
// coarsened, with no plan and no halo), and over ranks the one build over a partition's plan
// (build_partitioned.cpp), both making each level with the one routine of level_builder.hpp.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "multigrid/cycle.hpp"
#include "multigrid/level.hpp"
#include "multigrid/level_builder.hpp"
#include "simrun/solvers/multigrid/multigrid_hierarchy.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
class FinestEntry;
struct PartitionedHierarchy;
struct PartitionedLevel;

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

    // The builders (see MultigridHierarchy's constructors).
    void build_whole(const DiaData<double>& fine, const GridBox& box, FinestOperator<T> finest);
    // Over ranks, from the plan (partitioned_levels.hpp); `size`: this rank's points of the
    // finest level.
    void build_partitioned(PartitionedHierarchy plan, std::size_t size,
                           std::optional<DiaStorage> fine_storage);
    // The parameters the planner over ranks takes (the back-end's gather size).
    MultigridParameters planned_parameters() const;

    void cycle(const Array<T>& b, Array<T>& x) const;
    void cycle_from_zero(const Array<T>& b, Array<T>& x) const;
    std::vector<double> time_levels(const Array<T>& b, Array<T>& x, int cycles) const;
    double bytes_per_cycle() const { return cycle_.bytes(0, parameters_.cycle); }
    std::string describe() const;
    // The cycle over the levels (a gathered level's sub-hierarchy runs it at other kinds).
    const Cycle<T>& runner() const { return cycle_; }

    // Where this rank's part is one run of its window, the finest level's own vectors
    // (MultigridPreconditioner, through hierarchy_access.hpp): this rank's part of b (null
    // otherwise) and of x, and a cycle from x = 0 on the b written there.
    T* own_b() const;
    const T* own_x() const;
    void cycle_own_b_from_zero() const;

    const MultigridParameters& parameters() const { return parameters_; }
    const std::shared_ptr<const Backend>& backend() const { return backend_; }
    const std::vector<Summary>& summaries() const { return summaries_; }
    std::size_t size() const { return size_; }

private:
    // The first level gathered whole on every rank (after `split_levels` split ones): its
    // whole b and x and one process's hierarchy of the rest on each rank, its levels added to
    // the summaries. Its solve is made by the builder, with the gather.
    std::unique_ptr<Level<T>> gathered_level(const DiaData<double>& rows, const GridBox& box,
                                             std::size_t split_levels,
                                             std::unique_ptr<Hierarchy<T>>& rest);
    void add_partitioned_level(PartitionedLevel& planned, std::size_t index,
                               FinestOperator<T>& finest);
    void check_sizes(const Array<T>& b, const Array<T>& x) const;

    std::shared_ptr<const Backend> backend_;
    MultigridParameters parameters_;
    bool on_this_rank_ = false;
    SmootherKind<T> smoother_;
    std::vector<std::unique_ptr<Level<T>>> levels_;
    Cycle<T> cycle_;
    std::unique_ptr<FinestEntry<T>> entry_;
    std::vector<Summary> summaries_;
    std::size_t size_ = 0;
    std::size_t split_levels_ = 0;    // over ranks: the levels split, then one gathered
    std::vector<int> split_holders_;  // over ranks: how many ranks hold each split level
};

}  // namespace simrun::solvers::multigrid

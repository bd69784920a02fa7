#pragma once
// What the one build of a multigrid hierarchy (build_partitioned.cpp) makes its levels from,
// level by level: each level's Partition of its box (over ranks a part per rank, possibly none
// where fewer ranks hold it; on one process the partition of one part, Partition::whole, whose
// window is the box and whose halo is none), this rank's rows on its window, the transfer to the
// next level with its weights and where its coarse points lie; the coarsest level of one
// process's hierarchy is solved by its dense inverse, and over ranks the levels end with the
// first level gathered whole on every rank. Two planners give it: over the ranks
// partitioned_levels.hpp, on one part whole_levels.hpp, both taking the step to the next level
// from coarse_step.hpp.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "distributed/redistribution.hpp"
#include "multigrid/backend_rows.hpp"
#include "multigrid/level_transfer.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/distributed/partition.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/multigrid/multigrid_parameters.hpp"

namespace simrun::solvers::multigrid {

// Where the next level is split over fewer ranks than this one: the transfer's coarse points
// are a window of their own (`window_points`: the next level's points this rank's window
// reaches), in which each rank restricts rightly the points `restricted` (its own coarse
// points); `held` is every rank's part of the next level (this rank's at its place in its
// window of it) and `reached` every rank's window of the transfer. Global: the next level's
// numbering.
struct HandoffPlan {
    VectorLayout restricted, held, reached;
    std::int64_t window_points = 0;
};

// One level, as one rank holds it (a rank that holds none of it: an empty part and window).
struct PartitionedLevel {
    Partition partition = Partition::whole(GridBox{1, {1, 1, 1}});
    // The window's rows: over ranks the part's rows whole, the halo rows' entries that reach
    // outside the window zeroed (the halo's values come from the other ranks; its rows are
    // never used); on one part the level's rows as they lie. Where `given` is set it stands for
    // them: the caller's rows of one process's finest level, read in place.
    DiaData<double> window_operator;
    const DiaData<double>* given = nullptr;
    bool along_axes = true;   // every rank's couplings lie along the axes (two colours suffice)
    unsigned split_axes = 0;  // bit a: the level is split along axis a
    int holders = 1;          // the ranks that hold points of the level
    // The coarsest level (one process's last): solved by its dense inverse, no transfer.
    bool coarsest = false;
    // The transfer on the window (level_transfer.hpp's layout) and its weights.
    BoxCoarsening transfer;
    std::vector<double> weights;
    // One process's level made by the back-end (whole_levels.hpp): its rows there, in classes
    // (instead of `window_operator`), and its transfer's weights there (instead of `weights`).
    const BackendRows* rows_on_backend = nullptr;
    const Array<double>* weights_on_backend = nullptr;
    // Over ranks, what those point to where the plan made them on the back-end (the plan is made
    // whole before the build, so each level keeps its own).
    std::shared_ptr<const BackendRows> kept_rows;
    std::shared_ptr<const Array<double>> kept_weights;
    // Where the transfer's coarse points lie: in the next level's vectors from `coarse_offset`
    // on (its window, or the whole gathered level); in vectors of their own of
    // `coarse_window_points` (> 0) that the next level, gathered, is gathered from; or in the
    // handoff's window.
    std::int64_t coarse_offset = 0;
    std::int64_t coarse_window_points = 0;
    std::optional<HandoffPlan> handoff;

    const DiaData<double>& rows() const { return given != nullptr ? *given : window_operator; }
    const GridBox& box() const { return partition.box(); }
    Box window() const { return partition.window(); }
    bool holds() const { return !partition.part().empty(); }
    // Whether the level is split over ranks (a partition of several parts): its halo is
    // exchanged, and what one rank may fail at alone is agreed.
    bool split() const { return partition.ranks() > 1; }
};

// What one process's plan decided for a level (its coarsening; none on the coarsest, and
// whether its couplings lie along the axes), kept so that new values on the same rows make
// their levels without deciding again (MultigridHierarchy::refresh).
struct LevelDecision {
    BoxCoarsening transfer;
    bool along_axes = true;
    bool coarsest = false;
};

// The first level that is not split: its rows whole, on every rank, and every rank's points of
// it in the vector it gives the gather (local: positions in that vector), which is the level's
// own whole vector (each rank's points at their place: gathered in place), or, where `window`
// is given, a window of the level whose values the gather gives back.
struct GatheredPlan {
    GridBox box;
    DiaData<double> rows;
    VectorLayout sources;
    std::optional<Box> window;
};

// The levels as the builder asks for them, finest first.
class LevelPlan {
public:
    virtual ~LevelPlan() = default;
    // The next level, or null after the last. The builder makes each level, then tells made(),
    // before it asks for the next.
    virtual PartitionedLevel* next_level() = 0;
    // `level` is on the back-end: its host rows and weights go (one process's plan first takes
    // the next level's rows from them: one level's rows and the next's at once, at most).
    virtual void made(PartitionedLevel& level) {
        level.window_operator = {};
        level.weights = {};
        if (level.kept_rows) level.rows_on_backend = nullptr;
        if (level.kept_weights) level.weights_on_backend = nullptr;
        level.kept_rows.reset();
        level.kept_weights.reset();
    }
    // After the last level, over ranks: the level gathered whole on every rank that follows
    // them; null where the last was a coarsest level (one process's hierarchy).
    virtual GatheredPlan* gathered_end() = 0;
};

// A plan made whole beforehand (the planner over ranks gives it).
struct PartitionedHierarchy final : LevelPlan {
    std::vector<PartitionedLevel> levels;  // split over the ranks (none: the finest gathered)
    GatheredPlan gathered;
    // Whether the finest rows this rank read jump (cycle_jump_ratio): the rows around its part,
    // or the whole finest level where it is gathered; the cycle is V or W by every rank's.
    bool finest_jumps = false;

    PartitionedLevel* next_level() override {
        return next_ < levels.size() ? &levels[next_++] : nullptr;
    }
    GatheredPlan* gathered_end() override { return &gathered; }

private:
    std::size_t next_ = 0;
};

// Whether a level of `points` points, number `level` from the finest, is not coarsened: small
// enough to solve (MultigridParameters::coarsest_size) or the last that max_levels allows. The
// same rule on one process and over ranks.
inline bool last_level(const MultigridParameters& parameters, std::int64_t points, int level) {
    return points <= parameters.coarsest_size || level + 1 >= parameters.max_levels;
}

}  // namespace simrun::solvers::multigrid

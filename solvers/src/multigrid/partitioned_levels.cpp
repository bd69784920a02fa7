#include "multigrid/partitioned_levels.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "boxes/box_steps.hpp"
#include "multigrid/backend_rows.hpp"
#include "multigrid/box_entries.hpp"
#include "multigrid/coarse_step.hpp"
#include "multigrid/local_bases.hpp"
#include "multigrid/step_rows.hpp"

namespace simrun::solvers::multigrid {

bool one_run_of(const Box& part, const Box& layout) {
    return part.points(0) == layout.points(0) &&
           (part.points(2) == 1 || part.points(1) == layout.points(1));
}

Box relative_to(const Box& a, const Box& b) {
    Box r = a;
    for (std::size_t axis = 0; axis < 3; ++axis) {
        r.lower[axis] -= b.lower[axis];
        r.upper[axis] -= b.lower[axis];
    }
    return r;
}

namespace {

using Index = std::int64_t;

// What the planner carries from one level to the next: the level's box, every rank's part of
// it (empty where the rank holds none), this rank's rows on its part and the steps they use,
// and how many ranks hold points (the first ones).
struct LevelState {
    GridBox box;
    std::vector<Box> parts;
    StepRows own;
    // Or this rank's rows kept on the back-end (`own` then unused), from level to level while
    // each level's step is made there.
    std::optional<BackendStepRows> own_kept;
    std::vector<Step> steps;
    int holders = 1;
    // Where the level was split anew: the parts each rank's restriction computes rightly.
    std::vector<Box> restricted;
};

// Whether some rank's part is thinner than ghost_layers points along an axis the level splits:
// its rows and those of the layers around it then come from further than its neighbours, and
// its coarse part may hold too few points.
bool some_part_thin(const std::vector<Box>& parts, const GridBox& box) {
    return std::any_of(parts.begin(), parts.end(), [&](const Box& part) {
        for (std::size_t axis = 0; axis < 3; ++axis) {
            if (!part.empty() && part.points(axis) < box.points[axis] &&
                part.points(axis) < ghost_layers) {
                return true;
            }
        }
        return false;
    });
}

unsigned split_axes_of(const std::vector<Box>& parts, const GridBox& box) {
    unsigned axes = 0;
    for (const Box& part : parts) {
        for (std::size_t axis = 0; axis < 3; ++axis) {
            if (!part.empty() && part.points(axis) < box.points[axis]) axes |= 1u << axis;
        }
    }
    return axes;
}

int holders_of(const std::vector<Box>& parts) {
    return static_cast<int>(
        std::count_if(parts.begin(), parts.end(), [](const Box& p) { return !p.empty(); }));
}

// The level split anew over fewer ranks: along each axis on which some part got thin, as many
// ranks as can hold ghost_layers points each (those of the other axes kept), the parts even,
// held by the first ranks in x-fastest order; the others hold none. Empty where that is fewer
// than 2 ranks.
std::vector<Box> fewer_parts(const std::vector<Box>& parts, const GridBox& box) {
    std::array<Index, 3> counts{1, 1, 1};
    for (std::size_t axis = 0; axis < 3; ++axis) {
        std::vector<Index> cuts;
        bool thin = false;
        for (const Box& part : parts) {
            if (part.empty()) continue;
            cuts.push_back(part.lower[axis]);
            thin =
                thin || (part.points(axis) < box.points[axis] && part.points(axis) < ghost_layers);
        }
        std::sort(cuts.begin(), cuts.end());
        counts[axis] = std::unique(cuts.begin(), cuts.end()) - cuts.begin();
        if (thin) counts[axis] = std::min(counts[axis], box.points[axis] / ghost_layers);
    }
    const Index holders = counts[0] * counts[1] * counts[2];
    if (holders < 2) return {};
    std::vector<Box> fewer(parts.size(), no_points);
    for (Index q = 0; q < holders; ++q) {
        const std::array<Index, 3> at{q % counts[0], q / counts[0] % counts[1],
                                      q / (counts[0] * counts[1])};
        Box& part = fewer[static_cast<std::size_t>(q)];
        for (std::size_t axis = 0; axis < 3; ++axis) {
            const Index b = box.points[axis] / counts[axis], e = box.points[axis] % counts[axis];
            part.lower[axis] = at[axis] * b + std::min(at[axis], e);
            part.upper[axis] = (at[axis] + 1) * b + std::min(at[axis] + 1, e);
        }
    }
    return fewer;
}

// Every rank's points of `parts` in the vectors it gives: this rank's in `layout`, the others'
// at their place in their parts (the gather and redistributions read only their places).
VectorLayout layout_of(const GridBox& box, const std::vector<Box>& parts, const Box& layout,
                       int rank) {
    VectorLayout runs(parts.size());
    for (std::size_t q = 0; q < parts.size(); ++q) {
        runs[q] = part_runs(box, parts[q], static_cast<int>(q) == rank ? layout : parts[q]);
    }
    return runs;
}

}  // namespace

namespace {

// The window's rows from the rows around the part (`around_rows` on `around`, its diagonals
// `steps`' where they are distinct): the rows kept in place where the window is one run of
// `around` (a slab's planes), else taken point by point; the entries that reach outside the
// window zeroed.
DiaData<double> window_rows(DiaData<double> around_rows, const Box& around, const Box& window,
                            const std::vector<Step>& steps, int dimension) {
    const GridBox shape = window.shape(dimension);
    if (distinct_offsets(shape, steps) &&
        around_rows.offsets == step_offsets(steps, around.shape(dimension)) &&
        one_run_of(window, around)) {
        around_rows.keep_rows(around.index(window.lower[0], window.lower[1], window.lower[2]),
                              window.size());
        around_rows.offsets = step_offsets(steps, shape);
        keep_inside(around_rows, steps, shape);
        return around_rows;
    }
    return dia_of(rows_of(around_rows, around, window, steps, dimension), steps, dimension);
}

// The rows of the coarse points `part` from the coarse rows around it (`coarse` on
// `coarse_around`, galerkin_operator's): kept in place where they are one run of them.
StepRows coarse_rows(DiaData<double> coarse, const Box& coarse_around, const Box& part,
                     const std::vector<Step>& steps, int dimension) {
    const GridBox shape = coarse_around.shape(dimension);
    if (distinct_offsets(shape, steps) && coarse.offsets == step_offsets(steps, shape) &&
        one_run_of(part, coarse_around)) {
        coarse.keep_rows(coarse_around.index(part.lower[0], part.lower[1], part.lower[2]),
                         part.size());
        return StepRows{part, std::move(coarse.values)};
    }
    return rows_of(coarse, coarse_around, part, steps, dimension);
}

// Throws std::logic_error where the next level's window is not among the coarse points the
// step made (the ghost layers too few for it).
void check_coarse_window(const Box& coarse_window, const Box& coarse_around) {
    if (intersection(coarse_window, coarse_around) != coarse_window) {
        throw std::logic_error(
            "multigrid over ranks: a coarse window reaches past the ghost layers");
    }
}

// This rank's part of a level that coarsens (`split`, its window and the next level's window
// set): the transfer from the window to the coarse window, its weights, the window's rows and
// the next level's rows on the coarse part, from the step on the rows around the part
// (coarse_step made by the back-end, one process's on the whole box: the rows of the part come
// out as one process makes them).
void plan_part(const std::shared_ptr<const Backend>& backend, DiaData<double> around_rows,
               const Box& around, const BoxCoarsening& coarsening, const std::vector<Step>& steps,
               const Box& window, const Box& coarse_window, const Box& coarse_part_here,
               PartitionedLevel& split, StepRows& coarse_own) {
    const int dimension = coarsening.coarse.dimension;
    CoarseStep step = coarse_step(backend, around_rows, around, coarsening);
    const Box& coarse_around = step.coarse_region;
    split.transfer = window_transfer(coarsening, window, coarse_window, dimension);
    // The coarse window's weights, from those around (slot by slot, point by point).
    check_coarse_window(coarse_window, coarse_around);
    // (The weights' layout is StepRows', a slot for a step.)
    const auto slots = static_cast<std::size_t>(transfer_slots(dimension));
    StepRows window_weights{
        coarse_window, std::vector<double>(slots * static_cast<std::size_t>(coarse_window.size()))};
    copy_rows(StepRows{coarse_around, std::move(step.weights)}, window_weights, coarse_window,
              slots);
    split.weights = std::move(window_weights.values);
    split.window_operator = without_empty_diagonals(
        window_rows(std::move(around_rows), around, window, steps, dimension));
    coarse_own = coarse_rows(std::move(step.coarse), coarse_around, coarse_part_here,
                             all_steps(dimension), dimension);
}

// Rows on the back-end in the general storage.
BackendRows general_rows(std::int64_t n, std::vector<int> offsets, Array<double> values) {
    BackendRows rows;
    rows.n = n;
    rows.offsets = std::move(offsets);
    rows.values = std::move(values);
    return rows;
}

// The rows around this rank's part (its part grown by the ghost layers) as the level's step
// reads them: kept on the back-end with their classes, which the host measures the level from;
// else on the host (rows of too many kinds, or steps whose offsets are not distinct there).
struct AroundRows {
    Box region = no_points;
    BackendStepRows ghost_kept;  // as exchanged, where this rank's rows are kept
    StepRows ghost;              // as exchanged, on the host
    BackendRows kept;            // the steps' offsets, values and classes
    DiaData<double> host;
    bool is_kept() const { return kept.n > 0; }
};

// The window's rows from the rows around (kept on the back-end), the entries that reach outside
// the window zeroed: kept there in classes for the level's build, else handed to the host. (The
// finest level's too: its operator is then in classes, the same values as the solver's storage
// would hold, a byte per row either way.)
void keep_window_rows(const std::shared_ptr<const Backend>& backend, const BackendStepRows& around,
                      const std::vector<Step>& steps, const Box& window, int dimension,
                      PartitionedLevel& split) {
    BackendStepRows rows{
        window, Array<double>(backend, steps.size() * static_cast<std::size_t>(window.size()))};
    copy_rows(*backend, around, rows, window, steps.size());
    // (The window is the region around along the axes not split, where the steps' offsets are
    // distinct, and at least ghost_layers + 2 points along a split one.)
    const GridBox shape = window.shape(dimension);
    if (!distinct_offsets(shape, steps)) {
        throw std::logic_error("multigrid over ranks: a window too thin for its steps");
    }
    keep_inside(*backend, rows, steps);
    BackendRows kept =
        general_rows(window.size(), step_offsets(steps, shape), std::move(rows.values));
    if (!classify_rows(backend, kept)) {
        split.window_operator = without_empty_diagonals(
            DiaData<double>{kept.n, std::move(kept.offsets), kept.values.to_host()});
        return;
    }
    split.kept_rows = std::make_shared<const BackendRows>(std::move(kept));
    split.rows_on_backend = split.kept_rows.get();
}

// plan_part on the back-end, from the rows around kept there: the same step (coarse_step's
// arithmetic there: the host's local bases at a jump, read from the classes), the window's
// rows and weights kept there for the level's build, and the next level's rows on the coarse
// part kept there too (`coarse_kept`; on the host in `coarse_own` where the coarse region is
// too thin for its steps' offsets to be distinct).
void plan_kept_part(const std::shared_ptr<const Backend>& backend, AroundRows& around,
                    const BoxCoarsening& coarsening, const std::vector<Step>& steps,
                    const Box& window, const Box& coarse_window, const Box& coarse_part_here,
                    PartitionedLevel& split, StepRows& coarse_own,
                    std::optional<BackendStepRows>& coarse_kept) {
    const int dimension = coarsening.coarse.dimension;
    const GridBox shape = around.region.shape(dimension);
    const DiagonalSteps diagonal_steps(around.kept.host, shape);
    const Box coarse_around = coarse_part(around.region, coarsening);
    check_coarse_window(coarse_window, coarse_around);
    const BoxCoarsening transfer =
        window_transfer(coarsening, around.region, coarse_around, dimension);
    Array<double> weights =
        classes_at_jump(around.kept.host, diagonal_steps)
            ? Array<double>::from_host(
                  backend, operator_interpolation(around.kept.host.expanded(), shape, transfer))
            : collapsed_weights(backend, around.kept.view(), diagonal_steps, shape, transfer);
    BackendRows coarse =
        galerkin_rows(backend, around.kept.view(), diagonal_steps, shape, transfer, weights);
    split.transfer = window_transfer(coarsening, window, coarse_window, dimension);
    // The coarse window's weights (their layout is the rows', a slot for a step).
    const auto slots = static_cast<std::size_t>(transfer_slots(dimension));
    BackendStepRows window_weights{
        coarse_window,
        Array<double>(backend, slots * static_cast<std::size_t>(coarse_window.size()))};
    copy_rows(*backend, BackendStepRows{coarse_around, std::move(weights)}, window_weights,
              coarse_window, slots);
    split.kept_weights = std::make_shared<const Array<double>>(std::move(window_weights.values));
    split.weights_on_backend = split.kept_weights.get();
    keep_window_rows(backend, BackendStepRows{around.region, std::move(around.kept.values)}, steps,
                     window, dimension, split);
    const std::vector<Step> coarse_steps = all_steps(dimension);
    if (coarse.offsets != step_offsets(coarse_steps, coarse_around.shape(dimension)) ||
        !distinct_offsets(coarse_around.shape(dimension), coarse_steps)) {
        coarse_own = coarse_rows(DiaData<double>{coarse.n, coarse.offsets, coarse.values.to_host()},
                                 coarse_around, coarse_part_here, coarse_steps, dimension);
        return;
    }
    coarse_kept.emplace(BackendStepRows{
        coarse_part_here,
        Array<double>(backend,
                      coarse_steps.size() * static_cast<std::size_t>(coarse_part_here.size()))});
    copy_rows(*backend, BackendStepRows{coarse_around, std::move(coarse.values)}, *coarse_kept,
              coarse_part_here, coarse_steps.size());
}

class Planner {
public:
    Planner(std::shared_ptr<const Backend> backend, const MultigridParameters& parameters,
            LevelState state)
        : backend_(std::move(backend)),
          ranks_(backend_->communicator()),
          parameters_(parameters),
          state_(std::move(state)) {}

    PartitionedHierarchy plan() {
        // This rank's rows go to its back-end once (agreed: an upload may fail on one rank
        // alone); the levels are made there from then on.
        all_or_none(ranks_, [&] {
            state_.own_kept = to_backend(backend_, state_.own, state_.steps.size());
            state_.own = StepRows{no_points, {}};
        });
        for (int level = 0;; ++level) {
            const Index size = state_.box.size();
            if (state_.holders == 1 || size <= parameters_.gather_size.value_or(0) ||
                last_level(parameters_, size, level)) {
                return gather();
            }
            if (some_part_thin(state_.parts, state_.box) && !split_anew()) return gather();
            if (!add_level()) return gather();
        }
    }

private:
    bool holds() const { return !state_.parts[rank()].empty(); }
    std::size_t rank() const { return static_cast<std::size_t>(ranks_.rank()); }
    PartitionedHierarchy gather();
    bool split_anew();
    bool add_level();
    StepRows& own_on_host();
    const Box& own_region() const {
        return state_.own_kept ? state_.own_kept->region : state_.own.region;
    }
    AroundRows rows_around();
    void measure_around(AroundRows& around, bool& along_axes, CoarseningMeasures& measures);
    void take_coarse_rows(StepRows coarse_own, std::optional<BackendStepRows> coarse_kept);

    std::shared_ptr<const Backend> backend_;  // the step's arithmetic
    const Communicator& ranks_;
    const MultigridParameters& parameters_;
    LevelState state_;
    Box above_window_;  // the level above's transfer's coarse points (this level's window)
    PartitionedHierarchy result_;
};

// Each rank's points of the gathered level: where the level above's restriction leaves them
// right, its own coarse points (a level just split anew, whose rows moved, that is gathered
// after all is restricted into the gathered vector itself: no handoff). In place where this
// rank's window of it (or on the finest level its part) is one run of the whole level.
PartitionedHierarchy Planner::gather() {
    GatheredPlan& gathered = result_.gathered;
    const GridBox& box = state_.box;
    gathered.box = box;
    // (Agreed: the rows kept on the back-end come back to the host on each rank alone.)
    all_or_none(ranks_, [&] { own_on_host(); });
    gathered.rows = gathered_rows(ranks_, state_.parts, state_.own, state_.steps, box);
    if (result_.levels.empty()) {
        result_.finest_jumps = has_coefficient_jumps(gathered.rows, cycle_jump_ratio);
    }
    std::vector<Box> sources = state_.parts;
    if (!result_.levels.empty() && result_.levels.back().handoff) {
        sources = state_.restricted;
        result_.levels.back().handoff.reset();
    }
    const Box window = result_.levels.empty() ? sources[rank()] : above_window_;
    const Box whole = whole_part(box);
    if (window.empty() || one_run_of(window, whole)) {
        gathered.sources = layout_of(box, sources, whole, ranks_.rank());
        if (!result_.levels.empty() && !window.empty()) {
            result_.levels.back().coarse_offset =
                whole.index(window.lower[0], window.lower[1], window.lower[2]);
        }
    } else {
        gathered.sources = layout_of(box, sources, window, ranks_.rank());
        gathered.window = window;
        if (!result_.levels.empty()) result_.levels.back().coarse_window_points = window.size();
    }
    return std::move(result_);
}

// Thin parts: the level split anew over fewer ranks (fewer_parts), the rows each rank computed
// moved to them, and the level above hands its restriction down to them; the finest level
// (split by the caller) and a level that one rank would hold are gathered instead (false).
bool Planner::split_anew() {
    const GridBox& box = state_.box;
    std::vector<Box> fewer = fewer_parts(state_.parts, box);
    if (result_.levels.empty() || fewer.empty()) return false;
    const auto window_of = [&](const Box& part) {
        return part.empty() ? no_points : grown(part, box, 1);
    };
    HandoffPlan handoff;
    handoff.restricted = layout_of(box, state_.parts, above_window_, ranks_.rank());
    handoff.held = layout_of(box, fewer, window_of(fewer[rank()]), ranks_.rank());
    for (const Box& part : state_.parts) {
        handoff.reached.push_back(part_runs(box, window_of(part), window_of(part)));
    }
    handoff.window_points = above_window_.size();
    result_.levels.back().handoff = std::move(handoff);
    all_or_none(ranks_, [&] { own_on_host(); });
    state_.own = moved_rows(ranks_, box, state_.own, state_.parts, fewer, state_.steps.size());
    state_.restricted = std::move(state_.parts);
    state_.parts = std::move(fewer);
    state_.holders = holders_of(state_.parts);
    return true;
}

// This rank's rows on the host (copied from the back-end where they were kept there; the
// planner goes on with them there).
StepRows& Planner::own_on_host() {
    if (state_.own_kept) {
        state_.own = to_host(*state_.own_kept);
        state_.own_kept.reset();
    }
    return state_.own;
}

// This rank's rows with the ghost layers of the others' around them, where it holds the level
// (on the back-end where its rows are kept there). Collective: the work around the exchange is
// agreed, since on the back-end it allocates.
AroundRows Planner::rows_around() {
    AroundRows around;
    const bool here = holds();
    std::optional<GhostLayers> layers;
    if (here) {
        layers.emplace(ranks_.rank(), state_.parts, own_region(), state_.steps.size(), state_.box,
                       ghost_layers);
        around.region = layers->region();
    }
    all_or_none(ranks_, [&] {
        if (!here) return;
        if (state_.own_kept) {
            around.ghost_kept = layers->start(backend_, *state_.own_kept);
        } else {
            around.ghost = layers->start(state_.own);
        }
    });
    if (here) layers->exchange(ranks_);
    all_or_none(ranks_, [&] {
        if (!here) return;
        if (state_.own_kept) {
            layers->finish(backend_, around.ghost_kept);
        } else {
            layers->finish(around.ghost);
        }
    });
    return around;
}

// The rows around as the step reads them, whether every coupling lies along the axes, and the
// coarsening measures of this rank's part: from the rows' classes where the back-end keeps
// them, else from the rows on the host.
void Planner::measure_around(AroundRows& around, bool& along_axes, CoarseningMeasures& measures) {
    const GridBox& box = state_.box;
    const int dimension = box.dimension;
    const GridBox shape = around.region.shape(dimension);
    const Box own = relative_to(own_region(), around.region);
    if (state_.own_kept) {
        if (distinct_offsets(shape, state_.steps)) {
            keep_inside(*backend_, around.ghost_kept, state_.steps);
            BackendRows rows = general_rows(shape.size(), step_offsets(state_.steps, shape),
                                            std::move(around.ghost_kept.values));
            if (classify_rows(backend_, rows, true)) {
                if (result_.levels.empty()) {
                    result_.finest_jumps =
                        has_coefficient_jumps(rows.host.class_table(), cycle_jump_ratio);
                }
                along_axes = classes_along_axes(rows.host, DiagonalSteps(rows.host, shape));
                measures = measure_coarsening(rows.host, shape, own, around.region.lower, box);
                around.kept = std::move(rows);
                return;
            }
            around.ghost = StepRows{around.region, rows.values.to_host()};
        } else {
            around.ghost = to_host(around.ghost_kept);
        }
    }
    around.host = dia_of(std::move(around.ghost), state_.steps, dimension);
    if (result_.levels.empty()) {
        result_.finest_jumps = has_coefficient_jumps(around.host, cycle_jump_ratio);
    }
    along_axes = check_box_couplings(around.host, shape);
    measures = measure_coarsening(around.host, shape, own, around.region.lower, box);
}

// The next level's rows of this rank (kept on the back-end where they were made there), on the
// steps some rank's rows use. Collective.
void Planner::take_coarse_rows(StepRows coarse_own, std::optional<BackendStepRows> coarse_kept) {
    const std::vector<Step> coarse_steps = all_steps(state_.box.dimension);
    std::vector<double> in_use;
    all_or_none(ranks_, [&] {
        in_use = coarse_kept ? steps_in_use(backend_, *coarse_kept, coarse_steps.size())
                             : steps_in_use(coarse_own, coarse_steps.size());
    });
    std::vector<Step> used = used_steps(ranks_, std::move(in_use), coarse_steps);
    all_or_none(ranks_, [&] {
        if (coarse_kept) {
            state_.own_kept = on_steps(backend_, std::move(*coarse_kept), coarse_steps, used);
            state_.own = StepRows{no_points, {}};
        } else {
            state_.own = on_steps(std::move(coarse_own), coarse_steps, used);
            state_.own_kept.reset();
        }
    });
    state_.steps = std::move(used);
}

// The level split over the ranks as it is, each rank's part of the next level planned from its
// rows and ghost_layers layers of the others' around them; false where it does not coarsen.
bool Planner::add_level() {
    const GridBox& box = state_.box;
    const bool here = holds();
    // A rank that holds none of the level takes part in its collectives only.
    AroundRows around = rows_around();
    bool along_axes = true;
    CoarseningMeasures measures;
    all_or_none(ranks_, [&] {
        if (here) measure_around(around, along_axes, measures);
    });
    ranks_.sum(measures.values);
    along_axes = ranks_.min(along_axes ? 1.0 : 0.0) > 0;
    const BoxCoarsening coarsening = decide_coarsening(measures, box);
    if (!coarsening.coarsens()) return false;
    // The rows around hold this rank's own: its copy on the back-end goes (its region stays).
    if (state_.own_kept) state_.own_kept->values = Array<double>();

    std::vector<Box> coarse_parts;
    for (const Box& part : state_.parts) coarse_parts.push_back(coarse_part(part, coarsening));
    PartitionedLevel split;
    split.partition = Partition(box, state_.parts, ranks_.rank());
    split.holders = state_.holders;
    split.along_axes = along_axes;
    split.split_axes = split_axes_of(state_.parts, box);
    const Box coarse_window = here ? grown(coarse_parts[rank()], coarsening.coarse, 1) : no_points;
    StepRows coarse_own{no_points, {}};
    std::optional<BackendStepRows> coarse_kept;
    all_or_none(ranks_, [&] {
        if (!here) return;
        if (around.is_kept()) {
            plan_kept_part(backend_, around, coarsening, state_.steps, split.window(),
                           coarse_window, coarse_parts[rank()], split, coarse_own, coarse_kept);
        } else {
            plan_part(backend_, std::move(around.host), around.region, coarsening, state_.steps,
                      split.window(), coarse_window, coarse_parts[rank()], split, coarse_own);
        }
    });
    result_.levels.push_back(std::move(split));
    state_.box = coarsening.coarse;
    take_coarse_rows(std::move(coarse_own), std::move(coarse_kept));
    state_.parts = std::move(coarse_parts);
    above_window_ = coarse_window;
    return true;
}

// `steps` and `own` (on all of them) narrowed to the steps some rank's rows use. Collective.
void keep_used_steps(const Communicator& ranks, LevelState& state) {
    std::vector<Step> used =
        used_steps(ranks, steps_in_use(state.own, state.steps.size()), state.steps);
    state.own = on_steps(std::move(state.own), state.steps, used);
    state.steps = std::move(used);
}

}  // namespace

PartitionedHierarchy plan_partitioned_levels(const std::shared_ptr<const Backend>& backend,
                                             const PartRows<double>& rows,
                                             const MultigridParameters& parameters) {
    const Communicator& ranks = backend->communicator();
    const auto rank = static_cast<std::size_t>(ranks.rank());
    const int dimension = rows.box.dimension;
    LevelState state;
    state.box = rows.box;
    state.parts = all_parts(ranks, rows.part);
    state.steps = all_steps(dimension);
    state.own = all_or_none(ranks, [&] {
        check_parts_tile(state.parts, state.box);
        const Box window = rows.window_part();
        if (rows.window.n != window.size()) {
            throw std::invalid_argument("multigrid over ranks: rank " + std::to_string(rank) +
                                        " gave " + std::to_string(rows.window.n) +
                                        " rows for its window of " + std::to_string(window.size()) +
                                        " points");
        }
        return rows_of(rows.window, window, rows.part, state.steps, dimension);
    });
    keep_used_steps(ranks, state);
    state.holders = holders_of(state.parts);
    return Planner(backend, parameters, std::move(state)).plan();
}

namespace {

// Whether diagonal d of `a` has a nonzero entry.
bool has_nonzero(const DiaData<double>& a, int d) {
    const auto begin = a.values.begin() + d * a.n;
    return std::any_of(begin, begin + a.n, [](double v) { return v != 0.0; });
}

// Throws where a diagonal of `a` with a nonzero entry is not among `offsets` (a coupling to a
// point that is no neighbour in the box).
void check_neighbour_diagonals(const DiaData<double>& a, const std::vector<int>& offsets,
                               const GridBox& box) {
    for (int d = 0; d < a.num_diagonals(); ++d) {
        const int offset = a.offsets[static_cast<std::size_t>(d)];
        if (std::find(offsets.begin(), offsets.end(), offset) != offsets.end()) continue;
        if (has_nonzero(a, d)) {
            throw std::invalid_argument(
                "multigrid: the rows couple points " + std::to_string(offset) +
                " apart, which is no step to a neighbour in the " + box.describe() +
                " box: the rows are not the box's points, x fastest");
        }
    }
}

// The box's neighbour diagonals that are nonzero in some rank's `rows`, the main one kept, in
// neighbour_offsets' order: every rank's rows take one shape on them, and the set-up reads no
// empty diagonals. Throws, on every rank alike, where a rank's rows couple points that are no
// neighbours in the box. Collective.
std::vector<int> used_neighbour_offsets(const Communicator& ranks, const DiaData<double>& rows,
                                        const GridBox& box) {
    const std::vector<int> offsets = neighbour_offsets(box);
    std::vector<double> used(offsets.size(), 0.0);
    all_or_none(ranks, [&] {
        check_neighbour_diagonals(rows, offsets, box);
        for (int d = 0; d < rows.num_diagonals(); ++d) {
            const int offset = rows.offsets[static_cast<std::size_t>(d)];
            const auto at = std::find(offsets.begin(), offsets.end(), offset);
            if (at != offsets.end() && (offset == 0 || has_nonzero(rows, d))) {
                used[static_cast<std::size_t>(at - offsets.begin())] = 1.0;
            }
        }
    });
    ranks.sum(used);
    std::vector<int> kept;
    for (std::size_t i = 0; i < offsets.size(); ++i) {
        if (used[i] > 0 || offsets[i] == 0) kept.push_back(offsets[i]);
    }
    return kept;
}

// Points per plane of the box's last axis.
Index plane_of(const GridBox& box) {
    return box.dimension == 1   ? 1
           : box.dimension == 2 ? box.points[0]
                                : box.points[0] * box.points[1];
}

// Every rank's first plane and the end, from every rank's number of planes. Collective.
std::vector<Index> plane_starts(const Communicator& ranks, Index own_planes) {
    std::vector<Index> starts{0};
    for (const auto& bytes : ranks.all_gather(std::as_bytes(std::span(&own_planes, 1)))) {
        Index planes;
        std::memcpy(&planes, bytes.data(), sizeof planes);
        starts.push_back(starts.back() + planes);
    }
    return starts;
}

}  // namespace

PartitionedHierarchy plan_partitioned_levels(const std::shared_ptr<const Backend>& backend,
                                             const DiaData<double>& block, const GridBox& box,
                                             const MultigridParameters& parameters) {
    const Communicator& ranks = backend->communicator();
    const Index plane = plane_of(box);
    all_or_none(ranks, [&] {
        if (block.n % plane != 0) {
            throw std::invalid_argument(
                "multigrid over ranks: rank " + std::to_string(ranks.rank()) + " holds " +
                std::to_string(block.n) + " rows, not whole planes of " + std::to_string(plane) +
                " points of the " + box.describe() + " box");
        }
    });
    const std::vector<int> kept = used_neighbour_offsets(ranks, block, box);
    const std::vector<Index> starts = plane_starts(ranks, block.n / plane);
    const auto slow = static_cast<std::size_t>(box.dimension - 1);
    if (starts.back() != box.points[slow]) {
        throw std::invalid_argument("multigrid over ranks: the ranks hold " +
                                    std::to_string(starts.back()) + " planes of the " +
                                    box.describe() + " box, which has " +
                                    std::to_string(box.points[slow]));
    }
    LevelState state;
    state.box = box;
    state.parts = Partition::slabs(box, starts, ranks.rank()).parts();
    // The used diagonals' steps, where each offset is one step in the box (the block then
    // taken as it lies where they are its diagonals); else every step, narrowed after.
    for (const int offset : kept) {
        if (const auto step = offset_step(offset, box)) state.steps.push_back(*step);
    }
    const bool distinct =
        distinct_offsets(box, state.steps) && step_offsets(state.steps, box) == kept;
    if (!distinct) state.steps = all_steps(box.dimension);
    state.own =
        block_rows(block, box, state.parts[static_cast<std::size_t>(ranks.rank())], state.steps);
    if (!distinct) keep_used_steps(ranks, state);
    state.holders = holders_of(state.parts);
    return Planner(backend, parameters, std::move(state)).plan();
}

}  // namespace simrun::solvers::multigrid

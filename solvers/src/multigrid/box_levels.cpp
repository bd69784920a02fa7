#include "multigrid/box_levels.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

namespace simrun::solvers::multigrid {
namespace {

using Index = std::int64_t;
using Step = std::array<Index, 3>;

// The rows of the points of a region of a level by step: values[s * n + p] couples point p of
// the region (x fastest) to its neighbour steps[s] away (the level's steps, the same on every
// rank), whichever rank holds that neighbour.
struct StepRows {
    Box region;
    std::vector<double> values;
};

// Calls f(j, k) for each line across x of `part` (fixed y and z), on every core.
template <typename F>
void for_each_line(const Box& part, F&& f) {
    const Index ny = part.points(1), lines = part.empty() ? 0 : ny * part.points(2);
#pragma omp parallel for schedule(static)
    for (Index line = 0; line < lines; ++line) {
        f(part.lower[1] + line % ny, part.lower[2] + line / ny);
    }
}

Index offset_of(const Step& s, const GridBox& shape) {
    return s[0] + shape.points[0] * (s[1] + shape.points[1] * s[2]);
}

// Every step to a neighbour in `dimension` axes, the point's own among them, ordered as their
// offsets in a box of at least 3 points along each axis.
std::vector<Step> all_steps(int dimension) {
    std::vector<Step> steps;
    const Index z = dimension == 3 ? 1 : 0, y = dimension >= 2 ? 1 : 0;
    for (Index sz = -z; sz <= z; ++sz) {
        for (Index sy = -y; sy <= y; ++sy) {
            for (Index sx = -1; sx <= 1; ++sx) steps.push_back({sx, sy, sz});
        }
    }
    return steps;
}

// The rows of `a` (a matrix on the points of `from`, its neighbour offsets) at the points of
// `region` (inside `from`), on `steps`. Throws where a nonzero entry is no step to a neighbour,
// or none of `steps`.
StepRows rows_of(const DiaData<double>& a, const Box& from, const Box& region,
                 const std::vector<Step>& steps, int dimension) {
    const GridBox shape = from.shape(dimension);
    StepRows rows{region,
                  std::vector<double>(steps.size() * static_cast<std::size_t>(region.size()))};
    const auto n = region.size();
    for (int d = 0; d < a.num_diagonals(); ++d) {
        const int offset = a.offsets[static_cast<std::size_t>(d)];
        // Each entry's step: the offset's where it is one step only in `from` (the region's
        // lines copied whole), else from the coordinates of the entry's two points (a box of
        // fewer than 3 points along an axis).
        const auto refuse = [&] {
            throw std::invalid_argument(
                "multigrid: the rows couple points " + std::to_string(offset) +
                " apart, which is no step to a neighbour in the " + shape.describe() +
                " box: the rows are not the box's points, x fastest");
        };
        if (offset_step_unique(offset, shape)) {
            // (`steps` holds every step of the rows given: all of them, or those in use.)
            const Step step = *offset_step(offset, shape);
            const auto at = std::find(steps.begin(), steps.end(), step);
            if (at == steps.end()) refuse();
            const Index nx = region.points(0);
            const Box inside = whole_part(shape);
            // An entry whose point the step takes out of `from` (out of the box: `from` holds
            // the points around the region's) wraps to another line in DIA: it must be zero.
            std::atomic<bool> wraps = false;
            for_each_line(region, [&](Index j, Index k) {
                const Index first = from.index(region.lower[0], j, k);
                const double* in = a.values.data() + d * a.n + first;
                const Index lj = j - from.lower[1], lk = k - from.lower[2];
                const Index li = region.lower[0] - from.lower[0];
                for (const Index i : {Index{0}, nx - 1}) {
                    if (in[i] != 0.0 &&
                        !inside.contains(li + i + step[0], lj + step[1], lk + step[2])) {
                        wraps = true;
                    }
                }
                if (!inside.contains(li, lj + step[1], lk + step[2]) &&
                    std::any_of(in, in + nx, [](double v) { return v != 0.0; })) {
                    wraps = true;
                }
                std::copy_n(in, nx,
                            rows.values.begin() + (at - steps.begin()) * n +
                                region.index(region.lower[0], j, k));
            });
            if (wraps) refuse();
            continue;
        }
        for_each_point(region, [&](Index i, Index j, Index k, Index p) {
            const Index row = from.index(i, j, k);
            const double value = a.at(d, row);
            if (value == 0.0) return;
            const auto entry = entry_step(shape, row, offset);
            const auto at = entry ? std::find(steps.begin(), steps.end(), *entry) : steps.end();
            if (at == steps.end()) refuse();
            rows.values[static_cast<std::size_t>((at - steps.begin()) * n + p)] = value;
        });
    }
    return rows;
}

// The rows as a matrix on the region's points, its neighbour offsets (entries that reach
// outside the region left out; steps that share an offset in a small region summed where they
// stay inside it).
DiaData<double> dia_of(const StepRows& rows, const std::vector<Step>& steps, int dimension) {
    const GridBox shape = rows.region.shape(dimension);
    const Index n = rows.region.size();
    DiaData<double> a{n, {}, {}};
    std::vector<int> diagonal_of;
    for (const Step& s : steps) {
        const auto offset = static_cast<int>(offset_of(s, shape));
        int at = a.find_diagonal(offset);
        if (at < 0) {
            at = a.num_diagonals();
            a.offsets.push_back(offset);
        }
        diagonal_of.push_back(at);
    }
    a.values.assign(a.offsets.size() * static_cast<std::size_t>(n), 0.0);
    const Box local = whole_part(shape);
    for (std::size_t s = 0; s < steps.size(); ++s) {
        const Step& step = steps[s];
        // Along each line the points whose neighbour lies inside: all but an end along x, none
        // where the line's neighbour across y or z leaves the region.
        const Index first = step[0] < 0 ? 1 : 0;
        const Index end = shape.points[0] - (step[0] > 0 ? 1 : 0);
        const double* in = rows.values.data() + s * static_cast<std::size_t>(n);
        double* out = a.values.data() + diagonal_of[s] * n;
        for_each_line(local, [&](Index j, Index k) {
            if (!local.contains(0, j + step[1], k + step[2])) return;
            const Index row = shape.row(0, j, k);
            for (Index i = first; i < end; ++i) out[row + i] += in[row + i];
        });
    }
    a.sort_diagonals();  // (in a region of fewer than 3 points along x, steps come unsorted)
    return a;
}

// Copies the rows of `points` (inside both regions) from one set of rows into another.
void copy_rows(const StepRows& from, StepRows& to, const Box& points, std::size_t steps) {
    const auto nf = static_cast<std::size_t>(from.region.size());
    const auto nt = static_cast<std::size_t>(to.region.size());
    const Index nx = points.points(0);
    for (std::size_t s = 0; s < steps; ++s) {
        for_each_line(points, [&](Index j, Index k) {
            std::copy_n(
                from.values.begin() +
                    static_cast<std::ptrdiff_t>(s * nf + static_cast<std::size_t>(from.region.index(
                                                             points.lower[0], j, k))),
                nx,
                to.values.begin() +
                    static_cast<std::ptrdiff_t>(
                        s * nt + static_cast<std::size_t>(to.region.index(points.lower[0], j, k))));
        });
    }
}

// The steps some rank's rows use (a nonzero entry), the point's own kept, in all_steps' order.
// Collective.
std::vector<Step> used_steps(const Communicator& ranks, const StepRows& rows,
                             const std::vector<Step>& steps) {
    std::vector<double> used(steps.size(), 0.0);
    const std::size_t n = static_cast<std::size_t>(rows.region.size());
    for (std::size_t s = 0; s < steps.size(); ++s) {
        const auto begin = rows.values.begin() + static_cast<std::ptrdiff_t>(s * n);
        if (std::any_of(begin, begin + static_cast<std::ptrdiff_t>(n),
                        [](double v) { return v != 0.0; })) {
            used[s] = 1.0;
        }
    }
    ranks.sum(used);
    std::vector<Step> kept;
    for (std::size_t s = 0; s < steps.size(); ++s) {
        if (used[s] > 0 || steps[s] == Step{0, 0, 0}) kept.push_back(steps[s]);
    }
    return kept;
}

// `rows` on `steps` (a subset of `from`'s, in the same order).
StepRows on_steps(const StepRows& rows, const std::vector<Step>& from,
                  const std::vector<Step>& steps) {
    const auto n = static_cast<std::size_t>(rows.region.size());
    StepRows kept{rows.region, std::vector<double>(steps.size() * n)};
    for (std::size_t s = 0; s < steps.size(); ++s) {
        const auto at =
            static_cast<std::size_t>(std::find(from.begin(), from.end(), steps[s]) - from.begin());
        std::copy_n(rows.values.begin() + static_cast<std::ptrdiff_t>(at * n), n,
                    kept.values.begin() + static_cast<std::ptrdiff_t>(s * n));
    }
    return kept;
}

// This rank's rows with `layers` layers of the other ranks' rows around its part (as far as
// the box goes), each rank sending the rows of its points that another's layers cover.
// Collective.
StepRows with_ghost_layers(const Communicator& ranks, const std::vector<Box>& parts,
                           const StepRows& own, std::size_t steps, const GridBox& box,
                           Index layers) {
    const auto rank = static_cast<std::size_t>(ranks.rank());
    StepRows result{grown(own.region, box, layers), {}};
    result.values.assign(steps * static_cast<std::size_t>(result.region.size()), 0.0);
    copy_rows(own, result, own.region, steps);
    std::vector<std::vector<double>> sent(parts.size()), received(parts.size());
    std::vector<Message> sends, receives;
    for (std::size_t q = 0; q < parts.size(); ++q) {
        if (q == rank) continue;
        const Box out = intersection(own.region, grown(parts[q], box, layers));
        const Box in = intersection(result.region, parts[q]);
        if (!out.empty()) {
            StepRows packed{out, std::vector<double>(steps * static_cast<std::size_t>(out.size()))};
            copy_rows(own, packed, out, steps);
            sent[q] = std::move(packed.values);
            sends.push_back({static_cast<int>(q), std::as_writable_bytes(std::span(sent[q]))});
        }
        if (!in.empty()) {
            received[q].resize(steps * static_cast<std::size_t>(in.size()));
            receives.push_back(
                {static_cast<int>(q), std::as_writable_bytes(std::span(received[q]))});
        }
    }
    if (!sends.empty() || !receives.empty()) ranks.start_exchange(sends, receives)->finish();
    for (std::size_t q = 0; q < parts.size(); ++q) {
        if (received[q].empty()) continue;
        const StepRows theirs{intersection(result.region, parts[q]), std::move(received[q])};
        copy_rows(theirs, result, theirs.region, steps);
    }
    return result;
}

// Whether some part is thinner than 2 points along an axis the level splits (its coarse part
// could then hold no point).
bool some_part_thin(const std::vector<Box>& parts, const GridBox& box) {
    return std::any_of(parts.begin(), parts.end(), [&](const Box& part) {
        for (std::size_t axis = 0; axis < 3; ++axis) {
            if (part.points(axis) < box.points[axis] && part.points(axis) < 2) return true;
        }
        return false;
    });
}

unsigned split_axes_of(const std::vector<Box>& parts, const GridBox& box) {
    unsigned axes = 0;
    for (const Box& part : parts) {
        for (std::size_t axis = 0; axis < 3; ++axis) {
            if (part.points(axis) < box.points[axis]) axes |= 1u << axis;
        }
    }
    return axes;
}

// The coarse point (in the coarse level's coordinates) of the first fine point at or after
// fine coordinate f along an axis (the coarse level's size past the last).
Index coarse_at_or_after(Index f, const AxisCoarsening& axis, Index coarse_points) {
    if (axis.step == 1) return f;
    const Index u = f - axis.first;
    return std::min(u <= 0 ? 0 : (u + 1) / 2, coarse_points);
}

// The coarse points on the fine points of `part` (the next level's part).
Box coarse_part(const Box& part, const BoxCoarsening& coarsening) {
    Box coarse;
    for (std::size_t axis = 0; axis < 3; ++axis) {
        const Index n = coarsening.coarse.points[axis];
        coarse.lower[axis] = coarse_at_or_after(part.lower[axis], coarsening.axes[axis], n);
        coarse.upper[axis] = coarse_at_or_after(part.upper[axis], coarsening.axes[axis], n);
    }
    return coarse;
}

// The whole level's coarsening on the points of `window`, onto the coarse points
// `coarse_window` (in the coarse level's coordinates): those on the window's points
// (coarse_part), or the next level's window, which may start a fine point before it.
BoxCoarsening window_transfer(const BoxCoarsening& whole, const Box& window,
                              const Box& coarse_window, int dimension) {
    BoxCoarsening on = whole;
    on.coarse = coarse_window.shape(dimension);
    for (std::size_t axis = 0; axis < 3; ++axis) {
        AxisCoarsening& a = on.axes[axis];
        a.first =
            static_cast<int>(a.step == 2 ? whole.axes[axis].first + 2 * coarse_window.lower[axis] -
                                               window.lower[axis]
                                         : coarse_window.lower[axis] - window.lower[axis]);
    }
    return on;
}

// The whole level's rows on every rank, from each rank's.
DiaData<double> gathered_rows(const Communicator& ranks, const std::vector<Box>& parts,
                              const StepRows& own, const std::vector<Step>& steps,
                              const GridBox& box) {
    const auto all = ranks.all_gather(std::as_bytes(std::span(own.values)));
    StepRows whole{whole_part(box),
                   std::vector<double>(steps.size() * static_cast<std::size_t>(box.size()))};
    for (std::size_t q = 0; q < parts.size(); ++q) {
        const std::size_t values = steps.size() * static_cast<std::size_t>(parts[q].size());
        if (all[q].size() != values * sizeof(double)) {
            throw std::logic_error("multigrid: rank " + std::to_string(q) +
                                   " sent the rows of a gathered level in another shape");
        }
        StepRows theirs{parts[q], std::vector<double>(values)};
        std::memcpy(theirs.values.data(), all[q].data(), all[q].size());
        copy_rows(theirs, whole, parts[q], steps.size());
    }
    return dia_of(whole, steps, box.dimension);
}

}  // namespace

PartitionedHierarchy plan_box_hierarchy(const Communicator& ranks, const PartRows<double>& rows,
                                        const MultigridParameters& parameters) {
    const auto rank = static_cast<std::size_t>(ranks.rank());
    const int dimension = rows.box.dimension;
    GridBox level_box = rows.box;
    std::vector<Box> parts = all_parts(ranks, rows.part);
    std::vector<Step> steps = all_steps(dimension);
    StepRows own = all_or_none(ranks, [&] {
        check_parts_tile(parts, level_box);
        const Box window = rows.window_part();
        if (rows.window.n != window.size()) {
            throw std::invalid_argument("multigrid over ranks: rank " + std::to_string(rank) +
                                        " gave " + std::to_string(rows.window.n) +
                                        " rows for its window of " + std::to_string(window.size()) +
                                        " points");
        }
        return rows_of(rows.window, window, rows.part, steps, dimension);
    });
    {
        std::vector<Step> used = used_steps(ranks, own, steps);
        own = on_steps(own, steps, used);
        steps = std::move(used);
    }
    PartitionedHierarchy result;
    Box coarse_window;  // the last split level's (this rank's part of the next grown by a point)
    for (int level = 0;; ++level) {
        const auto gather = [&] {
            GatheredPlan& gathered = result.gathered;
            gathered.box = level_box;
            gathered.rows = gathered_rows(ranks, parts, own, steps, level_box);
            // This rank's part of the gathered level lies in the level above's coarse window,
            // or on the finest level is the part itself (the others' parts are placed by
            // their segments, which the gather alone reads).
            gathered.window = result.levels.empty() ? parts[rank] : coarse_window;
            for (std::size_t q = 0; q < parts.size(); ++q) {
                gathered.sources.push_back(
                    part_runs(level_box, parts[q], q == rank ? *gathered.window : parts[q]));
            }
            if (!result.levels.empty()) {
                result.levels.back().coarse_window_points = coarse_window.size();
            }
            return std::move(result);
        };
        if (some_part_thin(parts, level_box) ||
            level_box.size() <= parameters.gather_size.value_or(0) ||
            level_box.size() <= parameters.coarsest_size || level + 1 >= parameters.max_levels) {
            return gather();
        }
        const StepRows ghost =
            with_ghost_layers(ranks, parts, own, steps.size(), level_box, box_ghost_layers);
        const Box& around = ghost.region;
        const GridBox around_box = around.shape(dimension);
        DiaData<double> around_rows;
        bool along_axes = true;
        CoarseningMeasures measures;
        all_or_none(ranks, [&] {
            around_rows = dia_of(ghost, steps, dimension);
            along_axes = check_box_couplings(around_rows, around_box);
            Box own_in_around;
            for (std::size_t axis = 0; axis < 3; ++axis) {
                own_in_around.lower[axis] = own.region.lower[axis] - around.lower[axis];
                own_in_around.upper[axis] = own.region.upper[axis] - around.lower[axis];
            }
            measures =
                measure_coarsening(around_rows, around_box, own_in_around, around.lower, level_box);
        });
        ranks.sum(measures.values);
        along_axes = ranks.min(along_axes ? 1.0 : 0.0) > 0;
        const BoxCoarsening coarsening = decide_coarsening(measures, level_box);
        if (!coarsening.coarsens()) return gather();

        // The next level's rows on the coarse points around this rank's part: those on its own
        // points are what one process computes.
        Box coarse_around;
        std::vector<double> around_weights;
        DiaData<double> around_coarse;
        std::vector<Box> coarse_parts;
        for (const Box& part : parts) coarse_parts.push_back(coarse_part(part, coarsening));
        PartitionedLevel split;
        split.partition = Partition(level_box, parts, ranks.rank());
        split.holders = ranks.size();
        const Box window = grown(own.region, level_box, 1);
        split.along_axes = along_axes;
        split.split_axes = split_axes_of(parts, level_box);
        coarse_window = grown(coarse_parts[rank], coarsening.coarse, 1);
        StepRows coarse_own;
        std::vector<Step> coarse_steps = all_steps(dimension);
        all_or_none(ranks, [&] {
            coarse_around = coarse_part(around, coarsening);
            const BoxCoarsening on_around =
                window_transfer(coarsening, around, coarse_around, dimension);
            around_weights = operator_interpolation(around_rows, around_box, on_around);
            around_coarse = galerkin_operator(around_rows, around_box, on_around, around_weights);
            split.window_operator = without_empty_diagonals(dia_of(
                StepRows{window,
                         [&] {
                             StepRows w{window,
                                        std::vector<double>(steps.size() * static_cast<std::size_t>(
                                                                               window.size()))};
                             copy_rows(ghost, w, window, steps.size());
                             return std::move(w.values);
                         }()},
                steps, dimension));
            split.transfer = window_transfer(coarsening, window, coarse_window, dimension);
            // The coarse window's weights, from those around (slot by slot, point by point).
            if (intersection(coarse_window, coarse_around) != coarse_window) {
                throw std::logic_error(
                    "multigrid over ranks: a coarse window reaches past the "
                    "ghost layers");
            }
            // (The weights' layout is StepRows', a slot for a step.)
            const auto slots = static_cast<std::size_t>(transfer_slots(dimension));
            StepRows window_weights{
                coarse_window,
                std::vector<double>(slots * static_cast<std::size_t>(coarse_window.size()))};
            copy_rows(StepRows{coarse_around, std::move(around_weights)}, window_weights,
                      coarse_window, slots);
            split.weights = std::move(window_weights.values);
            coarse_own =
                rows_of(around_coarse, coarse_around, coarse_parts[rank], coarse_steps, dimension);
        });
        result.levels.push_back(std::move(split));
        std::vector<Step> used = used_steps(ranks, coarse_own, coarse_steps);
        own = on_steps(coarse_own, coarse_steps, used);
        steps = std::move(used);
        parts = std::move(coarse_parts);
        level_box = coarsening.coarse;
    }
}

}  // namespace simrun::solvers::multigrid

#include "multigrid/slab_levels.hpp"

#include <algorithm>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

namespace simrun::solvers::multigrid {
namespace {

using Index = std::int64_t;

// Planes [first, end) along a level's last axis (the axis its slabs split).
struct PlaneRange {
    Index first = 0, end = 0;
    Index count() const { return end - first; }
};

// Every rank's planes of a level as runs of `plane` values each (a rank's planes at its
// position 0).
VectorLayout plane_layout(const std::vector<PlaneRange>& ranges, Index plane) {
    VectorLayout layout(ranges.size());
    for (std::size_t q = 0; q < ranges.size(); ++q) {
        if (ranges[q].count() > 0) {
            layout[q].push_back({ranges[q].first * plane, 0, ranges[q].count() * plane});
        }
    }
    return layout;
}

std::size_t slow_axis(const GridBox& box) { return static_cast<std::size_t>(box.dimension - 1); }

// Points per plane of the box's last axis.
Index plane_of(const GridBox& box) {
    return box.dimension == 1   ? 1
           : box.dimension == 2 ? box.points[0]
                                : box.points[0] * box.points[1];
}

// Rounded towards minus infinity (numerators of either sign, d > 0).
Index floor_div(Index n, Index d) { return n >= 0 ? n / d : -((-n + d - 1) / d); }
Index ceil_div(Index n, Index d) { return -floor_div(-n, d); }

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

// `a` on the diagonals `offsets` (those it lacks zero; those it has beyond them, zero, left
// out).
DiaData<double> on_offsets(const DiaData<double>& a, const std::vector<int>& offsets) {
    DiaData<double> result{a.n, offsets, std::vector<double>(offsets.size() * a.n, 0.0)};
    for (int d = 0; d < a.num_diagonals(); ++d) {
        const int to = result.find_diagonal(a.offsets[static_cast<std::size_t>(d)]);
        if (to < 0) continue;
        const auto begin = a.values.begin() + d * a.n;
        std::copy(begin, begin + a.n, result.values.begin() + to * a.n);
    }
    return result;
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

// `rows` (this rank's) on used_neighbour_offsets: `rows` itself (no copy) where those are its
// diagonals. Collective.
DiaData<double> on_used_neighbour_diagonals(const Communicator& ranks, DiaData<double> rows,
                                            const GridBox& box) {
    const std::vector<int> kept = used_neighbour_offsets(ranks, rows, box);
    if (kept == rows.offsets) return rows;
    return on_offsets(rows, kept);
}

// Zeroes the entries of rows [first, first + count) that reach outside the matrix.
void cut_outside(DiaData<double>& a, Index first, Index count) {
    for (int d = 0; d < a.num_diagonals(); ++d) {
        const Index offset = a.offsets[static_cast<std::size_t>(d)];
        for (Index i = first; i < first + count; ++i) {
            if (i + offset < 0 || i + offset >= a.n) a.at(d, i) = 0.0;
        }
    }
}

// This rank's rows with `ghost` planes of its neighbours' rows before and after them (each
// neighbour sends its nearest; every rank holds at least `ghost` planes). The ghost rows'
// entries that reach outside the result are zeroed. Collective with the neighbours.
DiaData<double> with_ghost_rows(const Communicator& ranks, const DiaData<double>& own, Index plane,
                                Index ghost, bool before, bool after) {
    const auto diagonals = static_cast<std::size_t>(own.num_diagonals());
    const Index g = ghost * plane, n = own.n;
    const auto pack = [&](Index first) {
        std::vector<double> values(diagonals * static_cast<std::size_t>(g));
        for (std::size_t d = 0; d < diagonals; ++d) {
            std::copy_n(own.values.begin() + static_cast<Index>(d) * n + first, g,
                        values.begin() + static_cast<Index>(d) * g);
        }
        return values;
    };
    std::vector<double> send_before = before ? pack(0) : std::vector<double>{};
    std::vector<double> send_after = after ? pack(n - g) : std::vector<double>{};
    std::vector<double> receive_before(send_before.size()), receive_after(send_after.size());
    const auto bytes = [](std::vector<double>& values) {
        return std::as_writable_bytes(std::span(values));
    };
    exchange_with_neighbours(ranks, bytes(send_before), bytes(receive_before), bytes(send_after),
                             bytes(receive_after));
    const Index gb = before ? g : 0, ga = after ? g : 0;
    DiaData<double> result{gb + n + ga, own.offsets, {}};
    result.values.resize(diagonals * static_cast<std::size_t>(result.n));
    for (std::size_t d = 0; d < diagonals; ++d) {
        const auto to = result.values.begin() + static_cast<Index>(d) * result.n;
        const auto di = static_cast<Index>(d);
        if (before) std::copy_n(receive_before.begin() + di * g, g, to);
        std::copy_n(own.values.begin() + di * n, n, to + gb);
        if (after) std::copy_n(receive_after.begin() + di * g, g, to + gb + n);
    }
    cut_outside(result, 0, gb);
    cut_outside(result, gb + n, ga);
    return result;
}

// The coarsening of a slab of `planes` planes from the whole's plane `first` (a box of the
// whole's other axes): the whole's, its coarse points along the last axis those that lie on
// the slab's planes, the first of them the whole's coarse plane `coarse_first`.
BoxCoarsening slab_coarsening(const BoxCoarsening& whole, const GridBox& slab_box, Index first,
                              Index& coarse_first) {
    const std::size_t slow = slow_axis(slab_box);
    const Index planes = slab_box.points[slow];
    BoxCoarsening slab = whole;
    AxisCoarsening& axis = slab.axes[slow];
    if (axis.step == 2) {
        coarse_first = ceil_div(first - axis.first, 2);
        const Index coarse_last = floor_div(first + planes - 1 - axis.first, 2);
        axis.first = static_cast<int>(axis.first + 2 * coarse_first - first);
        slab.coarse.points[slow] = coarse_last - coarse_first + 1;
    } else {
        coarse_first = first;
        slab.coarse.points[slow] = planes;
    }
    return slab;
}

// The whole level's rows on every rank, from each rank's (ranks holding `starts` planes).
DiaData<double> gather_rows(const Communicator& ranks, const DiaData<double>& own,
                            const std::vector<Index>& starts, Index plane) {
    const auto all = ranks.all_gather(std::as_bytes(std::span(own.values)));
    DiaData<double> whole{starts.back() * plane, own.offsets, {}};
    whole.values.assign(own.offsets.size() * static_cast<std::size_t>(whole.n), 0.0);
    for (std::size_t r = 0; r < all.size(); ++r) {
        const Index rows = (starts[r + 1] - starts[r]) * plane;
        if (all[r].size() != own.offsets.size() * static_cast<std::size_t>(rows) * sizeof(double)) {
            throw std::logic_error("multigrid: rank " + std::to_string(r) +
                                   " sent the rows of a gathered level in another shape");
        }
        if (rows == 0) continue;  // a rank that holds none of the level
        for (int d = 0; d < own.num_diagonals(); ++d) {
            std::memcpy(whole.values.data() + d * whole.n + starts[r] * plane,
                        all[r].data() + static_cast<std::size_t>(d * rows) * sizeof(double),
                        static_cast<std::size_t>(rows) * sizeof(double));
        }
    }
    return whole;
}

// Every rank's planes, from every rank's first plane and the end (size ranks + 1).
std::vector<PlaneRange> plane_ranges(const std::vector<Index>& starts) {
    std::vector<PlaneRange> ranges;
    for (std::size_t q = 0; q + 1 < starts.size(); ++q) {
        ranges.push_back({starts[q], starts[q + 1]});
    }
    return ranges;
}

// The rows of the planes `from[rank]` (this rank's, `own`) moved so that each rank holds those
// of `to[rank]` (move_planes, the rows packed plane by plane with all their diagonals).
DiaData<double> moved_rows(const Communicator& ranks, const DiaData<double>& own,
                           const std::vector<PlaneRange>& from, const std::vector<PlaneRange>& to,
                           Index plane) {
    const Index diagonals = own.num_diagonals();
    std::vector<double> packed(static_cast<std::size_t>(own.n * diagonals));
    for (Index i = 0; i < own.n; ++i) {
        for (int d = 0; d < diagonals; ++d) {
            packed[static_cast<std::size_t>(i * diagonals + d)] = own.at(d, i);
        }
    }
    const auto rank = static_cast<std::size_t>(ranks.rank());
    DiaData<double> moved{to[rank].count() * plane, own.offsets, {}};
    std::vector<double> received(static_cast<std::size_t>(moved.n * diagonals));
    const Index values = plane * diagonals;
    redistribute_on_host<double>(
        ranks,
        redistribution_plan(ranks.rank(), plane_layout(from, values), plane_layout(to, values)),
        std::span<const double>(packed), std::span<double>(received));
    moved.values.resize(received.size());
    for (Index i = 0; i < moved.n; ++i) {
        for (int d = 0; d < diagonals; ++d) {
            moved.at(d, i) = received[static_cast<std::size_t>(i * diagonals + d)];
        }
    }
    return moved;
}

}  // namespace

PartitionedHierarchy plan_slab_hierarchy(const Communicator& ranks, const DiaData<double>& block,
                                         const GridBox& box,
                                         const MultigridParameters& parameters) {
    const int count = ranks.size(), rank = ranks.rank();
    const std::size_t slow = slow_axis(box);
    const auto r = static_cast<std::size_t>(rank);
    PartitionedHierarchy result;
    GridBox level_box = box;
    Index plane = plane_of(box);
    // This level's rows: on the finest level the block itself where its diagonals are the used
    // ones (no copy), below it those the level above computed.
    DiaData<double> rows;
    const DiaData<double>* level_rows = &block;
    // Every rank's first plane, and the end (the same on every rank).
    std::vector<Index> starts{0};
    all_or_none(ranks, [&] {
        if (block.n % plane != 0) {
            throw std::invalid_argument("multigrid over ranks: rank " + std::to_string(rank) +
                                        " holds " + std::to_string(block.n) +
                                        " rows, not whole planes of " + std::to_string(plane) +
                                        " points of the " + box.describe() + " box");
        }
    });
    if (std::vector<int> kept = used_neighbour_offsets(ranks, block, box); kept != block.offsets) {
        rows = on_offsets(block, kept);
        level_rows = &rows;
    }
    const Index own_planes = block.n / plane;
    for (const auto& bytes : ranks.all_gather(std::as_bytes(std::span(&own_planes, 1)))) {
        Index planes;
        std::memcpy(&planes, bytes.data(), sizeof planes);
        starts.push_back(starts.back() + planes);
    }
    if (starts.back() != box.points[slow]) {
        throw std::invalid_argument("multigrid over ranks: the ranks hold " +
                                    std::to_string(starts.back()) + " planes of the " +
                                    box.describe() + " box, which has " +
                                    std::to_string(box.points[slow]));
    }
    // Where the last split level's transfer starts in the next level's points (a plane).
    Index pending_coarse_first = 0;
    // Where the last level was split anew: every rank's first coarse plane its restriction
    // computes rightly, and the end.
    std::vector<Index> handoff_restricted;
    int holders = count;  // the ranks that hold planes of the level: the first ones
    for (int level = 0;; ++level) {
        const auto fewest_planes = [&] {
            Index fewest = starts[1] - starts[0];
            for (std::size_t q = 0; q < static_cast<std::size_t>(holders); ++q) {
                fewest = std::min(fewest, starts[q + 1] - starts[q]);
            }
            return fewest;
        };
        const auto gather = [&] {
            result.gathered.box = level_box;
            result.gathered.rows = gather_rows(ranks, *level_rows, starts, plane);
            // Each rank's points of the gathered level: where the level above's restriction
            // leaves them right, the coarse planes on its own planes. A level just split anew
            // (whose rows moved) that is gathered after all (it does not coarsen) is restricted
            // into the gathered vector itself: no handoff.
            std::vector<Index> restricted = starts;
            if (!result.levels.empty() && result.levels.back().handoff) {
                restricted = handoff_restricted;
                result.levels.back().handoff.reset();
            }
            // In place: each rank's points at their place in the whole.
            result.gathered.sources.resize(static_cast<std::size_t>(count));
            for (std::size_t q = 0; q + 1 < restricted.size(); ++q) {
                const Index points = (restricted[q + 1] - restricted[q]) * plane;
                if (points > 0) {
                    result.gathered.sources[q].push_back(
                        {restricted[q] * plane, restricted[q] * plane, points});
                }
            }
            if (!result.levels.empty()) {
                result.levels.back().coarse_offset = pending_coarse_first * plane;
            }
            return std::move(result);
        };
        if (holders == 1 || level_box.size() <= parameters.gather_size.value_or(0) ||
            level_box.size() <= parameters.coarsest_size || level + 1 >= parameters.max_levels) {
            return gather();
        }
        if (fewest_planes() < slab_ghost_planes) {
            // Thin slabs: split anew over as many ranks as can hold slab_ghost_planes planes
            // each, the rows each rank computed moved to them; the finest level (split by the
            // caller) and a level that one rank would hold are gathered.
            const Index whole_planes = level_box.points[slow];
            const int fewer =
                static_cast<int>(std::min<Index>(holders, whole_planes / slab_ghost_planes));
            if (result.levels.empty() || fewer < 2) return gather();
            std::vector<Index> held_starts;
            for (int q = 0; q <= count; ++q) {
                const Index b = whole_planes / fewer, e = whole_planes % fewer;
                held_starts.push_back(q >= fewer ? whole_planes : q * b + std::min<Index>(q, e));
            }
            PartitionedLevel& above = result.levels.back();
            const std::vector<PlaneRange> restricted = plane_ranges(starts),
                                          held = plane_ranges(held_starts);
            const PlaneRange reached =
                above.holds()
                    ? PlaneRange{pending_coarse_first,
                                 pending_coarse_first + above.transfer.coarse.points[slow]}
                    : PlaneRange{};
            std::vector<PlaneRange> all_reached;
            for (const auto& bytes : ranks.all_gather(std::as_bytes(std::span(&reached, 1)))) {
                PlaneRange theirs;
                std::memcpy(&theirs, bytes.data(), sizeof theirs);
                all_reached.push_back(theirs);
            }
            rows = moved_rows(ranks, *level_rows, restricted, held, plane);
            level_rows = &rows;
            HandoffPlan handoff;
            handoff.restricted = plane_layout(restricted, plane);
            handoff.held = plane_layout(held, plane);
            handoff.reached = plane_layout(all_reached, plane);
            handoff.offset = (restricted[r].first - all_reached[r].first) * plane;
            handoff.window_points = all_reached[r].count() * plane;
            above.handoff = std::move(handoff);
            handoff_restricted = starts;
            starts = std::move(held_starts);
            holders = fewer;
        }
        const bool holds = rank < holders;
        const Index first = starts[r], planes = starts[r + 1] - starts[r];
        const bool before = holds && rank > 0, after = holds && rank + 1 < holders;
        const Index ghost_before = before ? slab_ghost_planes : 0;
        // A rank that holds none of the level takes part in its collectives only.
        DiaData<double> slab;
        if (holds) {
            slab = with_ghost_rows(ranks, *level_rows, plane, slab_ghost_planes, before, after);
        }
        GridBox slab_box = level_box;
        slab_box.points[slow] = slab.n / plane;
        const Index slab_first = first - ghost_before;
        bool along_axes = true;
        CoarseningMeasures measures;
        all_or_none(ranks, [&] {
            if (!holds) return;
            along_axes = check_box_couplings(slab, slab_box);
            Box own = whole_part(slab_box);
            own.lower[slow] = ghost_before;
            own.upper[slow] = ghost_before + planes;
            std::array<Index, 3> origin{0, 0, 0};
            origin[slow] = slab_first;
            measures = measure_coarsening(slab, slab_box, own, origin, level_box);
        });
        ranks.sum(measures.values);
        along_axes = ranks.min(along_axes ? 1.0 : 0.0) > 0;
        const BoxCoarsening coarsening = decide_coarsening(measures, level_box);
        if (!coarsening.coarsens()) return gather();

        // The next level's rows on this rank's part, from its slab: those of the coarse
        // planes on its own planes are what one process computes.
        Index slab_coarse_first = 0;
        BoxCoarsening on_slab;
        std::vector<double> slab_weights;
        DiaData<double> slab_coarse;
        all_or_none(ranks, [&] {
            if (!holds) return;
            on_slab = slab_coarsening(coarsening, slab_box, slab_first, slab_coarse_first);
            slab_weights = operator_interpolation(slab, slab_box, on_slab);
            slab_coarse = galerkin_operator(slab, slab_box, on_slab, slab_weights);
        });

        if (!result.levels.empty() && result.levels.back().holds()) {
            // The previous level's transfer reaches this level's window (or its own, where
            // this level was split anew).
            PartitionedLevel& above = result.levels.back();
            above.coarse_offset =
                above.handoff ? 0 : (pending_coarse_first - (first - (before ? 1 : 0))) * plane;
        }
        PartitionedLevel split;
        split.partition = Partition::slabs(level_box, starts, rank);
        split.holders = holders;
        split.split_axes = 1u << slow;
        split.along_axes = along_axes;
        GridBox window = level_box;
        window.points[slow] = planes + (before ? 1 : 0) + (after ? 1 : 0);
        const Index coarse_plane = plane_of(coarsening.coarse);
        if (holds) {
            const Index window_rows = window.points[slow] * plane;
            // The slab's rows of the window, in the slab's storage (the slab is not read again).
            split.window_operator = std::move(slab);
            split.window_operator.keep_rows((ghost_before - (before ? 1 : 0)) * plane, window_rows);
            if (before) cut_outside(split.window_operator, 0, plane);
            if (after) cut_outside(split.window_operator, window_rows - plane, plane);
            split.window_operator = without_empty_diagonals(std::move(split.window_operator));
            Index window_coarse_first = 0;
            split.transfer =
                slab_coarsening(coarsening, window, first - (before ? 1 : 0), window_coarse_first);
            // The window's coarse points' weights, from the slab's (slot by slot, point by
            // point).
            const Index slab_points = on_slab.coarse.size(),
                        window_points = split.transfer.coarse.size();
            const int slots = transfer_slots(box.dimension);
            split.weights.resize(static_cast<std::size_t>(slots * window_points));
            for (int slot = 0; slot < slots; ++slot) {
                std::copy_n(slab_weights.begin() + slot * slab_points +
                                (window_coarse_first - slab_coarse_first) * coarse_plane,
                            window_points, split.weights.begin() + slot * window_points);
            }
            pending_coarse_first = window_coarse_first;
        }
        result.levels.push_back(std::move(split));

        // Each rank's part of the next level: the coarse planes on its planes.
        const AxisCoarsening& along = coarsening.axes[slow];
        const Index coarse_planes = coarsening.coarse.points[slow];
        const auto coarse_plane_of = [&](Index fine) {
            return std::min(along.step == 2 ? ceil_div(fine - along.first, 2) : fine,
                            coarse_planes);
        };
        std::vector<Index> coarse_starts;
        for (const Index start : starts) coarse_starts.push_back(coarse_plane_of(start));
        coarse_starts.back() = coarse_planes;
        const Index coarse_first = coarse_starts[r];
        if (holds) {
            slab_coarse.keep_rows((coarse_first - slab_coarse_first) * coarse_plane,
                                  (coarse_starts[r + 1] - coarse_first) * coarse_plane);
        }
        rows = on_used_neighbour_diagonals(ranks, std::move(slab_coarse), coarsening.coarse);
        level_rows = &rows;
        level_box = coarsening.coarse;
        plane = coarse_plane;
        starts = std::move(coarse_starts);
    }
}

}  // namespace simrun::solvers::multigrid

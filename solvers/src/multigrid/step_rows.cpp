#include "multigrid/step_rows.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "base/kernel_table.hpp"
#include "boxes/box_steps.hpp"
#include "distributed/redistribution.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::solvers::multigrid {
namespace {

using Index = std::int64_t;

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

// Whether the rows of `points` are one run of each region's (whole lines of both, one plane or
// whole planes).
bool one_run(const Box& points, const Box& a, const Box& b) {
    const auto whole = [&](const Box& region) {
        return points.points(0) == region.points(0) &&
               (points.points(2) == 1 || points.points(1) == region.points(1));
    };
    return whole(a) && whole(b);
}

// Zeroes the entries of `a` (on the points of `shape`) whose neighbour `step` (diagonal d)
// leaves the region.
void cut_outside(DiaData<double>& a, int d, const Step& step, const GridBox& shape) {
    const Box local = whole_part(shape);
    double* out = a.values.data() + static_cast<Index>(d) * a.n;
    for_each_line(local, [&](Index j, Index k) {
        const Index row = shape.row(0, j, k);
        if (!local.contains(0, j + step[1], k + step[2])) {
            std::fill_n(out + row, shape.points[0], 0.0);
            return;
        }
        if (step[0] < 0) out[row] = 0.0;
        if (step[0] > 0) out[row + shape.points[0] - 1] = 0.0;
    });
}

// Throws for rows that couple points `offset` apart, no step to a neighbour in `box`.
[[noreturn]] void refuse_coupling(int offset, const GridBox& box) {
    throw std::invalid_argument("multigrid: the rows couple points " + std::to_string(offset) +
                                " apart, which is no step to a neighbour in the " + box.describe() +
                                " box: the rows are not the box's points, x fastest");
}

}  // namespace

std::vector<int> step_offsets(const std::vector<Step>& steps, const GridBox& shape) {
    std::vector<int> offsets;
    for (const Step& s : steps) offsets.push_back(static_cast<int>(offset_of(s, shape)));
    return offsets;
}

bool distinct_offsets(const GridBox& shape, const std::vector<Step>& steps) {
    for (std::size_t axis = 0; axis < 3; ++axis) {
        for (const Step& s : steps) {
            if (s[axis] != 0 && shape.points[axis] < 3) return false;
        }
    }
    return true;
}

void keep_inside(DiaData<double>& a, const std::vector<Step>& steps, const GridBox& shape) {
    for (std::size_t s = 0; s < steps.size(); ++s) {
        cut_outside(a, static_cast<int>(s), steps[s], shape);
    }
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
        const auto refuse = [&] { refuse_coupling(offset, shape); };
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
DiaData<double> dia_of(StepRows rows, const std::vector<Step>& steps, int dimension) {
    const GridBox shape = rows.region.shape(dimension);
    const Index n = rows.region.size();
    if (distinct_offsets(shape, steps)) {
        // The values as they lie: the diagonals in the steps' order are ascending offsets.
        DiaData<double> a{n, {}, {}};
        a.offsets = step_offsets(steps, shape);
        if (rows.view != nullptr) {
            a.values.assign(rows.view, rows.view + steps.size() * static_cast<std::size_t>(n));
        } else {
            a.values = std::move(rows.values);
        }
        keep_inside(a, steps, shape);
        return a;
    }
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
        const double* in = rows.data() + s * static_cast<std::size_t>(n);
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
    const auto at = [&](const Box& region, Index j, Index k) {
        return static_cast<std::size_t>(region.index(points.lower[0], j, k));
    };
    if (one_run(points, from.region, to.region)) {  // (a slab's planes: one copy a step)
        const Index j = points.lower[1], k = points.lower[2];
        for (std::size_t s = 0; s < steps; ++s) {
            std::copy_n(from.data() + s * nf + at(from.region, j, k), points.size(),
                        to.values.data() + s * nt + at(to.region, j, k));
        }
        return;
    }
    const Index nx = points.points(0);
    for (std::size_t s = 0; s < steps; ++s) {
        for_each_line(points, [&](Index j, Index k) {
            std::copy_n(from.data() + s * nf + at(from.region, j, k), nx,
                        to.values.data() + s * nt + at(to.region, j, k));
        });
    }
}

std::vector<double> steps_in_use(const StepRows& rows, std::size_t steps) {
    std::vector<double> used(steps, 0.0);
    const std::size_t n = static_cast<std::size_t>(rows.region.size());
    for (std::size_t s = 0; s < steps; ++s) {
        const double* begin = rows.data() + s * n;
        if (std::any_of(begin, begin + static_cast<std::ptrdiff_t>(n),
                        [](double v) { return v != 0.0; })) {
            used[s] = 1.0;
        }
    }
    return used;
}

std::vector<Step> used_steps(const Communicator& ranks, std::vector<double> in_use,
                             const std::vector<Step>& steps) {
    ranks.sum(in_use);
    std::vector<Step> kept;
    for (std::size_t s = 0; s < steps.size(); ++s) {
        if (in_use[s] > 0 || steps[s] == Step{0, 0, 0}) kept.push_back(steps[s]);
    }
    return kept;
}

std::vector<double> steps_in_use(const std::shared_ptr<const Backend>& backend,
                                 const BackendStepRows& rows, std::size_t steps) {
    const Index n = rows.region.size();
    std::vector<double> used(steps, n > 0 ? 1.0 : 0.0);
    if (n == 0) return used;
    std::vector<double> table;
    Array<std::uint8_t> classes(backend, static_cast<std::size_t>(n));
    if (backend->kernels<double>().classify_points(
            *backend, rows.values.data(), n, static_cast<int>(steps), classes.data(), table)) {
        std::fill(used.begin(), used.end(), 0.0);
        for (std::size_t k = 0; k < table.size(); ++k) {
            if (table[k] != 0.0) used[k % steps] = 1.0;
        }
    }
    return used;
}

// `rows` on `steps` (a subset of `from`'s, in the same order).
StepRows on_steps(StepRows rows, const std::vector<Step>& from, const std::vector<Step>& steps) {
    if (steps == from) return rows;
    const auto n = static_cast<std::size_t>(rows.region.size());
    StepRows kept{rows.region, std::vector<double>(steps.size() * n)};
    for (std::size_t s = 0; s < steps.size(); ++s) {
        const auto at =
            static_cast<std::size_t>(std::find(from.begin(), from.end(), steps[s]) - from.begin());
        std::copy_n(rows.data() + at * n, n,
                    kept.values.begin() + static_cast<std::ptrdiff_t>(s * n));
    }
    return kept;
}

StepRows block_rows(const DiaData<double>& block, const GridBox& box, const Box& part,
                    const std::vector<Step>& steps) {
    if (distinct_offsets(box, steps) && step_offsets(steps, box) == block.offsets) {
        return StepRows{part, {}, block.values.data()};  // the block as it lies
    }
    const Index n = part.size(), first = box.row(part.lower[0], part.lower[1], part.lower[2]);
    StepRows rows{part, std::vector<double>(steps.size() * static_cast<std::size_t>(n), 0.0)};
    for (int d = 0; d < block.num_diagonals(); ++d) {
        const int offset = block.offsets[static_cast<std::size_t>(d)];
        const auto refuse = [&] { refuse_coupling(offset, box); };
        const double* in = block.values.data() + static_cast<Index>(d) * block.n;
        const auto slot = [&](const std::optional<Step>& step) {
            const auto at = step ? std::find(steps.begin(), steps.end(), *step) : steps.end();
            return at == steps.end() ? -1 : at - steps.begin();
        };
        if (offset_step_unique(offset, box)) {  // the diagonal whole, on the offset's step
            const auto at = slot(offset_step(offset, box));
            if (at >= 0) {
                std::copy_n(in, n, rows.values.data() + at * n);
            } else if (std::any_of(in, in + n, [](double v) { return v != 0.0; })) {
                refuse();
            }
            continue;
        }
        // Else each entry's step from the coordinates of its two points.
        for (Index p = 0; p < n; ++p) {
            if (in[p] == 0.0) continue;
            const auto at = slot(entry_step(box, first + p, offset));
            if (at < 0) refuse();
            rows.values[static_cast<std::size_t>(at * n + p)] = in[p];
        }
    }
    return rows;
}

namespace {

// Every rank's points of `parts` as runs of `values` values a point (point after point, each
// point's values together), at their place in its part.
VectorLayout point_layout(const GridBox& box, const std::vector<Box>& parts, Index values) {
    VectorLayout layout(parts.size());
    for (std::size_t q = 0; q < parts.size(); ++q) {
        for (PointRun run : part_runs(box, parts[q], parts[q])) {
            layout[q].push_back({run.global * values, run.local * values, run.count * values});
        }
    }
    return layout;
}

}  // namespace

StepRows moved_rows(const Communicator& ranks, const GridBox& box, const StepRows& own,
                    const std::vector<Box>& from, const std::vector<Box>& to, std::size_t steps) {
    const auto n = static_cast<std::size_t>(own.region.size());
    std::vector<double> packed(n * steps);
    for (std::size_t p = 0; p < n; ++p) {
        for (std::size_t s = 0; s < steps; ++s) packed[p * steps + s] = own.data()[s * n + p];
    }
    const Box& wanted = to[static_cast<std::size_t>(ranks.rank())];
    const auto m = static_cast<std::size_t>(wanted.size());
    std::vector<double> received(m * steps);
    const auto values = static_cast<Index>(steps);
    redistribute_on_host<double>(ranks,
                                 redistribution_plan(ranks.rank(), point_layout(box, from, values),
                                                     point_layout(box, to, values)),
                                 std::span<const double>(packed), std::span<double>(received));
    StepRows moved{wanted, std::vector<double>(m * steps)};
    for (std::size_t p = 0; p < m; ++p) {
        for (std::size_t s = 0; s < steps; ++s) moved.values[s * m + p] = received[p * steps + s];
    }
    return moved;
}

DiaData<double> gathered_rows(const Communicator& ranks, const std::vector<Box>& parts,
                              const StepRows& own, const std::vector<Step>& steps,
                              const GridBox& box) {
    const std::size_t own_values = steps.size() * static_cast<std::size_t>(own.region.size());
    const auto all = ranks.all_gather(std::as_bytes(std::span(own.data(), own_values)));
    StepRows whole{whole_part(box),
                   std::vector<double>(steps.size() * static_cast<std::size_t>(box.size()))};
    for (std::size_t q = 0; q < parts.size(); ++q) {
        const std::size_t values = steps.size() * static_cast<std::size_t>(parts[q].size());
        if (all[q].size() != values * sizeof(double)) {
            throw std::logic_error("multigrid: rank " + std::to_string(q) +
                                   " sent the rows of a gathered level in another shape");
        }
        if (values == 0) continue;  // a rank that holds none of the level
        StepRows theirs{parts[q], std::vector<double>(values)};
        std::memcpy(theirs.values.data(), all[q].data(), all[q].size());
        copy_rows(theirs, whole, parts[q], steps.size());
    }
    return dia_of(std::move(whole), steps, box.dimension);
}

namespace {

// A region's points as the box kernels read a box (the dimension is the points' business).
BoxShape shape_of_region(const Box& region) {
    return {3, {region.points(0), region.points(1), region.points(2)}};
}

// Point `at` (global coordinates) in `region`'s own coordinates.
void local_corner(const Box& region, const Box& points, std::int64_t (&at)[3]) {
    for (std::size_t axis = 0; axis < 3; ++axis) {
        at[axis] = points.lower[axis] - region.lower[axis];
    }
}

}  // namespace

BackendStepRows to_backend(const std::shared_ptr<const Backend>& backend, const StepRows& rows,
                           std::size_t steps) {
    const auto n = steps * static_cast<std::size_t>(rows.region.size());
    BackendStepRows on{rows.region, Array<double>(backend, n)};
    if (n > 0) backend->copy_from_host(on.values.data(), rows.data(), n * sizeof(double));
    return on;
}

StepRows to_host(const BackendStepRows& rows) {
    return StepRows{rows.region, rows.values.to_host()};
}

BackendStepRows zero_rows(const std::shared_ptr<const Backend>& backend, const Box& region,
                          std::size_t steps) {
    BackendStepRows rows{region,
                         Array<double>(backend, steps * static_cast<std::size_t>(region.size()))};
    fill(rows.values, 0.0);
    return rows;
}

void copy_rows(const Backend& backend, const BackendStepRows& from, BackendStepRows& to,
               const Box& points, std::size_t steps) {
    if (points.empty() || steps == 0) return;
    if (intersection(points, from.region) != points || intersection(points, to.region) != points) {
        throw std::logic_error("multigrid: rows copied from or to a region without their points");
    }
    std::int64_t from_at[3], to_at[3];
    local_corner(from.region, points, from_at);
    local_corner(to.region, points, to_at);
    backend.kernels<double>().box_copy_rows(
        backend, from.values.data(), shape_of_region(from.region), from_at, to.values.data(),
        shape_of_region(to.region), to_at, shape_of_region(points), static_cast<int>(steps));
}

void keep_inside(const Backend& backend, BackendStepRows& rows, const std::vector<Step>& steps) {
    if (rows.region.empty()) return;
    if (steps.size() > static_cast<std::size_t>(max_dia_diagonals)) {
        throw std::invalid_argument("multigrid: more than " + std::to_string(max_dia_diagonals) +
                                    " steps");
    }
    BoxDiagonalSteps view;
    for (std::size_t s = 0; s < steps.size(); ++s) {
        for (std::size_t axis = 0; axis < 3; ++axis) {
            view.step[s][axis] = static_cast<int>(steps[s][axis]);
        }
    }
    backend.kernels<double>().box_zero_leaving(backend, rows.values.data(),
                                               shape_of_region(rows.region), view,
                                               static_cast<int>(steps.size()));
}

BackendStepRows on_steps(const std::shared_ptr<const Backend>& backend, BackendStepRows rows,
                         const std::vector<Step>& from, const std::vector<Step>& steps) {
    if (steps == from) return rows;
    const auto n = static_cast<std::size_t>(rows.region.size());
    BackendStepRows kept{rows.region, Array<double>(backend, steps.size() * n)};
    for (std::size_t s = 0; s < steps.size(); ++s) {
        const auto at =
            static_cast<std::size_t>(std::find(from.begin(), from.end(), steps[s]) - from.begin());
        if (n > 0) {
            backend->copy(kept.values.data() + s * n, rows.values.data() + at * n,
                          n * sizeof(double));
        }
    }
    return kept;
}

GhostLayers::GhostLayers(int rank, const std::vector<Box>& parts, const Box& own, std::size_t steps,
                         const GridBox& box, Index layers)
    : own_(own),
      around_(grown(own, box, layers)),
      steps_(steps),
      out_(parts.size(), no_points),
      in_(parts.size(), no_points),
      sent_(parts.size()),
      received_(parts.size()) {
    for (std::size_t q = 0; q < parts.size(); ++q) {
        if (q == static_cast<std::size_t>(rank) || parts[q].empty()) continue;
        out_[q] = intersection(own, grown(parts[q], box, layers));
        in_[q] = intersection(around_, parts[q]);
    }
}

void GhostLayers::prepare(const Box& own) {
    if (own != own_) {
        throw std::logic_error("multigrid: ghost layers started from another region's rows");
    }
    for (std::size_t q = 0; q < in_.size(); ++q) {
        if (!in_[q].empty()) received_[q].resize(steps_ * static_cast<std::size_t>(in_[q].size()));
    }
}

StepRows GhostLayers::start(const StepRows& own) {
    prepare(own.region);
    StepRows around{around_,
                    std::vector<double>(steps_ * static_cast<std::size_t>(around_.size()))};
    copy_rows(own, around, own.region, steps_);
    for (std::size_t q = 0; q < out_.size(); ++q) {
        if (out_[q].empty()) continue;
        StepRows packed{out_[q],
                        std::vector<double>(steps_ * static_cast<std::size_t>(out_[q].size()))};
        copy_rows(own, packed, out_[q], steps_);
        sent_[q] = std::move(packed.values);
    }
    return around;
}

BackendStepRows GhostLayers::start(const std::shared_ptr<const Backend>& backend,
                                   const BackendStepRows& own) {
    prepare(own.region);
    BackendStepRows around = zero_rows(backend, around_, steps_);
    copy_rows(*backend, own, around, own.region, steps_);
    // Each message packed on the back-end and staged through the host.
    for (std::size_t q = 0; q < out_.size(); ++q) {
        if (out_[q].empty()) continue;
        BackendStepRows packed{
            out_[q], Array<double>(backend, steps_ * static_cast<std::size_t>(out_[q].size()))};
        copy_rows(*backend, own, packed, out_[q], steps_);
        sent_[q] = packed.values.to_host();
    }
    return around;
}

void GhostLayers::exchange(const Communicator& ranks) {
    std::vector<Message> sends, receives;
    for (std::size_t q = 0; q < out_.size(); ++q) {
        if (!out_[q].empty()) {
            sends.push_back({static_cast<int>(q), std::as_writable_bytes(std::span(sent_[q]))});
        }
        if (!in_[q].empty()) {
            receives.push_back(
                {static_cast<int>(q), std::as_writable_bytes(std::span(received_[q]))});
        }
    }
    if (!sends.empty() || !receives.empty()) ranks.start_exchange(sends, receives)->finish();
    sent_.assign(sent_.size(), {});
}

void GhostLayers::finish(StepRows& around) {
    for (std::size_t q = 0; q < in_.size(); ++q) {
        if (in_[q].empty()) continue;
        copy_rows(StepRows{in_[q], std::move(received_[q])}, around, in_[q], steps_);
    }
}

void GhostLayers::finish(const std::shared_ptr<const Backend>& backend, BackendStepRows& around) {
    for (std::size_t q = 0; q < in_.size(); ++q) {
        if (in_[q].empty()) continue;
        copy_rows(*backend, to_backend(backend, StepRows{in_[q], std::move(received_[q])}, steps_),
                  around, in_[q], steps_);
    }
}

}  // namespace simrun::solvers::multigrid

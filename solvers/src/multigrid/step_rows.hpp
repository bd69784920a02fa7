#pragma once
// The rows of a region of a multigrid level by step (double, on the host or kept on the
// back-end), the form in which the planner over ranks (partitioned_levels.hpp) moves rows
// between ranks and regions: values[s *
// n + p] couples point p of the region (x fastest) to its neighbour steps[s] away (the level's
// steps, the same on every rank), whichever rank holds that neighbour. Where the region's rows
// are whole lines of the regions they move between (as a slab's planes are), they move as runs
// of values; where its steps make distinct offsets in it, they are its DIA rows as they lie.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/distributed/partition.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"

namespace simrun::solvers::multigrid {

using Step = std::array<std::int64_t, 3>;

struct StepRows {
    Box region;
    std::vector<double> values;
    const double* view = nullptr;  // where set, the values are the caller's (not copied)
    const double* data() const { return view != nullptr ? view : values.data(); }
};

// Each step's DIA offset in a box of `shape`, and whether they are distinct in the steps'
// order (ascending: at least 3 points along each axis a step moves along).
std::vector<int> step_offsets(const std::vector<Step>& steps, const GridBox& shape);
bool distinct_offsets(const GridBox& shape, const std::vector<Step>& steps);

// Zeroes the entries of `a` (a matrix on the points of `shape`, its diagonals `steps`' in
// order) whose neighbour leaves the box.
void keep_inside(DiaData<double>& a, const std::vector<Step>& steps, const GridBox& shape);

// Every step to a neighbour in `dimension` axes, the point's own among them, ordered as their
// offsets in a box of at least 3 points along each axis.
std::vector<Step> all_steps(int dimension);

// The rows of `a` (a matrix on the points of `from`, its neighbour offsets) at the points of
// `region` (inside `from`), on `steps`. Throws std::invalid_argument where a nonzero entry is
// no step to a neighbour, or none of `steps`.
StepRows rows_of(const DiaData<double>& a, const Box& from, const Box& region,
                 const std::vector<Step>& steps, int dimension);

// The rows of `block` (the rows of the points of `part`, whole planes of `box` along its last
// axis, in the box's numbering: a slab's, its couplings to the neighbouring planes kept) on
// `steps`, viewed where its diagonals are those steps' in order. Throws as rows_of does, naming
// the box.
StepRows block_rows(const DiaData<double>& block, const GridBox& box, const Box& part,
                    const std::vector<Step>& steps);

// The rows as a matrix on the region's points, its neighbour offsets (entries that reach
// outside the region left out; steps that share an offset in a small region summed where they
// stay inside it). Where the steps make distinct offsets in the region, the values are taken
// as they lie (moved, where `rows` owns them) and only the entries that reach outside zeroed.
DiaData<double> dia_of(StepRows rows, const std::vector<Step>& steps, int dimension);

// Copies the rows of `points` (inside both regions) from one set of rows into another.
void copy_rows(const StepRows& from, StepRows& to, const Box& points, std::size_t steps);

// Whether this rank's rows use each step (a nonzero entry): 1 or 0 for each of `steps` steps.
std::vector<double> steps_in_use(const StepRows& rows, std::size_t steps);
// The steps some rank's rows use (`in_use`: this rank's, steps_in_use's), the point's own kept,
// in `steps`' order. Collective.
std::vector<Step> used_steps(const Communicator& ranks, std::vector<double> in_use,
                             const std::vector<Step>& steps);

// `rows` on `steps` (a subset of `from`'s, in the same order): `rows` itself where they are
// the same.
StepRows on_steps(StepRows rows, const std::vector<Step>& from, const std::vector<Step>& steps);

// The rows of the points `from[rank]` (this rank's, `own`) moved so that each rank holds those
// of `to[rank]` (point to point, through the host). Collective with the ranks it exchanges
// with.
StepRows moved_rows(const Communicator& ranks, const GridBox& box, const StepRows& own,
                    const std::vector<Box>& from, const std::vector<Box>& to, std::size_t steps);

// The whole level's rows on every rank, from each rank's part (every rank's, in rank order).
DiaData<double> gathered_rows(const Communicator& ranks, const std::vector<Box>& parts,
                              const StepRows& own, const std::vector<Step>& steps,
                              const GridBox& box);

// ---- The same rows kept on the back-end ----
// The planner over ranks keeps each rank's rows there from level to level, moves them with the
// back-end's box copies, and sends only the ghost layers' rows through the host, in the
// messages the host's rows take.
struct BackendStepRows {
    Box region = no_points;
    Array<double> values;  // steps x the region's points
};

// `rows` (on `steps` steps) copied to the back-end, and back.
BackendStepRows to_backend(const std::shared_ptr<const Backend>& backend, const StepRows& rows,
                           std::size_t steps);
StepRows to_host(const BackendStepRows& rows);

// Rows on `region`, every value zero.
BackendStepRows zero_rows(const std::shared_ptr<const Backend>& backend, const Box& region,
                          std::size_t steps);

// Copies the rows of `points` (inside both regions) from one set of rows into another.
void copy_rows(const Backend& backend, const BackendStepRows& from, BackendStepRows& to,
               const Box& points, std::size_t steps);

// Zeroes the entries whose neighbour leaves the region (its diagonals `steps`' in order).
void keep_inside(const Backend& backend, BackendStepRows& rows, const std::vector<Step>& steps);

// `rows` on `steps` (a subset of `from`'s, in the same order).
BackendStepRows on_steps(const std::shared_ptr<const Backend>& backend, BackendStepRows rows,
                         const std::vector<Step>& from, const std::vector<Step>& steps);

// Whether rows kept on the back-end use each step (read from their classes: every step where
// they take too many kinds to tell), as steps_in_use above.
std::vector<double> steps_in_use(const std::shared_ptr<const Backend>& backend,
                                 const BackendStepRows& rows, std::size_t steps);

// This rank's rows (on the host or kept on the back-end) with `layers` layers of the other
// ranks' rows around its part, as far as the box goes: each rank sends the rows of its points
// that another's layers cover. In three steps, so that the local work a rank may fail at alone
// (on the back-end, allocations) can be agreed over the ranks around the exchange: start (this
// rank's rows placed in the region around and packed for the others), exchange (point to point
// with the ranks whose parts are near; by the ranks that hold points only), finish (the others'
// rows placed).
class GhostLayers {
public:
    GhostLayers(int rank, const std::vector<Box>& parts, const Box& own, std::size_t steps,
                const GridBox& box, std::int64_t layers);
    const Box& region() const { return around_; }
    StepRows start(const StepRows& own);
    BackendStepRows start(const std::shared_ptr<const Backend>& backend,
                          const BackendStepRows& own);
    void exchange(const Communicator& ranks);
    void finish(StepRows& around);
    void finish(const std::shared_ptr<const Backend>& backend, BackendStepRows& around);

private:
    // The buffers of the messages this rank receives (agreed work: allocations), after checking
    // that the rows given are the region's the messages were planned for.
    void prepare(const Box& own);

    Box own_, around_;
    std::size_t steps_;
    // Per rank: the points this rank sends it and receives from it (empty: none), the values.
    std::vector<Box> out_, in_;
    std::vector<std::vector<double>> sent_, received_;
};

}  // namespace simrun::solvers::multigrid

#pragma once
// One redistribution of a vector between two layouts, as AMReX's ParallelCopy is: each rank
// holds a region of the vector in a source layout and wants a region in a target layout (where
// the target is the whole vector on every rank: a gather). What a multigrid level handed to
// fewer ranks, split anew or gathered whole is. Made once per pair of layouts:
//   - gathered whole on every rank (every target the whole): each rank's source packed into its
//     segment of the ranks' sources in rank order (no copy where the source lies there already),
//     the segments gathered on every rank, put in the whole's order (no pass where the segments
//     are in it). On the GPUs, where Backend::open_device_halo gives a halo with the rank
//     before and after, along the line of ranks with no host wait; else through the host (the
//     own segment to the host, an all-gather, the whole back).
//   - local (every rank's target within its own source): one gather on the back-end.
//   - otherwise point to point through the host (sources disjoint): the source to the host, the
//     messages, the target back (scattered on the back-end where it has gaps: a part inside its
//     window), timed as a gather of the communicator.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "distributed/halo_plan.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/base/device_halo.hpp"
#include "simrun/solvers/boxes/box.hpp"

namespace simrun::solvers {

// `count` consecutive points of the whole vector from `global` on, at consecutive local
// positions from `local` on.
struct PointRun {
    std::int64_t global = 0, local = 0, count = 0;
};
// Where each rank's points of a vector lie, in rank order (a rank that holds none: no runs).
// A rank's target may be left empty where it takes its points from its own source.
using VectorLayout = std::vector<std::vector<PointRun>>;

// The whole vector of `points` values on each of `ranks` ranks.
VectorLayout whole_on_every_rank(std::int64_t points, int ranks);
// The points of `part` (of `box`, global index box.row) on a vector laid out on `layout` (a box
// holding the part, x fastest): a run per row of the part, rows that follow each other in both
// the box and the layout joined (a slab's planes: one run).
std::vector<PointRun> part_runs(const GridBox& box, const Box& part, const Box& layout);

// What this rank sends each rank (itself included, in rank order) of its source (local runs)
// and receives from it into its target (local runs), both in the whole's order. Sources are
// disjoint, or every rank's target lies in its own source.
HaloPlan redistribution_plan(int rank, const VectorLayout& source, const VectorLayout& target);

// Moves host values by a redistribution plan (messages point to point; the values a rank keeps
// copied): `from` this rank's source, `into` its target. Throws std::logic_error, before any
// message, where the values arriving are not as many as `into` holds (a wanted point no rank
// holds).
template <typename V>
void redistribute_on_host(const Communicator& ranks, const HaloPlan& plan, std::span<const V> from,
                          std::span<V> into);

template <typename T>
class Redistribution {
public:
    // The whole vector gathered on every rank from `source` (every rank's, in rank order).
    // Collective: every rank makes it at the same point (a device halo is opened along the
    // line of ranks, and the ranks agree on the memory it takes).
    static std::unique_ptr<Redistribution> gather_on_every_rank(
        std::shared_ptr<const Backend> backend, const VectorLayout& source);
    // `source` to `target` (every rank's, in rank order): local work where every rank's target
    // lies in its own source, else messages with the ranks that share points (when run, not
    // when made). Not collective: may be made inside all_or_none. Throws std::logic_error
    // where every target is the whole (gather_on_every_rank's).
    static std::unique_ptr<Redistribution> point_to_point(std::shared_ptr<const Backend> backend,
                                                          const VectorLayout& source,
                                                          const VectorLayout& target);
    ~Redistribution();
    Redistribution(const Redistribution&) = delete;
    Redistribution& operator=(const Redistribution&) = delete;

    // `from`: this rank's source values, `into`: its target's (on the back-end; the same array
    // where the source lies in the target). Collective with the ranks it exchanges with.
    void run(const T* from, T* into);

private:
    enum class Kind { gathered, local, through_host };
    explicit Redistribution(std::shared_ptr<const Backend> backend);
    void make_gathered(const VectorLayout& source);
    void make_point_to_point(const VectorLayout& source, const VectorLayout& target);
    void pack(const T* from, T* at);
    void gather_along_line(T* packed);
    void gather_through_host(T* packed);
    void run_through_host(const T* from, T* into);

    std::shared_ptr<const Backend> backend_;
    Kind kind_ = Kind::through_host;
    HaloPlan plan_;                      // point to point
    std::int64_t from_offset_ = 0;       // a source of one run: where it starts
    std::int64_t into_offset_ = 0;       // a target of one run: where it starts
    Array<std::int64_t> scatter_index_;  // a target of several: each value's place in it
    Array<T> scattered_;
    std::int64_t held_ = 0, wanted_ = 0;  // this rank's source and target values
    std::vector<T> sent_, received_;      // host copies of them
    Array<std::int64_t> index_;           // local: each target value's source position
    // Gathered: every rank's segment, the largest, where this rank's source starts in `from`
    // where it is one run, else its positions; each point of the whole: its place in the
    // segments, where they are not in the whole's order.
    std::vector<std::int64_t> starts_;
    std::int64_t slot_ = 0, own_local_ = 0;
    Array<std::int64_t> pack_index_, unpack_index_;
    Array<T> segments_, slots_;
    std::unique_ptr<DeviceHalo> device_;
    int before_ = -1, after_ = -1;  // the device halo's sides of the rank before and after
};

}  // namespace simrun::solvers

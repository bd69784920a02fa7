#pragma once
// What a halo exchange moves, made once per layout: per neighbour its rank, the local indices
// of the values sent to it and of those received from it, as runs of consecutive indices (a
// slab's plane is one run, copied straight; a box's face, edge or corner a run per row of
// points, gathered). Both sides of a pair list the same points in the same order.
#include <cstdint>
#include <vector>

#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/distributed/partition.hpp"

namespace simrun::solvers {

// `count` consecutive local indices from `first` on.
struct IndexRun {
    std::int64_t first = 0, count = 0;
    bool operator==(const IndexRun&) const = default;
};

// Appends `count` indices from `first` on to `runs`, lengthening the last run where they
// follow it.
void add_run(std::vector<IndexRun>& runs, std::int64_t first, std::int64_t count);
// Appends `index` to `runs`, lengthening the last run where it follows it.
void add_index(std::vector<IndexRun>& runs, std::int64_t index);
// The indices (or points) the runs hold: their counts summed (IndexRun, PointRun).
template <typename Run>
std::int64_t run_points(const std::vector<Run>& runs) {
    std::int64_t points = 0;
    for (const Run& run : runs) points += run.count;
    return points;
}
// The runs' indices one by one, in order.
std::vector<std::int64_t> run_indices(const std::vector<IndexRun>& runs);

struct HaloPlan {
    struct Neighbour {
        int rank = 0;
        std::vector<IndexRun> sent, received;
    };
    std::vector<Neighbour> neighbours;  // in rank order
};

// The halo of a vector laid out on `layout` (a box of the partition's points holding this
// rank's window, its values x fastest): each side's points sent (of this rank's part) and
// received (of its window), as indices into the layout.
HaloPlan halo_plan(const Partition& partition, const Box& layout);

}  // namespace simrun::solvers

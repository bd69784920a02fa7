#include "distributed/halo_plan.hpp"

namespace simrun::solvers {

void add_run(std::vector<IndexRun>& runs, std::int64_t first, std::int64_t count) {
    if (!runs.empty() && runs.back().first + runs.back().count == first) {
        runs.back().count += count;
    } else {
        runs.push_back({first, count});
    }
}

void add_index(std::vector<IndexRun>& runs, std::int64_t index) { add_run(runs, index, 1); }

std::vector<std::int64_t> run_indices(const std::vector<IndexRun>& runs) {
    std::vector<std::int64_t> indices;
    indices.reserve(static_cast<std::size_t>(run_points(runs)));
    for (const IndexRun& run : runs) {
        for (std::int64_t i = 0; i < run.count; ++i) indices.push_back(run.first + i);
    }
    return indices;
}

namespace {

std::vector<IndexRun> runs_of(const Box& points, const Box& layout) {
    std::vector<IndexRun> runs;
    if (points.empty()) return runs;
    for_each_point(points, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
        add_index(runs, layout.index(i, j, k));
    });
    return runs;
}

}  // namespace

HaloPlan halo_plan(const Partition& partition, const Box& layout) {
    HaloPlan plan;
    for (const Partition::Side& side : partition.sides()) {
        plan.neighbours.push_back(
            {side.rank, runs_of(side.sent, layout), runs_of(side.received, layout)});
    }
    return plan;
}

}  // namespace simrun::solvers

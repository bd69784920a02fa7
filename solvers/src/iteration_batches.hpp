#pragma once
// Iterations issued to the back-end in batches, with no host wait inside a batch, for methods
// whose scalars stay on the back-end (cg_device_state.hpp). A batch of any length is issued as
// recorded runs of 1, 2, 4, ... 64 iterations (on CUDA: graphs, recorded once per length and
// run again while the buffers stay the same: one node when the back-end runs the iterations in
// one persistent kernel), and the length of the next batch follows the residual's decay, so
// that few iterations are issued past convergence.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "simrun/solvers/backend.hpp"

namespace simrun::solvers {

class IterationBatches {
public:
    static constexpr int max_batch = 64;

    // issue(count) issues the kernels of `count` iterations; `buffers` (below) identifies the
    // buffers they use (when it changes, the recordings are made again).
    IterationBatches(const Backend& backend, std::function<void(std::int64_t)> issue)
        : backend_(backend), issue_(std::move(issue)) {}

    // Issues `count` iterations (1 .. max_batch) without waiting for them.
    void issue(std::int64_t count, const void* buffers);

    // How many iterations the next batch should have: enough to reach `target` at the rate
    // the last iterations of `history` (||r_0||, ||r_1||, ...) fell at, plus one, at most
    // `remaining` and max_batch; 8 while the history is too short to say.
    static std::int64_t next_length(const std::vector<double>& history, double target,
                                    std::int64_t remaining);

private:
    const Backend& backend_;
    std::function<void(std::int64_t)> issue_;
    const void* buffers_ = nullptr;
    std::array<std::unique_ptr<RecordedWork>, 7> runs_;  // runs_[b]: 2^b iterations
};

}  // namespace simrun::solvers

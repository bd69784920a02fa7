// Row binning for the GPU CSR SpMV. The limits come from the matrix itself:
//
//   short_limit = clamp(2 * median row length, 4, 32)
//     A thread-per-row warp runs as long as its longest row while doing the work of its average
//     row; allowing rows up to twice the typical length keeps the idle share of its lanes near
//     one half at worst. Past 32 entries one warp per row keeps all 32 lanes busy with coalesced
//     loads, so thread-per-row has nothing left to gain; at 4 or fewer entries a warp per row
//     would leave at least 28 of its 32 lanes idle. The median, not the mean, so that a few huge
//     rows do not drag every row into thread-per-row.
//
//   long_limit = max(1024, ceil(nnz / 8192))
//     A warp loops ceil(L / 32) times over a row of length L. Spread evenly over a GPU's resident
//     warps (nominally 8192: an H100 holds 132 SMs x 64 warps) the whole matrix takes about
//     nnz / (8192 * 32) such iterations, so a row longer than nnz / 8192 would keep one warp busy
//     after the rest of the GPU is done: it gets a block instead. Below 1024 entries (two per
//     thread of the 512-thread long-row block) the block's reduction would cost more than the
//     loads it spreads.
#include "simrun/solvers/matrices/csr_binning.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace simrun::solvers {
namespace {

constexpr std::int32_t min_short_limit = 4;
constexpr std::int32_t max_short_limit = 32;
constexpr std::int32_t min_long_limit = 1024;
constexpr std::int64_t nominal_resident_warps = 8192;

}  // namespace

CsrBinPlan plan_csr_bins(std::span<const std::int32_t> row_ptr) {
    if (row_ptr.empty()) {
        throw std::invalid_argument("plan_csr_bins: row_ptr is empty; it needs rows + 1 entries");
    }
    if (row_ptr.size() - 1 > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
        throw std::invalid_argument("plan_csr_bins: " + std::to_string(row_ptr.size() - 1) +
                                    " rows exceed the 32-bit index limit");
    }
    const auto rows = static_cast<std::int32_t>(row_ptr.size() - 1);
    std::vector<std::int32_t> length(static_cast<std::size_t>(rows));
    for (std::int32_t i = 0; i < rows; ++i) {
        const auto r = static_cast<std::size_t>(i);
        if (row_ptr[r + 1] < row_ptr[r]) {
            throw std::invalid_argument("plan_csr_bins: row_ptr decreases at row " +
                                        std::to_string(i) + " (" + std::to_string(row_ptr[r]) +
                                        " then " + std::to_string(row_ptr[r + 1]) + ")");
        }
        length[r] = row_ptr[r + 1] - row_ptr[r];
    }

    CsrBinPlan plan;
    plan.short_limit = min_short_limit;
    plan.long_limit = min_long_limit;
    if (rows > 0) {
        std::vector<std::int32_t> sorted = length;
        const auto middle = sorted.begin() + rows / 2;
        std::nth_element(sorted.begin(), middle, sorted.end());
        const std::int64_t median = *middle;
        plan.short_limit = static_cast<std::int32_t>(
            std::clamp<std::int64_t>(2 * median, min_short_limit, max_short_limit));
        const std::int64_t nnz = std::int64_t{row_ptr.back()} - row_ptr.front();
        const std::int64_t even_share = (nnz + nominal_resident_warps - 1) / nominal_resident_warps;
        plan.long_limit =
            static_cast<std::int32_t>(std::max<std::int64_t>(min_long_limit, even_share));
    }

    auto bin_of = [&](std::int32_t row_length) {
        if (row_length <= plan.short_limit) return 0;
        return row_length <= plan.long_limit ? 1 : 2;
    };
    std::array<std::int32_t, 3> count{0, 0, 0};
    for (const std::int32_t l : length) ++count[static_cast<std::size_t>(bin_of(l))];
    plan.bin_offsets = {0, count[0], count[0] + count[1], rows};

    // Rows in ascending order within each bin: a stable counting sort on the bin.
    plan.binned_rows.resize(static_cast<std::size_t>(rows));
    std::array<std::int32_t, 3> next{plan.bin_offsets[0], plan.bin_offsets[1], plan.bin_offsets[2]};
    for (std::int32_t i = 0; i < rows; ++i) {
        const auto b = static_cast<std::size_t>(bin_of(length[static_cast<std::size_t>(i)]));
        plan.binned_rows[static_cast<std::size_t>(next[b]++)] = i;
    }
    return plan;
}

}  // namespace simrun::solvers

// plan_csr_bins: every row in exactly one bin, ascending within its bin, each bin within its
// limits, and limits that follow the distribution of the row lengths (csr_binning.cpp's rule).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

// Solver-internal header (solvers/src): the plan is host code with no kernels.
#include "simrun/solvers/matrices/csr_binning.hpp"

namespace simrun::solvers {
namespace {

std::vector<std::int32_t> row_ptr_from_lengths(const std::vector<std::int32_t>& lengths) {
    std::vector<std::int32_t> row_ptr(lengths.size() + 1, 0);
    for (std::size_t i = 0; i < lengths.size(); ++i) row_ptr[i + 1] = row_ptr[i] + lengths[i];
    return row_ptr;
}

std::int32_t length_of(const std::vector<std::int32_t>& row_ptr, std::int32_t row) {
    const auto r = static_cast<std::size_t>(row);
    return row_ptr[r + 1] - row_ptr[r];
}

// The invariants of any plan: offsets from 0 to rows, every row once, ascending within a bin,
// bin 0 <= short_limit < bin 1 <= long_limit < bin 2.
void expect_valid_plan(const CsrBinPlan& plan, const std::vector<std::int32_t>& row_ptr) {
    const auto rows = static_cast<std::int32_t>(row_ptr.size() - 1);
    ASSERT_EQ(plan.bin_offsets[0], 0);
    ASSERT_EQ(plan.bin_offsets[3], rows);
    ASSERT_EQ(plan.binned_rows.size(), static_cast<std::size_t>(rows));
    EXPECT_LE(plan.short_limit, plan.long_limit);
    std::vector<int> seen(static_cast<std::size_t>(rows), 0);
    for (int b = 0; b < 3; ++b) {
        const auto begin = static_cast<std::size_t>(plan.bin_offsets[b]);
        const auto end = static_cast<std::size_t>(plan.bin_offsets[b + 1]);
        ASSERT_LE(begin, end) << "bin " << b;
        for (std::size_t k = begin; k < end; ++k) {
            const std::int32_t row = plan.binned_rows[k];
            ASSERT_GE(row, 0);
            ASSERT_LT(row, rows);
            ++seen[static_cast<std::size_t>(row)];
            if (k > begin) {
                EXPECT_LT(plan.binned_rows[k - 1], row) << "bin " << b << " unsorted";
            }
            const std::int32_t length = length_of(row_ptr, row);
            if (b == 0) {
                EXPECT_LE(length, plan.short_limit) << "row " << row;
            } else if (b == 1) {
                EXPECT_GT(length, plan.short_limit) << "row " << row;
                EXPECT_LE(length, plan.long_limit) << "row " << row;
            } else {
                EXPECT_GT(length, plan.long_limit) << "row " << row;
            }
        }
    }
    for (std::int32_t i = 0; i < rows; ++i) {
        EXPECT_EQ(seen[static_cast<std::size_t>(i)], 1) << "row " << i;
    }
}

std::int32_t bin_size(const CsrBinPlan& plan, int b) {
    return plan.bin_offsets[b + 1] - plan.bin_offsets[b];
}

TEST(CsrBinning, UnevenRowsAreBinnedOnceWithinTheLimits) {
    // Many short rows (a ninth of them empty) and a few of 7, 40, 300, 5000 and 100000 entries.
    std::mt19937 generator(5);
    std::uniform_int_distribution<std::int32_t> short_length(1, 6);
    std::vector<std::int32_t> lengths(30000);
    for (std::size_t i = 0; i < lengths.size(); ++i) {
        lengths[i] = i % 9 == 0 ? 0 : short_length(generator);
    }
    for (std::size_t k = 0; k < 40; ++k) lengths[100 + 701 * k] = 7;
    for (std::size_t k = 0; k < 40; ++k) lengths[200 + 701 * k] = 40;
    for (std::size_t k = 0; k < 20; ++k) lengths[300 + 1409 * k] = 300;
    lengths[5000] = lengths[17000] = 5000;
    lengths[9000] = lengths[29999] = 100000;
    const auto row_ptr = row_ptr_from_lengths(lengths);
    const CsrBinPlan plan = plan_csr_bins(row_ptr);
    expect_valid_plan(plan, row_ptr);

    // The rule: short_limit = clamp(2 median, 4, 32), long_limit = max(1024, ceil(nnz / 8192)).
    std::vector<std::int32_t> sorted = lengths;
    std::sort(sorted.begin(), sorted.end());
    const std::int32_t median = sorted[sorted.size() / 2];
    EXPECT_EQ(plan.short_limit, std::clamp(2 * median, 4, 32));
    EXPECT_EQ(plan.long_limit, 1024);  // nnz ~ 3e5: the even share per warp is far below 1024
    EXPECT_GT(bin_size(plan, 0), 20000);
    EXPECT_EQ(bin_size(plan, 1), 40 + 20 + (plan.short_limit < 7 ? 40 : 0));
    EXPECT_EQ(bin_size(plan, 2), 4);
}

TEST(CsrBinning, ShortLimitFollowsTheMedianRowLength) {
    auto plan_uniform = [](std::int32_t rows, std::int32_t length) {
        return plan_csr_bins(row_ptr_from_lengths(std::vector<std::int32_t>(rows, length)));
    };
    EXPECT_EQ(plan_uniform(1000, 1).short_limit, 4);   // clamped below
    EXPECT_EQ(plan_uniform(1000, 5).short_limit, 10);  // twice the median
    EXPECT_EQ(plan_uniform(1000, 12).short_limit, 24);
    EXPECT_EQ(plan_uniform(1000, 40).short_limit, 32);  // clamped above: a warp per row is full
    EXPECT_EQ(bin_size(plan_uniform(1000, 40), 1), 1000);

    // A few long rows do not move the median, so short rows stay one thread each.
    std::vector<std::int32_t> lengths(1000, 3);
    for (std::size_t k = 0; k < 10; ++k) lengths[k * 97] = 2000;
    const auto row_ptr = row_ptr_from_lengths(lengths);
    const CsrBinPlan plan = plan_csr_bins(row_ptr);
    expect_valid_plan(plan, row_ptr);
    EXPECT_EQ(plan.short_limit, 6);
    EXPECT_EQ(bin_size(plan, 0), 990);
}

TEST(CsrBinning, LongLimitFollowsTheTotalWork) {
    // 100 rows of 3000 entries: a warp each would leave most of a GPU idle, so a block each.
    const auto few = row_ptr_from_lengths(std::vector<std::int32_t>(100, 3000));
    const CsrBinPlan few_plan = plan_csr_bins(few);
    expect_valid_plan(few_plan, few);
    EXPECT_EQ(few_plan.long_limit, 1024);
    EXPECT_EQ(bin_size(few_plan, 2), 100);

    // 10000 such rows: nnz / 8192 = 3663 > 3000, so the warps are evenly loaded: a warp each.
    const auto many = row_ptr_from_lengths(std::vector<std::int32_t>(10000, 3000));
    const CsrBinPlan many_plan = plan_csr_bins(many);
    expect_valid_plan(many_plan, many);
    EXPECT_EQ(many_plan.long_limit, (10000 * 3000 + 8191) / 8192);
    EXPECT_EQ(bin_size(many_plan, 1), 10000);
    EXPECT_EQ(bin_size(many_plan, 2), 0);
}

TEST(CsrBinning, EmptyMatrixAndInvalidRowPointers) {
    const std::vector<std::int32_t> empty{0};
    const CsrBinPlan plan = plan_csr_bins(empty);
    EXPECT_TRUE(plan.binned_rows.empty());
    for (int b = 0; b < 4; ++b) EXPECT_EQ(plan.bin_offsets[b], 0);

    EXPECT_THROW(plan_csr_bins(std::vector<std::int32_t>{}), std::invalid_argument);
    EXPECT_THROW(plan_csr_bins(std::vector<std::int32_t>{0, 5, 3}), std::invalid_argument);
}

}  // namespace
}  // namespace simrun::solvers

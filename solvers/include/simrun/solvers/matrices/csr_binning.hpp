#pragma once
// Groups the rows of a CSR matrix by length for the GPU SpMV (seed 003's row binning): short
// rows get one thread each, medium rows one warp, long rows one block. The limits are derived
// from the matrix's row lengths (csr_binning.cpp states the rule), not fixed.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace simrun::solvers {

struct CsrBinPlan {
    std::int32_t short_limit = 0;           // rows with length <= short_limit: one thread per row
    std::int32_t long_limit = 0;            // rows with length > long_limit: one block per row
    std::vector<std::int32_t> binned_rows;  // every row once, bin by bin, ascending within a bin
    std::array<std::int32_t, 4> bin_offsets{0, 0, 0, 0};  // bin b: [offsets[b], offsets[b+1])
};

// row_ptr has rows + 1 entries.
CsrBinPlan plan_csr_bins(std::span<const std::int32_t> row_ptr);

}  // namespace simrun::solvers

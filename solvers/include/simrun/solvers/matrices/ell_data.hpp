#pragma once
// EllData<T>: ELLPACK-R (seed 000) in host memory: every row padded to `width` entries, stored
// column-major so that thread i reads entry k of row i at k * rows + i (coalesced), plus the
// true length of each row so padding is skipped. Padding entries have column 0 and value 0.
#include <cstdint>
#include <vector>

namespace simrun::solvers {

template <typename T>
struct EllData {
    std::int32_t rows = 0;
    std::int32_t cols = 0;
    std::int32_t width = 0;                // the longest row
    std::vector<std::int32_t> col;         // width * rows, column-major
    std::vector<T> values;                 // width * rows, column-major
    std::vector<std::int32_t> row_length;  // rows

    std::size_t slot(std::int32_t k, std::int32_t row) const {
        return static_cast<std::size_t>(k) * static_cast<std::size_t>(rows) +
               static_cast<std::size_t>(row);
    }
};

}  // namespace simrun::solvers

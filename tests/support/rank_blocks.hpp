#pragma once
// A matrix split in blocks of rows for ranks (distributed_matrix.hpp's blocks), as the tests
// of what runs over ranks give it to each rank.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "simrun/solvers/matrices/dia_data.hpp"

namespace simrun::testing {

// Rows [first, first + rows) of `a` in the block's numbering, entries beyond it kept.
inline solvers::DiaData<double> block_of(const solvers::DiaData<double>& a, std::int64_t first,
                                         std::int64_t rows) {
    solvers::DiaData<double> block{rows, a.offsets, std::vector<double>(a.offsets.size() * rows)};
    for (int d = 0; d < a.num_diagonals(); ++d) {
        std::copy_n(a.values.begin() + d * a.n + first, rows, block.values.begin() + d * rows);
    }
    return block;
}

// The first row of each of `ranks` blocks of n rows in units of `unit` rows (a grid's planes),
// the first (n / unit) mod ranks blocks one unit longer; the last entry is n.
inline std::vector<std::int64_t> block_starts(std::int64_t n, int ranks, std::int64_t unit = 1) {
    const std::int64_t units = n / unit;
    std::vector<std::int64_t> first{0};
    for (int r = 0; r < ranks; ++r) {
        first.push_back(first.back() + (units / ranks + (r < units % ranks)) * unit);
    }
    return first;
}

}  // namespace simrun::testing

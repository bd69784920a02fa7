#pragma once
// CooData<T>: a sparse matrix as (row, column, value) triplets in host memory: the interchange
// form Matrix Market files are read into. Triplets may come in any order and may repeat (a
// repeated position means the sum, as in Matrix Market).
#include <cstdint>
#include <vector>

namespace simrun::solvers {

template <typename T>
struct CooData {
    std::int32_t rows = 0;
    std::int32_t cols = 0;
    std::vector<std::int32_t> row;
    std::vector<std::int32_t> col;
    std::vector<T> values;

    std::int64_t nnz() const { return static_cast<std::int64_t>(values.size()); }
};

}  // namespace simrun::solvers

#pragma once
// CsrData<T>: a sparse matrix in compressed sparse row form in host memory, the hub of the
// format conversions (conversions.hpp). Row i's entries are col[row_ptr[i] .. row_ptr[i+1])
// with their values; columns are sorted within a row and distinct. 32-bit indices: at most
// 2^31 - 1 rows and nonzeros.
#include <cstdint>
#include <vector>

namespace simrun::solvers {

// The largest row or nonzero count of the 32-bit indexed forms (CSR, ELL, COO).
inline constexpr std::int64_t max_csr_index = 2147483647;  // 2^31 - 1

template <typename T>
struct CsrData {
    std::int32_t rows = 0;
    std::int32_t cols = 0;
    std::vector<std::int32_t> row_ptr{0};  // rows + 1 entries
    std::vector<std::int32_t> col;
    std::vector<T> values;

    std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
    std::int32_t row_length(std::int32_t row) const { return row_ptr[row + 1] - row_ptr[row]; }
};

}  // namespace simrun::solvers

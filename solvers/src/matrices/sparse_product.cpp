// Gustavson's row-by-row product: row i of C is sum_k a_ik (row k of B), gathered in a dense
// accumulator with a marker per column. Two passes (count, then fill) on the OpenMP threads,
// each with its own accumulator, so C is built in place without per-row allocations.
#include "simrun/solvers/matrices/sparse_product.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "simrun/solvers/base/errors.hpp"
#include "simrun/solvers/matrices/conversions.hpp"

namespace simrun::solvers {
namespace {

// One thread's accumulator: marker[j] == row while column j has an entry in the current row.
template <typename T>
struct RowAccumulator {
    std::vector<std::int64_t> marker;
    std::vector<T> sum;
    std::vector<std::int32_t> columns;
    explicit RowAccumulator(std::int32_t cols) : marker(static_cast<std::size_t>(cols), -1) {}

    // Collects row i of A B in `columns` (unsorted) and, when `values`, in `sum`.
    void gather(const CsrData<T>& a, const CsrData<T>& b, std::int32_t i, bool values) {
        if (values && sum.empty()) sum.assign(marker.size(), T(0));
        columns.clear();
        for (std::int32_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            const T a_ik = a.values[p];
            const std::int32_t k = a.col[p];
            for (std::int32_t q = b.row_ptr[k]; q < b.row_ptr[k + 1]; ++q) {
                const std::int32_t j = b.col[q];
                if (marker[j] != i) {
                    marker[j] = i;
                    columns.push_back(j);
                    if (values) sum[j] = T(0);
                }
                if (values) sum[j] += a_ik * b.values[q];
            }
        }
    }
};

}  // namespace

template <typename T>
CsrData<T> multiply(const CsrData<T>& a, const CsrData<T>& b) {
    if (a.cols != b.rows) {
        throw DimensionMismatch("multiply: A is " + std::to_string(a.rows) + " x " +
                                std::to_string(a.cols) + " but B is " + std::to_string(b.rows) +
                                " x " + std::to_string(b.cols));
    }
    CsrData<T> c;
    c.rows = a.rows;
    c.cols = b.cols;
    std::vector<std::int64_t> counts(static_cast<std::size_t>(a.rows) + 1, 0);
#pragma omp parallel
    {
        RowAccumulator<T> row(b.cols);
#pragma omp for schedule(static)
        for (std::int32_t i = 0; i < a.rows; ++i) {
            row.gather(a, b, i, false);
            counts[static_cast<std::size_t>(i) + 1] = static_cast<std::int64_t>(row.columns.size());
        }
    }
    for (std::size_t i = 1; i < counts.size(); ++i) counts[i] += counts[i - 1];
    if (counts.back() > max_csr_index) {
        throw std::invalid_argument("multiply: the product has " + std::to_string(counts.back()) +
                                    " nonzeros, over the 32-bit index limit");
    }
    c.row_ptr.assign(counts.begin(), counts.end());
    c.col.resize(static_cast<std::size_t>(counts.back()));
    c.values.resize(static_cast<std::size_t>(counts.back()));
#pragma omp parallel
    {
        RowAccumulator<T> row(b.cols);
#pragma omp for schedule(static)
        for (std::int32_t i = 0; i < a.rows; ++i) {
            row.gather(a, b, i, true);
            std::sort(row.columns.begin(), row.columns.end());
            std::int32_t slot = c.row_ptr[i];
            for (const std::int32_t j : row.columns) {
                c.col[slot] = j;
                c.values[slot] = row.sum[j];
                ++slot;
            }
        }
    }
    return c;
}

template <typename T>
CsrData<T> galerkin_product(const CsrData<T>& a, const CsrData<T>& p) {
    return multiply(transpose(p), multiply(a, p));
}

template CsrData<float> multiply(const CsrData<float>&, const CsrData<float>&);
template CsrData<double> multiply(const CsrData<double>&, const CsrData<double>&);
template CsrData<float> galerkin_product(const CsrData<float>&, const CsrData<float>&);
template CsrData<double> galerkin_product(const CsrData<double>&, const CsrData<double>&);

}  // namespace simrun::solvers

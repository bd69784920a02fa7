#pragma once
// Conversions between the host formats, through CSR. Every function checks its input and
// throws std::invalid_argument with a message saying what is wrong (index out of range, sizes
// that do not match, a matrix that does not fit the target format's limits).
#include <cstdint>
#include <span>

#include "simrun/solvers/matrices/coo_data.hpp"
#include "simrun/solvers/matrices/csr_data.hpp"
#include "simrun/solvers/matrices/dense_data.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/matrices/ell_data.hpp"

namespace simrun::solvers {

// Sorts the triplets by (row, column) and sums repeated positions. Explicit zeros are kept
// (they are part of the pattern).
template <typename T>
CsrData<T> to_csr(const CooData<T>& coo);
// Diagonals, skipping entries outside the matrix and (optionally) explicit zeros.
template <typename T>
CsrData<T> to_csr(const DiaData<T>& dia, bool drop_zeros = true);
template <typename T>
CsrData<T> to_csr(const EllData<T>& ell);
// Drops exact zeros.
template <typename T>
CsrData<T> to_csr(const DenseData<T>& dense);

template <typename T>
CooData<T> to_coo(const CsrData<T>& csr);
template <typename T>
EllData<T> to_ell(const CsrData<T>& csr);
// How to_dia stores an entry equal to zero: as it is (-0 stays -0), or as +0, as stencil storage
// gives it back (DiaMatrix::host_data), so that a hierarchy made from either form is the same.
enum class DiaZeros { as_given, positive };
// Square matrices only. Throws when the matrix has more than max_diagonals distinct diagonals.
// Slots without an entry are +0.
template <typename T>
DiaData<T> to_dia(const CsrData<T>& csr, int max_diagonals = 64,
                  DiaZeros zeros = DiaZeros::as_given);
// The most entries (rows x cols) a dense matrix is made with: 2^24, 128 MB in double.
inline constexpr std::int64_t dense_max_entries = std::int64_t{1} << 24;
// Throws when rows * cols exceeds max_entries.
template <typename T>
DenseData<T> to_dense(const CsrData<T>& csr, std::int64_t max_entries = dense_max_entries);

template <typename T>
CsrData<T> transpose(const CsrData<T>& csr);
// A^T in DIA: offset o becomes -o, A^T(i, i - o) = A(i - o, i).
template <typename T>
DiaData<T> transpose(const DiaData<T>& dia);

// Throws std::invalid_argument, starting with `function`, when the DIA arrays are inconsistent
// (negative size, values.size() != offsets.size() * n, offsets not sorted and distinct) or n
// exceeds the 32-bit row index limit of the analysis and the CSR form.
template <typename T>
void check_dia(const char* function, const DiaData<T>& dia);

// The number of slots (i, i + offset) of a DIA pattern inside an n x n matrix: the sum over
// the diagonals of n - |offset| (none for |offset| >= n), in 64 bits. An upper bound on the
// nonzeros of the CSR form, known before anything is allocated.
std::int64_t dia_slots(std::int64_t n, std::span<const int> offsets);
// The number of distinct diagonals (column - row) holding entries.
template <typename T>
int count_diagonals(const CsrData<T>& csr);

// Converts the value type (e.g. double data to a float solve).
template <typename To, typename From>
CsrData<To> convert_values(const CsrData<From>& csr);

}  // namespace simrun::solvers

#pragma once
// Views of a matrix in a back-end's memory: plain sizes and pointers, passed by value to the
// kernels (on the GPU as kernel parameters). The matrix classes own the memory and hand these
// out; a view is valid while its matrix lives.
#include <cstddef>
#include <cstdint>
#include <variant>

namespace simrun::solvers {

// DIA: values[d * n + i] = A(i, i + offsets[d]); columns outside [0, n) are ignored.
// Constant-coefficient storage (a stencil, values null): A(i, i + offsets[d]) = constants[d]
// where bit d of row_masks[i] is set, else 0 (bits are clear for columns outside [0, n)), so
// the matrix costs one byte per row instead of num_diagonals values. A row whose mask also has
// the bit stencil_unit_row is an identity row (its one entry, on the main diagonal, is 1: a
// grid's Dirichlet node), which keeps a grid operator with Dirichlet sides in this storage;
// the bit means that only in stencils of at most 7 diagonals (with 8 it is diagonal 7's). The
// offsets and constants travel in the view itself (kernel parameters: no memory load before the
// gathers). Row-class storage (values and row_masks null): row i is class row_classes[i], whose
// entry on diagonal d is class_values[row_classes[i] * num_diagonals + d] (zero for columns outside
// [0, n)): a matrix with few kinds of rows, as a constant-coefficient Galerkin operator has
// (inner rows, sides, corners), costs a byte per row and a small table.
inline constexpr int max_dia_diagonals = 64;
inline constexpr int max_stencil_diagonals = 8;
inline constexpr unsigned stencil_unit_row = 0x80u;

template <typename T>
struct DiaView {
    std::int64_t n;
    int num_diagonals;
    int offsets[max_dia_diagonals];
    const T* values;                          // general storage
    const std::uint8_t* row_masks = nullptr;  // stencil storage
    T constants[max_stencil_diagonals] = {};
    const std::uint8_t* row_classes = nullptr;  // row-class storage
    const T* class_values = nullptr;
};

// Rows of a CSR matrix grouped by length for the GPU (seed 003): binned_rows lists every row,
// those of bin b at [bin_offsets[b], bin_offsets[b + 1]). Bin 0 rows are short (one thread per
// row), bin 1 medium (one warp per row), bin 2 long (one block per row). The CPU ignores it.
struct CsrBinsView {
    const std::int32_t* binned_rows = nullptr;
    std::int32_t bin_offsets[4] = {0, 0, 0, 0};
};

// CSR, square or not: row i's entries are [row_ptr[i], row_ptr[i + 1]).
template <typename T>
struct CsrView {
    std::int32_t rows;
    std::int32_t cols;
    const std::int32_t* row_ptr;
    const std::int32_t* col;
    const T* values;
    CsrBinsView bins;
};

// ELLPACK-R: entry k of row i at k * rows + i; row i has row_length[i] entries.
template <typename T>
struct EllView {
    std::int32_t rows;
    std::int32_t width;
    const std::int32_t* col;
    const T* values;
    const std::int32_t* row_length;
};

// COO sorted by row (then column). workspace holds coo_workspace_bytes(rows, nnz) bytes.
template <typename T>
struct CooView {
    std::int32_t rows;
    std::int64_t nnz;
    const std::int32_t* row;
    const std::int32_t* col;
    const T* values;
    void* workspace;
    std::size_t workspace_bytes;
};

// Dense, row-major.
template <typename T>
struct DenseView {
    std::int32_t rows;
    std::int32_t cols;
    const T* values;
};

// A matrix in a format whose rows a fused kernel can compute one by one (one thread per row on
// the GPU): what fused methods take instead of a LinearOperator.
template <typename T>
using RowMatrixView = std::variant<DiaView<T>, EllView<T>, CsrView<T>>;

// Multicolour SOR sweeps (preconditioners/multicolour.hpp) as the kernels take them: the rows
// colour by colour (position r holds row rows[r]; colour c the positions [offsets[c],
// offsets[c + 1]), no two of its rows coupled), each position's off-diagonal entries at
// [row_ptr[r], row_ptr[r + 1]) of col and values (stored in that order, so that a colour's
// entries lie together and a position's bounds sit beside the next one's), each row's diagonal
// entry (with the off-diagonal ones: the whole matrix) and its inverse, and the weight omega.
// All in the back-end's memory.
template <typename T>
struct MulticolourSweepsView {
    std::int32_t n;    // rows
    std::int64_t nnz;  // off-diagonal entries
    const std::int32_t* rows;
    const std::int32_t* row_ptr;
    const std::int32_t* col;
    const T* values;
    const std::int32_t* offsets;
    int colours;
    const T* diag;
    const T* inv_diag;
    T omega;
};

}  // namespace simrun::solvers

#pragma once
// The kernels every back-end provides, declared once. Each back-end fills one table per value
// type; algorithms call them through Backend::kernels<T>() and never branch on the back-end.
// Pointers are to memory of the back-end that owns the table. Sizes are element counts. The
// traffic comment of each kernel is the minimum it must move; implementations state theirs.
#include <cstddef>
#include <cstdint>
#include <variant>

#include "simrun/solvers/base/bicgstab_device_state.hpp"
#include "simrun/solvers/base/cg_device_state.hpp"
#include "simrun/solvers/base/jacobi_device_state.hpp"

namespace simrun::solvers {

class Backend;

// DIA: values[d * n + i] = A(i, i + offsets[d]); columns outside [0, n) are ignored.
// Constant-coefficient storage (a stencil, values null): A(i, i + offsets[d]) = constants[d]
// where bit d of row_masks[i] is set, else 0 (bits are clear for columns outside [0, n)), so
// the matrix costs one byte per row instead of num_diagonals values. The offsets and constants
// travel in the view itself (kernel parameters: no memory load before the gathers).
inline constexpr int max_dia_diagonals = 64;
inline constexpr int max_stencil_diagonals = 8;

template <typename T>
struct DiaView {
    std::int64_t n;
    int num_diagonals;
    int offsets[max_dia_diagonals];
    const T* values;                          // general storage
    const std::uint8_t* row_masks = nullptr;  // stencil storage
    T constants[max_stencil_diagonals] = {};
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

template <typename T>
struct KernelTable {
    // ---- element-wise (written once for both back-ends) ----
    // x = value. Traffic: n writes.
    void (*fill)(const Backend&, std::size_t n, T value, T* x);
    // y = y + alpha x. Traffic: 2n reads, n writes.
    void (*axpy)(const Backend&, std::size_t n, T alpha, const T* x, T* y);
    // y = x + beta y. Traffic: 2n reads, n writes.
    void (*xpby)(const Backend&, std::size_t n, const T* x, T beta, T* y);
    // z = x .* y. Traffic: 2n reads, n writes.
    void (*multiply)(const Backend&, std::size_t n, const T* x, const T* y, T* z);
    // x = x + alpha d .* r (weighted Jacobi update). Traffic: 3n reads, n writes.
    void (*scaled_axpy)(const Backend&, std::size_t n, T alpha, const T* d, const T* r, T* x);
    // CG step 1: p = z + beta p. Traffic: 2n reads, n writes.
    void (*cg_step_1)(const Backend&, std::size_t n, T beta, const T* z, T* p);
    // CG step 2: x = x + alpha p, r = r - alpha q. Traffic: 4n reads, 2n writes.
    void (*cg_step_2)(const Backend&, std::size_t n, T alpha, const T* p, const T* q, T* x, T* r);
    // BiCGStab: p = r + beta (p - omega v). Traffic: 3n reads, n writes.
    void (*bicgstab_p)(const Backend&, std::size_t n, T beta, T omega, const T* r, const T* v,
                       T* p);
    // BiCGStab: x = x + alpha p_hat + omega s_hat; r = s - omega t. Traffic: 5n reads, 2n writes.
    void (*bicgstab_update)(const Backend&, std::size_t n, T alpha, T omega, const T* p_hat,
                            const T* s_hat, const T* s, const T* t, T* x, T* r);

    // ---- reductions (deterministic: the same inputs give the same bits every run) ----
    // x . y returned to the host. Traffic: 2n reads.
    T (*dot)(const Backend&, std::size_t n, const T* x, const T* y);
    // x . y with compensated (Neumaier) summation. Traffic: 2n reads.
    T (*dot_compensated)(const Backend&, std::size_t n, const T* x, const T* y);

    // ---- sparse matrix-vector products y = A x ----
    // Traffic: num_diagonals * n values + x (~n, cached) + n writes.
    void (*dia_spmv)(const Backend&, const DiaView<T>& a, const T* x, T* y);
    // Traffic: nnz (values + columns) + rows + 1 pointers + x (gathered) + rows writes.
    void (*csr_spmv)(const Backend&, const CsrView<T>& a, const T* x, T* y);
    // Traffic: width * rows (values + columns, padding skipped per row) + lengths + x + writes.
    void (*ell_spmv)(const Backend&, const EllView<T>& a, const T* x, T* y);
    // Traffic: nnz (row, column, value) + x (gathered) + rows writes.
    void (*coo_spmv)(const Backend&, const CooView<T>& a, const T* x, T* y);
    // Bytes of scratch memory coo_spmv needs for a matrix of this shape.
    std::size_t (*coo_workspace_bytes)(std::int32_t rows, std::int64_t nnz);
    // Traffic: rows * cols values + x + rows writes.
    void (*dense_spmv)(const Backend&, const DenseView<T>& a, const T* x, T* y);

    // ---- CG with its scalars on the back-end (cg_device_state.hpp) ----
    // `count` iterations, each reading the scalars the previous one left; nothing happens once
    // s->phase is not running, so a batch of iterations is issued without waiting for the host.
    // An iteration is two steps:
    // - direction and product: p' = z + beta p (z = factors .* r; p' = z on iteration 0),
    //   q = A p', then alpha = rho / p'q (or a breakdown). Traffic, DIA: D n values + 2n reads
    //   (r, p; plus n factors) + 2n writes (p', q), neighbours' r and p through the cache;
    // - update: x += alpha p', r -= alpha q, then ||r|| recorded and checked, rho' = r'z,
    //   beta = rho' / rho. Traffic: 4n reads (x, r, p', q; plus n factors), 2n writes.
    void (*cg_iterations)(const Backend&, const RowMatrixView<T>& a, const CgVectors<T>& v,
                          CgScalars<T>* s, std::int64_t count);

    // ---- BiCGStab with its scalars on the back-end (bicgstab_device_state.hpp) ----
    // `count` iterations, as cg_iterations. An iteration is three steps
    // (unified/bicgstab_kernels.inc.hpp): p' = r + beta (p - omega v), v' = A M p', r0'v';
    // s = r - alpha v', t = A M s, t't, t's, s's; x += alpha M p' + omega M s,
    // r = s - omega t, r'r, r0'r. Traffic, DIA with M = I: 2 D n values + 17 n vector values.
    void (*bicgstab_iterations)(const Backend&, const RowMatrixView<T>& a,
                                const BiCgStabVectors<T>& v, BiCgStabScalars<T>* s,
                                std::int64_t count);

    // ---- weighted Jacobi with its scalars on the back-end (jacobi_device_state.hpp) ----
    // `count` iterations, as cg_iterations; an iteration is one step: r = b - A x_k,
    // x_{k+1} = x_k + omega D^-1 r, ||r||^2. Traffic, DIA: D n values + 4n vector values.
    void (*jacobi_iterations)(const Backend&, const RowMatrixView<T>& a, const JacobiVectors<T>& v,
                              JacobiScalars<T>* s, std::int64_t count);

    // ---- multicolour Gauss-Seidel / SOR ----
    // One SOR update of the `count` rows listed in `rows` (one colour: no two are coupled):
    // x_i = (1 - omega) x_i + omega inv_diag_i (b_i - sum_{j != i} a_ij x_j).
    // Traffic: the rows' entries + their b, inv_diag, x + gathered x.
    void (*sor_colour_sweep)(const Backend&, const CsrView<T>& a, const std::int32_t* rows,
                             std::int32_t count, const T* inv_diag, T omega, const T* b, T* x);
};

}  // namespace simrun::solvers

#pragma once
// The CUDA back-end's sparse kernels, compensated dot product and classification (their .cu files,
// where they are instantiated for float and double), declared here for the kernel table that
// cuda_kernels.cu fills. Their contracts are those of KernelTable (kernel_table.hpp); every sum
// runs in an order fixed by the sizes alone, so each result is the same bits on every run.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/kernel_table.hpp"
#include "simrun/solvers/base/backend.hpp"

namespace simrun::solvers::cuda {

// x . y by per-thread Neumaier sums combined with TwoSum; returned to the host (synchronises).
template <typename T>
T dot_compensated(const Backend& backend, std::size_t n, const T* x, const T* y);

// y = A x over the bins of a.bins (thread, warp or block per row), side by side on forked
// streams when more than one bin has rows. Without bins (binned_rows null) one warp per row.
// Throws DimensionMismatch when bin_offsets do not run from 0 to rows.
template <typename T>
void csr_spmv(const Backend& backend, const CsrView<T>& a, const T* x, T* y);

template <typename T>
void ell_spmv(const Backend& backend, const EllView<T>& a, const T* x, T* y);

// Rows sorted; a.workspace must hold coo_workspace_bytes<T>(a.rows, a.nnz) bytes (throws
// DimensionMismatch when a.workspace_bytes is smaller).
template <typename T>
void coo_spmv(const Backend& backend, const CooView<T>& a, const T* x, T* y);

template <typename T>
std::size_t coo_workspace_bytes(std::int32_t rows, std::int64_t nnz);

template <typename T>
void dense_spmv(const Backend& backend, const DenseView<T>& a, const T* x, T* y);

// Points classified by their sets of values (cuda_value_classes.cu): hashed, sorted and made
// unique, each point checked against its class.
template <typename T>
bool classify_points(const Backend& backend, const T* values, std::int64_t points, int slots,
                     std::uint8_t* of_point, std::vector<T>& table);

template <typename T>
void sor_colour_sweep(const Backend& backend, const MulticolourSweepsView<T>& m, std::int32_t begin,
                      std::int32_t end, const T* b, T* x);

template <typename T>
void sor_sweeps(const Backend& backend, const MulticolourSweepsView<T>& m,
                const std::int32_t* offsets, SweepOrder order, const T* b, T* x);

// Up to sor_block_rows rows in one block of threads.
template <typename T>
bool fuses_cg_sweeps(std::int64_t n);

// Throws DimensionMismatch above sor_block_rows rows.
template <typename T>
void cg_sweep_iterations(const Backend& backend, const RowMatrixView<T>& a,
                         const CgSweepVectors<T>& v, CgScalars<T>* s, std::int64_t count);

}  // namespace simrun::solvers::cuda

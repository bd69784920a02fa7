// The CUDA back-end's ELL product (cuda_sparse_kernels.cuh): one thread per row.
#include <cstddef>
#include <cstdint>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "cuda_sparse_kernels.cuh"
#include "cuda_sparse_launch.cuh"

namespace simrun::solvers::cuda {
namespace {

// ELL: one thread per row; entry k of all rows is contiguous, so each step is coalesced.
// Traffic: the stored entries (value + column, padding skipped per row) + row lengths + x
// gathered + one write per row.
template <typename T>
__global__ void __launch_bounds__(row_block)
    ell_kernel(std::int32_t rows, const std::int32_t* __restrict__ col,
               const T* __restrict__ values, const std::int32_t* __restrict__ row_length,
               const T* __restrict__ x, T* __restrict__ y) {
    const std::int64_t i = blockIdx.x * std::int64_t(row_block) + threadIdx.x;
    if (i >= rows) return;
    const std::int32_t length = row_length[i];
    T sum = 0;
    std::size_t slot = static_cast<std::size_t>(i);
    for (std::int32_t k = 0; k < length; ++k, slot += static_cast<std::size_t>(rows)) {
        sum += values[slot] * __ldg(x + col[slot]);
    }
    y[i] = sum;
}

}  // namespace

template <typename T>
void ell_spmv(const Backend& backend, const EllView<T>& a, const T* x, T* y) {
    if (a.rows <= 0) return;
    ell_kernel<T><<<blocks_for(a.rows, row_block), row_block, 0, as_cuda(backend).stream()>>>(
        a.rows, a.col, a.values, a.row_length, x, y);
    SIMRUN_CUDA_CHECK_LAUNCH(ell_kernel);
}

template void ell_spmv<float>(const Backend&, const EllView<float>&, const float*, float*);
template void ell_spmv<double>(const Backend&, const EllView<double>&, const double*, double*);

}  // namespace simrun::solvers::cuda

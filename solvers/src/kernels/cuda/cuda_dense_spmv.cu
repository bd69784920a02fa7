// The CUDA back-end's dense product (cuda_sparse_kernels.cuh): one warp per row.
#include <cstddef>
#include <cstdint>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "cuda_sparse_kernels.cuh"
#include "cuda_sparse_launch.cuh"

namespace simrun::solvers::cuda {
namespace {

// Dense, row-major: one warp per row, lanes over the columns (coalesced), shuffle reduction.
// Traffic: rows * cols values + x (cols, re-read from cache by every row) + one write per row.
template <typename T>
__global__ void __launch_bounds__(row_block)
    dense_warp_per_row_kernel(std::int32_t rows, std::int32_t cols, const T* __restrict__ values,
                              const T* __restrict__ x, T* __restrict__ y) {
    const std::int64_t i = (blockIdx.x * std::int64_t(row_block) + threadIdx.x) / warp_size;
    if (i >= rows) return;
    const int lane = static_cast<int>(threadIdx.x % warp_size);
    const T* __restrict__ a = values + static_cast<std::size_t>(i) * static_cast<std::size_t>(cols);
    T sum = 0;
#pragma unroll 4
    for (std::int32_t j = lane; j < cols; j += warp_size) sum += a[j] * __ldg(x + j);
    sum = warp_sum(sum);
    if (lane == 0) y[i] = sum;
}

}  // namespace

template <typename T>
void dense_spmv(const Backend& backend, const DenseView<T>& a, const T* x, T* y) {
    if (a.rows <= 0) return;
    const cudaStream_t stream = as_cuda(backend).stream();
    if (a.cols <= 0) {
        SIMRUN_CUDA_CHECK(
            cudaMemsetAsync(y, 0, static_cast<std::size_t>(a.rows) * sizeof(T), stream));
        return;
    }
    dense_warp_per_row_kernel<T>
        <<<blocks_for(std::int64_t{a.rows} * warp_size, row_block), row_block, 0, stream>>>(
            a.rows, a.cols, a.values, x, y);
    SIMRUN_CUDA_CHECK_LAUNCH(dense_warp_per_row_kernel);
}

template void dense_spmv<float>(const Backend&, const DenseView<float>&, const float*, float*);
template void dense_spmv<double>(const Backend&, const DenseView<double>&, const double*, double*);

}  // namespace simrun::solvers::cuda

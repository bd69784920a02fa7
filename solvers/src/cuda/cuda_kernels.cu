// The CUDA back-end's kernels: element-wise ones from the unified source, plus the DIA SpMV and
// the deterministic dot product specialised here.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cub/block/block_reduce.cuh>

#include "cuda/cuda_backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/cuda_sparse_kernels.cuh"
#include "simrun/solvers/host_device.hpp"

namespace simrun::solvers::cuda {
namespace {

constexpr int block_size = 256;

template <typename F>
__global__ void for_each_kernel(std::size_t n, F f) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x) {
        f(i);
    }
}

unsigned grid_for(std::size_t n, std::size_t limit = 65535u * 8u) {
    return static_cast<unsigned>(std::min<std::size_t>((n + block_size - 1) / block_size, limit));
}

template <typename F>
void parallel_for(const Backend& backend, std::size_t n, F f) {
    if (n == 0) return;
    for_each_kernel<<<grid_for(n), block_size, 0, as_cuda(backend).stream()>>>(n, f);
    SIMRUN_CUDA_CHECK_LAUNCH(for_each_kernel);
}

#include "unified/elementwise_kernels.inc.hpp"

// First pass of x . y: each block sums a fixed, grid-strided subset in a fixed order and
// reduces it with CUB's (deterministic) block reduction. Traffic: 2n reads.
template <typename T>
__global__ void dot_partials_kernel(std::size_t n, const T* __restrict__ x, const T* __restrict__ y,
                                    T* __restrict__ partials) {
    using BlockReduce = cub::BlockReduce<T, block_size>;
    __shared__ typename BlockReduce::TempStorage storage;
    T sum = 0;
    for (std::size_t i = blockIdx.x * std::size_t(block_size) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * block_size) {
        sum += x[i] * y[i];
    }
    const T total = BlockReduce(storage).Sum(sum);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// Second pass: one block adds the partial sums in a fixed order.
template <typename T>
__global__ void sum_partials_kernel(int count, const T* __restrict__ partials,
                                    T* __restrict__ out) {
    using BlockReduce = cub::BlockReduce<T, block_size>;
    __shared__ typename BlockReduce::TempStorage storage;
    T sum = 0;
    for (int i = threadIdx.x; i < count; i += block_size) sum += partials[i];
    const T total = BlockReduce(storage).Sum(sum);
    if (threadIdx.x == 0) *out = total;
}

// The grid depends on n only, so the summation order (and the bits) are the same every run.
template <typename T>
T dot(const Backend& backend, std::size_t n, const T* x, const T* y) {
    const CudaBackend& cuda = as_cuda(backend);
    T* partials = static_cast<T*>(cuda.reduction_scratch());
    T* result = partials + max_reduction_blocks;
    const int blocks = static_cast<int>(grid_for(n, max_reduction_blocks));
    if (n == 0) return T(0);
    dot_partials_kernel<T><<<blocks, block_size, 0, cuda.stream()>>>(n, x, y, partials);
    SIMRUN_CUDA_CHECK_LAUNCH(dot_partials_kernel);
    sum_partials_kernel<T><<<1, block_size, 0, cuda.stream()>>>(blocks, partials, result);
    SIMRUN_CUDA_CHECK_LAUNCH(sum_partials_kernel);
    return *static_cast<const T*>(cuda.fetch_result(result, sizeof(T)));
}

// y = A x, one thread per row; values are diagonal-major so each diagonal's read is coalesced.
// Traffic: num_diagonals * n values + x (~n through L1/L2) + n writes.
template <typename T>
__global__ void dia_spmv_kernel(std::int64_t n, int num_diagonals, const int* __restrict__ offsets,
                                const T* __restrict__ values, const T* __restrict__ x,
                                T* __restrict__ y) {
    const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    T sum = 0;
    for (int d = 0; d < num_diagonals; ++d) {
        const std::int64_t j = i + offsets[d];
        if (j >= 0 && j < n) sum += values[d * n + i] * x[j];
    }
    y[i] = sum;
}

template <typename T>
void dia_spmv(const Backend& backend, const DiaView<T>& a, const T* x, T* y) {
    if (a.n == 0) return;
    const auto blocks = static_cast<unsigned>((a.n + block_size - 1) / block_size);
    dia_spmv_kernel<T><<<blocks, block_size, 0, as_cuda(backend).stream()>>>(
        a.n, a.num_diagonals, a.offsets, a.values, x, y);
    SIMRUN_CUDA_CHECK_LAUNCH(dia_spmv_kernel);
}

}  // namespace

#include "unified/kernel_table.inc.hpp"

}  // namespace simrun::solvers::cuda

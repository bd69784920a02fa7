// The CUDA back-end's kernels: element-wise and fused CG ones from the unified source, plus the
// DIA SpMV and the deterministic dot product specialised here.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cub/block/block_reduce.cuh>

#include "cuda/cuda_backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/cuda_sparse_kernels.cuh"
#include "simrun/solvers/host_device.hpp"
#include "unified/device_math.hpp"
#include "unified/row_products.hpp"

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
// Traffic: num_diagonals * n values (or n mask bytes) + x (~n through L1/L2) + n writes.
template <typename T, typename View>
__global__ void __launch_bounds__(block_size)
    dia_spmv_kernel(std::int64_t n, View a, const T* __restrict__ x, T* __restrict__ y) {
    const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = row_product(a, i, VectorEntries<T>{x});
}

template <typename T>
void dia_spmv(const Backend& backend, const DiaView<T>& a, const T* x, T* y) {
    if (a.n == 0) return;
    const auto blocks = static_cast<unsigned>((a.n + block_size - 1) / block_size);
    with_diagonal_count(a, [&](const auto& view) {
        dia_spmv_kernel<T><<<blocks, block_size, 0, as_cuda(backend).stream()>>>(a.n, view, x, y);
        SIMRUN_CUDA_CHECK_LAUNCH(dia_spmv_kernel);
    });
}

// The fused kernels' loop (unified/cg_kernels.inc.hpp) in one launch: a grid fixed by n
// strides over the rows; each block reduces its sums with CUB and stores them; the last block
// to finish (a ticket taken after a fence) adds the blocks' sums in block order, runs finish
// and resets the ticket. No host round trip, and the same bits every run.
template <typename T, int Sums, typename Setup, typename Row, typename Finish>
__global__ void __launch_bounds__(block_size)
    fused_reduce_kernel(std::int64_t n, const CgPhase* phase, T* partials, unsigned* ticket,
                        Setup setup, Row row, Finish finish) {
    // The scalars the setup reads and the phase are loaded together (one round trip); the
    // phase is the same for every block of this launch.
    const auto context = setup();
    if (*phase != CgPhase::running) return;
    using BlockReduce = cub::BlockReduce<T, block_size>;
    __shared__ typename BlockReduce::TempStorage storage;
    __shared__ bool last_block;
    {
        T sums[Sums] = {};
        for (std::int64_t i = blockIdx.x * std::int64_t(block_size) + threadIdx.x; i < n;
             i += std::int64_t(gridDim.x) * block_size) {
            row(i, context, sums);
        }
        for (int k = 0; k < Sums; ++k) {
            const T total = BlockReduce(storage).Sum(sums[k]);
            if (threadIdx.x == 0) partials[k * gridDim.x + blockIdx.x] = total;
            __syncthreads();
        }
    }
    if (threadIdx.x == 0) {
        __threadfence();  // this block's sums are visible before its ticket is
        last_block = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last_block) return;
    __threadfence();
    T totals[Sums];
    for (int k = 0; k < Sums; ++k) {
        T sum = 0;
        for (unsigned b = threadIdx.x; b < gridDim.x; b += block_size) {
            sum += __ldcg(partials + k * gridDim.x + b);  // from L2: other blocks wrote them
        }
        totals[k] = BlockReduce(storage).Sum(sum);
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        finish(totals);
        *ticket = 0;
    }
}

// The grid: one block per 256 rows, at most as many blocks as the device holds at once (one
// wave: a second, partial wave would leave SMs idle at its end) and fused_reduction_blocks.
// It depends on n and the device only, so the summation order is fixed.
template <typename Kernel>
unsigned fused_grid(const CudaBackend& cuda, std::int64_t n, Kernel kernel) {
    static const unsigned resident = [&] {
        int per_sm = 0, sms = 0;
        SIMRUN_CUDA_CHECK(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_size, 0));
        SIMRUN_CUDA_CHECK(
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, cuda.device()));
        return static_cast<unsigned>(std::max(1, per_sm * sms));
    }();
    return std::min(grid_for(static_cast<std::size_t>(n), fused_reduction_blocks), resident);
}

template <typename T, int Sums, typename Setup, typename Row, typename Finish>
void fused_reduce(const Backend& backend, std::int64_t n, const CgPhase* phase, T* partials,
                  unsigned* ticket, Setup setup, Row row, Finish finish) {
    static_assert(Sums * fused_reduction_blocks <= fused_reduction_slots);
    if (n == 0) return;
    const unsigned blocks =
        fused_grid(as_cuda(backend), n, fused_reduce_kernel<T, Sums, Setup, Row, Finish>);
    fused_reduce_kernel<T, Sums><<<blocks, block_size, 0, as_cuda(backend).stream()>>>(
        n, phase, partials, ticket, setup, row, finish);
    SIMRUN_CUDA_CHECK_LAUNCH(fused_reduce_kernel);
}

#include "unified/cg_kernels.inc.hpp"

}  // namespace

#include "unified/kernel_table.inc.hpp"

}  // namespace simrun::solvers::cuda

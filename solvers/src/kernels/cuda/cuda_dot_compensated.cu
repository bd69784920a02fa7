// The CUDA back-end's compensated dot product (cuda_sparse_kernels.cuh): per-thread Neumaier
// sums combined with TwoSum in two passes. No atomics: the order of every addition is fixed by
// n, so every run gives the same bits.
#include <algorithm>
#include <cstddef>
#include <cub/block/block_reduce.cuh>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "cuda_sparse_kernels.cuh"

namespace simrun::solvers::cuda {
namespace {

constexpr int reduction_block = 256;  // both passes of dot_compensated

// s + c: a running sum and the rounding error it has lost so far.
template <typename T>
struct CompensatedPair {
    T sum;
    T compensation;
};
static_assert(sizeof(CompensatedPair<double>) == 2 * sizeof(double));

// The product rounded on its own: never fused into the following addition, so the Neumaier
// step compensates exactly the addition's error, as on the CPU.
__device__ __forceinline__ float rounded_product(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double rounded_product(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float magnitude(float a) { return fabsf(a); }
__device__ __forceinline__ double magnitude(double a) { return fabs(a); }

// (a.sum + b.sum) = s + e exactly (Knuth's TwoSum, no branch); the compensations add up.
struct TwoSumCombine {
    template <typename T>
    __device__ __forceinline__ CompensatedPair<T> operator()(const CompensatedPair<T>& a,
                                                             const CompensatedPair<T>& b) const {
        const T s = a.sum + b.sum;
        const T b_part = s - a.sum;
        const T e = (a.sum - (s - b_part)) + (b.sum - b_part);
        return {s, (a.compensation + b.compensation) + e};
    }
};

// Pass 1: each thread a Neumaier sum over a grid-strided subset, the block's pairs combined by
// CUB's (fixed-order) block reduction. Traffic: 2n reads, 2 * blocks writes.
template <typename T>
__global__ void __launch_bounds__(reduction_block)
    dot_compensated_partials_kernel(std::size_t n, const T* __restrict__ x, const T* __restrict__ y,
                                    CompensatedPair<T>* __restrict__ partials) {
    using BlockReduce = cub::BlockReduce<CompensatedPair<T>, reduction_block>;
    __shared__ typename BlockReduce::TempStorage storage;
    T sum = 0;
    T compensation = 0;
    for (std::size_t i = blockIdx.x * std::size_t(reduction_block) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * reduction_block) {
        const T value = rounded_product(x[i], y[i]);
        const T t = sum + value;
        // Neumaier: the error of sum + value is recovered from the larger operand.
        compensation += magnitude(sum) >= magnitude(value) ? (sum - t) + value : (value - t) + sum;
        sum = t;
    }
    const CompensatedPair<T> total =
        BlockReduce(storage).Reduce(CompensatedPair<T>{sum, compensation}, TwoSumCombine{});
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// Pass 2: one block combines the pairs in a fixed order; the result is sum + compensation.
// Traffic: 2 * count reads, one write.
template <typename T>
__global__ void __launch_bounds__(reduction_block)
    dot_compensated_total_kernel(int count, const CompensatedPair<T>* __restrict__ partials,
                                 T* __restrict__ out) {
    using BlockReduce = cub::BlockReduce<CompensatedPair<T>, reduction_block>;
    __shared__ typename BlockReduce::TempStorage storage;
    const TwoSumCombine combine;
    CompensatedPair<T> pair{0, 0};
    for (int i = threadIdx.x; i < count; i += reduction_block) pair = combine(pair, partials[i]);
    const CompensatedPair<T> total = BlockReduce(storage).Reduce(pair, combine);
    if (threadIdx.x == 0) *out = total.sum + total.compensation;
}

}  // namespace

// The grid depends on n only, so the order of every addition (and the bits) is fixed.
template <typename T>
T dot_compensated(const Backend& backend, std::size_t n, const T* x, const T* y) {
    if (n == 0) return T(0);
    const CudaBackend& cuda = as_cuda(backend);
    auto* partials = static_cast<CompensatedPair<T>*>(cuda.reduction_scratch());
    T* result = &partials[max_reduction_blocks].sum;
    const int blocks = static_cast<int>(std::min<std::size_t>(
        (n + reduction_block - 1) / reduction_block, std::size_t{max_reduction_blocks}));
    dot_compensated_partials_kernel<T>
        <<<blocks, reduction_block, 0, cuda.stream()>>>(n, x, y, partials);
    SIMRUN_CUDA_CHECK_LAUNCH(dot_compensated_partials_kernel);
    dot_compensated_total_kernel<T>
        <<<1, reduction_block, 0, cuda.stream()>>>(blocks, partials, result);
    SIMRUN_CUDA_CHECK_LAUNCH(dot_compensated_total_kernel);
    return *static_cast<const T*>(cuda.fetch_result(result, sizeof(T)));
}

template float dot_compensated<float>(const Backend&, std::size_t, const float*, const float*);
template double dot_compensated<double>(const Backend&, std::size_t, const double*, const double*);

}  // namespace simrun::solvers::cuda

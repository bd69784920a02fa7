#pragma once
// What the CUDA sparse kernels' files share (cuda_*_spmv.cu, cuda_sor_sweeps.cu,
// cuda_dot_compensated.cu): the warp, the block of the row kernels, the grid for a count of
// threads and the warp's shuffle sum.
#include <cstdint>

namespace simrun::solvers::cuda {

inline constexpr int warp_size = 32;
inline constexpr unsigned full_mask = 0xffffffffu;
inline constexpr int row_block = 256;  // thread-per-row and warp-per-row kernels

inline unsigned blocks_for(std::int64_t threads, int block) {
    return static_cast<unsigned>((threads + block - 1) / block);
}

template <typename T>
__device__ __forceinline__ T warp_sum(T value) {
#pragma unroll
    for (int offset = warp_size / 2; offset > 0; offset /= 2) {
        value += __shfl_down_sync(full_mask, value, offset);
    }
    return value;
}

}  // namespace simrun::solvers::cuda

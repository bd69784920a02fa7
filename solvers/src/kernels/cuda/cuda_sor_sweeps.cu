// The CUDA back-end's multicolour SOR sweeps (cuda_sparse_kernels.cuh): a launch per colour,
// or every colour of a small system in one block.
#include <cstdint>

#include "cuda_backend.hpp"
#include "cuda_block_row_sums.cuh"
#include "cuda_check.hpp"
#include "cuda_sparse_kernels.cuh"
#include "cuda_sparse_launch.cuh"

namespace simrun::solvers::cuda {
namespace {

// One SOR update per position of a colour (no two of its rows coupled, so no row reads
// another's new x): x_i = (1 - omega) x_i + omega inv_diag_i (b_i - sum_{j != i} a_ij x_j),
// entries in storage order as on the CPU. x is read and written, so it is not read through the
// read-only cache. Traffic: the positions' rows and bounds (contiguous) + their entries
// (contiguous) + their b, inv_diag, x (read and written) + gathered x.
template <typename T>
__global__ void __launch_bounds__(row_block)
    sor_colour_kernel(MulticolourSweepsView<T> m, std::int32_t begin, std::int32_t end,
                      const T* __restrict__ b, T* x) {
    const std::int64_t r = begin + blockIdx.x * std::int64_t(row_block) + threadIdx.x;
    if (r >= end) return;
    const std::int32_t i = __ldg(m.rows + r);
    const std::int32_t stop = __ldg(m.row_ptr + r + 1);
    T sum = b[i];
    for (std::int32_t k = __ldg(m.row_ptr + r); k < stop; ++k) {
        sum -= __ldg(m.values + k) * x[__ldg(m.col + k)];
    }
    x[i] = (T(1) - m.omega) * x[i] + m.omega * __ldg(m.inv_diag + i) * sum;
}

// Every colour of a small system in one block (group_row_sums), the block waiting before the
// next colour, whose rows read these. Traffic: as the per-colour passes, in one launch.
template <typename T>
__global__ void __launch_bounds__(sor_block_threads)
    sor_sweeps_block_kernel(MulticolourSweepsView<T> sweeps, bool forward, bool backward,
                            const T* __restrict__ b, T* x) {
    __shared__ std::int32_t offsets[shared_colour_offsets + 1];
    const MulticolourSweepsView<T> m = with_shared_offsets(sweeps, offsets);
    __syncthreads();
    const int forward_steps = forward ? m.colours : 0;
    const int steps = forward_steps + (backward ? m.colours : 0);
    for (int step = 0; step < steps; ++step) {
        const int c = step < forward_steps ? step : m.colours - 1 - (step - forward_steps);
        colour_rows(m, m.offsets[c], m.offsets[c + 1], x, [&](std::int32_t i, T sum) {
            x[i] = (T(1) - m.omega) * x[i] + m.omega * m.inv_diag[i] * (b[i] - sum);
        });
        __syncthreads();
    }
}

}  // namespace

template <typename T>
void sor_colour_sweep(const Backend& backend, const MulticolourSweepsView<T>& m, std::int32_t begin,
                      std::int32_t end, const T* b, T* x) {
    if (end <= begin) return;
    sor_colour_kernel<T>
        <<<blocks_for(end - begin, row_block), row_block, 0, as_cuda(backend).stream()>>>(
            m, begin, end, b, x);
    SIMRUN_CUDA_CHECK_LAUNCH(sor_colour_kernel);
}

template <typename T>
void sor_sweeps(const Backend& backend, const MulticolourSweepsView<T>& m,
                const std::int32_t* offsets, SweepOrder order, const T* b, T* x) {
    if (m.colours <= 0 || m.n <= 0) return;
    const bool forward = order != SweepOrder::backward;
    const bool backward = order != SweepOrder::forward;
    if (m.n <= sor_block_rows) {
        sor_sweeps_block_kernel<T>
            <<<1, sor_block_threads, 0, as_cuda(backend).stream()>>>(m, forward, backward, b, x);
        SIMRUN_CUDA_CHECK_LAUNCH(sor_sweeps_block_kernel);
        return;
    }
    const auto sweep = [&](int c) {
        sor_colour_sweep(backend, m, offsets[c], offsets[c + 1], b, x);
    };
    if (forward) {
        for (int c = 0; c < m.colours; ++c) sweep(c);
    }
    if (backward) {
        for (int c = m.colours - 1; c >= 0; --c) sweep(c);
    }
}

#define SIMRUN_INSTANTIATE_SOR_KERNELS(T)                                              \
    template void sor_colour_sweep<T>(const Backend&, const MulticolourSweepsView<T>&, \
                                      std::int32_t, std::int32_t, const T*, T*);       \
    template void sor_sweeps<T>(const Backend&, const MulticolourSweepsView<T>&,       \
                                const std::int32_t*, SweepOrder, const T*, T*);

SIMRUN_INSTANTIATE_SOR_KERNELS(float)
SIMRUN_INSTANTIATE_SOR_KERNELS(double)

#undef SIMRUN_INSTANTIATE_SOR_KERNELS

}  // namespace simrun::solvers::cuda

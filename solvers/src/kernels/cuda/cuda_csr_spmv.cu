// The CUDA back-end's CSR product (cuda_sparse_kernels.cuh): rows in three bins (thread, warp
// or block per row), the bins side by side on forked streams. No atomics: every run gives the
// same bits.
#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <string>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "cuda_sparse_kernels.cuh"
#include "cuda_sparse_launch.cuh"
#include "simrun/solvers/base/errors.hpp"

namespace simrun::solvers::cuda {
namespace {

constexpr int long_row_block = 512;  // block-per-row kernel (csr_binning.cpp's long_limit)

// CSR, rows in three bins (csr_binning.hpp). Each bin kernel takes the bin's slice of
// binned_rows; the traffic of the three together is that of csr_spmv: nnz (values + columns),
// two row pointers and one list entry per row, x gathered (through the read-only cache), one
// write per row.

// One thread per short row, entries in storage order.
template <typename T>
__global__ void __launch_bounds__(row_block)
    csr_thread_per_row_kernel(std::int32_t count, const std::int32_t* __restrict__ rows,
                              const std::int32_t* __restrict__ row_ptr,
                              const std::int32_t* __restrict__ col, const T* __restrict__ values,
                              const T* __restrict__ x, T* __restrict__ y) {
    const std::int64_t r = blockIdx.x * std::int64_t(row_block) + threadIdx.x;
    if (r >= count) return;
    const std::int32_t i = rows[r];
    const std::int32_t end = row_ptr[i + 1];
    T sum = 0;
    for (std::int32_t k = row_ptr[i]; k < end; ++k) sum += values[k] * __ldg(x + col[k]);
    y[i] = sum;
}

// One warp per medium row: lane l takes entries l, l + 32, ... (coalesced), then a shuffle
// reduction. rows == nullptr means row r is row r (the fallback without bins).
template <typename T>
__global__ void __launch_bounds__(row_block)
    csr_warp_per_row_kernel(std::int32_t count, const std::int32_t* __restrict__ rows,
                            const std::int32_t* __restrict__ row_ptr,
                            const std::int32_t* __restrict__ col, const T* __restrict__ values,
                            const T* __restrict__ x, T* __restrict__ y) {
    const std::int64_t r = (blockIdx.x * std::int64_t(row_block) + threadIdx.x) / warp_size;
    if (r >= count) return;  // the whole warp leaves together
    const int lane = static_cast<int>(threadIdx.x % warp_size);
    const std::int32_t i = rows != nullptr ? rows[r] : static_cast<std::int32_t>(r);
    const std::int64_t end = row_ptr[i + 1];
    T sum = 0;
#pragma unroll 4
    for (std::int64_t k = row_ptr[i] + lane; k < end; k += warp_size) {
        sum += values[k] * __ldg(x + col[k]);
    }
    sum = warp_sum(sum);
    if (lane == 0) y[i] = sum;
}

// One block per long row: thread t takes entries t, t + 512, ..., then CUB's block reduction.
template <typename T>
__global__ void __launch_bounds__(long_row_block)
    csr_block_per_row_kernel(const std::int32_t* __restrict__ rows,
                             const std::int32_t* __restrict__ row_ptr,
                             const std::int32_t* __restrict__ col, const T* __restrict__ values,
                             const T* __restrict__ x, T* __restrict__ y) {
    using BlockReduce = cub::BlockReduce<T, long_row_block>;
    __shared__ typename BlockReduce::TempStorage storage;
    const std::int32_t i = rows[blockIdx.x];
    const std::int64_t end = row_ptr[i + 1];
    T sum = 0;
#pragma unroll 4
    for (std::int64_t k = row_ptr[i] + threadIdx.x; k < end; k += long_row_block) {
        sum += values[k] * __ldg(x + col[k]);
    }
    const T total = BlockReduce(storage).Sum(sum);
    if (threadIdx.x == 0) y[i] = total;
}

template <typename T>
void launch_csr_bin(int bin, std::int32_t count, const std::int32_t* rows, const CsrView<T>& a,
                    const T* x, T* y, cudaStream_t stream) {
    switch (bin) {
        case 0:
            csr_thread_per_row_kernel<T><<<blocks_for(count, row_block), row_block, 0, stream>>>(
                count, rows, a.row_ptr, a.col, a.values, x, y);
            SIMRUN_CUDA_CHECK_LAUNCH(csr_thread_per_row_kernel);
            break;
        case 1:
            csr_warp_per_row_kernel<T>
                <<<blocks_for(std::int64_t{count} * warp_size, row_block), row_block, 0, stream>>>(
                    count, rows, a.row_ptr, a.col, a.values, x, y);
            SIMRUN_CUDA_CHECK_LAUNCH(csr_warp_per_row_kernel);
            break;
        default:
            csr_block_per_row_kernel<T>
                <<<static_cast<unsigned>(count), long_row_block, 0, stream>>>(
                    rows, a.row_ptr, a.col, a.values, x, y);
            SIMRUN_CUDA_CHECK_LAUNCH(csr_block_per_row_kernel);
            break;
    }
}

}  // namespace

template <typename T>
void csr_spmv(const Backend& backend, const CsrView<T>& a, const T* x, T* y) {
    if (a.rows <= 0) return;
    const CudaBackend& cuda = as_cuda(backend);
    const CsrBinsView& bins = a.bins;
    if (bins.binned_rows == nullptr) {
        launch_csr_bin(1, a.rows, nullptr, a, x, y, cuda.stream());
        return;
    }
    const std::int32_t* offsets = bins.bin_offsets;
    if (offsets[0] != 0 || offsets[1] < offsets[0] || offsets[2] < offsets[1] ||
        offsets[3] < offsets[2] || offsets[3] != a.rows) {
        throw DimensionMismatch("csr_spmv: bin offsets {" + std::to_string(offsets[0]) + ", " +
                                std::to_string(offsets[1]) + ", " + std::to_string(offsets[2]) +
                                ", " + std::to_string(offsets[3]) + "} do not run from 0 to the " +
                                std::to_string(a.rows) + " rows");
    }
    int non_empty = 0;
    for (int b = 0; b < 3; ++b) non_empty += offsets[b + 1] > offsets[b] ? 1 : 0;
    // The first non-empty bin runs on stream(), each further one on an auxiliary stream forked
    // from stream() before and joined back into it after.
    if (non_empty > 1) SIMRUN_CUDA_CHECK(cudaEventRecord(cuda.fork_event(), cuda.stream()));
    int slot = 0;
    for (int b = 0; b < 3; ++b) {
        const std::int32_t count = offsets[b + 1] - offsets[b];
        if (count == 0) continue;
        const std::int32_t* rows = bins.binned_rows + offsets[b];
        if (slot == 0) {
            launch_csr_bin(b, count, rows, a, x, y, cuda.stream());
        } else {
            const cudaStream_t aux = cuda.aux_stream(slot - 1);
            SIMRUN_CUDA_CHECK(cudaStreamWaitEvent(aux, cuda.fork_event(), 0));
            launch_csr_bin(b, count, rows, a, x, y, aux);
            SIMRUN_CUDA_CHECK(cudaEventRecord(cuda.join_event(slot - 1), aux));
            SIMRUN_CUDA_CHECK(cudaStreamWaitEvent(cuda.stream(), cuda.join_event(slot - 1), 0));
        }
        ++slot;
    }
}

template void csr_spmv<float>(const Backend&, const CsrView<float>&, const float*, float*);
template void csr_spmv<double>(const Backend&, const CsrView<double>&, const double*, double*);

}  // namespace simrun::solvers::cuda

// The CUDA back-end's SSOR-preconditioned CG on a small system in one block
// (cuda_sparse_kernels.cuh): what the block keeps in shared memory, the block as
// unified/cg_sweeps_in_block.hpp's workers, and the kernel and its launch.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <string>
#include <type_traits>

#include "cuda_backend.hpp"
#include "cuda_block_row_sums.cuh"
#include "cuda_check.hpp"
#include "cuda_sparse_kernels.cuh"
#include "kernels/unified/cg_sweeps_in_block.hpp"
#include "kernels/unified/row_products.hpp"
#include "simrun/solvers/base/errors.hpp"

namespace simrun::solvers::cuda {
namespace {

// What the one-block SSOR-PCG keeps in the block's shared memory (byte offsets into its
// dynamic shared memory; -1: left in global memory). One SM reads global memory through its own
// L1 and L2 port only: nos3's product from its DIA operator (161 KB) took about 14000 cycles
// on an H200, a colour pass with its entries in shared memory and z in global memory about
// 1800. Chosen on the host, greedily in this order: the sweeps' matrix (whole or not at all),
// z, r, inv_diag, p and, where A p comes from the sweeps, the diagonal, each where it still
// fits within what the device lets one block have; nos3 in double (14884 off-diagonal entries,
// 960 rows) takes 219 KB for all of them.
struct SharedStaging {
    std::int64_t values = -1, col = -1, row_ptr = -1, rows = -1;  // the sweeps' matrix
    std::int64_t z = -1, r = -1, inv_diag = -1, p = -1, diag = -1;
    std::size_t bytes = 0;
};

template <typename T>
SharedStaging plan_shared_staging(const CgSweepVectors<T>& v, std::size_t budget) {
    SharedStaging plan;
    const auto place = [&](std::size_t size, std::size_t align) -> std::int64_t {
        const std::size_t at = (plan.bytes + align - 1) / align * align;
        if (at + size > budget) return -1;
        plan.bytes = at + size;
        return static_cast<std::int64_t>(at);
    };
    const auto n = static_cast<std::size_t>(v.n);
    const auto nnz = static_cast<std::size_t>(v.m.nnz);
    const std::size_t matrix =
        nnz * (sizeof(T) + sizeof(std::int32_t)) + (2 * n + 1) * sizeof(std::int32_t) + 16;
    if (matrix <= budget) {
        plan.values = place(nnz * sizeof(T), 16);
        plan.col = place(nnz * sizeof(std::int32_t), 16);
        plan.row_ptr = place((n + 1) * sizeof(std::int32_t), 16);
        plan.rows = place(n * sizeof(std::int32_t), 16);
    }
    plan.z = place(n * sizeof(T), 16);
    plan.r = place(n * sizeof(T), 16);
    plan.inv_diag = place(n * sizeof(T), 16);
    plan.p = place(n * sizeof(T), 16);
    if (v.product_from_sweeps && plan.values >= 0) plan.diag = place(n * sizeof(T), 16);
    return plan;
}

// Copies count values from `from` into the shared memory at `offset` (where staged) and returns
// where the block should read them. With `always`, the caller knows every array staged: the
// pointer then derives from the shared array alone, so that the compiler addresses it as shared
// memory (32-bit addresses, shared loads) rather than through generic 64-bit pointers.
template <bool always, typename V>
__device__ V* stage_in(unsigned char* shared, std::int64_t offset, const V* from,
                       std::int64_t count) {
    if (!always && offset < 0) return const_cast<V*>(from);
    V* to = reinterpret_cast<V*>(shared + offset);
    for (std::int64_t k = threadIdx.x; k < count; k += blockDim.x) to[k] = from[k];
    return to;
}

template <typename V>
__device__ void stage_out(const V* staged, V* to, std::int64_t count) {
    if (staged == to) return;
    for (std::int64_t k = threadIdx.x; k < count; k += blockDim.x) to[k] = staged[k];
}

// The block of unified/cg_sweeps_in_block.hpp: the sor_block_threads threads of one block.
// Sums by cub::BlockReduce (a fixed tree: the same bits every run), broadcast through shared
// memory.
template <typename T>
struct ThreadBlock {
    using Reduce = cub::BlockReduce<T, sor_block_threads>;
    typename Reduce::TempStorage& storage;
    T& total;

    template <typename F>
    __device__ void rows(std::int64_t n, F f) const {
        for (std::int64_t i = threadIdx.x; i < n; i += sor_block_threads) f(i);
    }
    // DIA and ELLPACK-R: a thread per row.
    template <typename View, typename F>
    __device__ void row_products(std::int64_t n, const View& a, const T* x, F f) const {
        const auto entries = [x](std::int64_t j) { return x[j]; };
        rows(n, [&](std::int64_t i) { f(i, row_product(a, i, entries)); });
    }
    template <typename F>
    __device__ void row_products(std::int64_t n, const CsrView<T>& a, const T* x, F f) const {
        group_row_sums<true>(
            0, static_cast<std::int32_t>(n),
            [&a](std::int32_t i) {
                return RowSpan{i, __ldg(a.row_ptr + i), __ldg(a.row_ptr + i + 1)};
            },
            a.col, a.values, x, f);
    }
    template <typename F>
    __device__ void colour_row_sums(const MulticolourSweepsView<T>& m, std::int32_t begin,
                                    std::int32_t end, const T* x, F f) const {
        colour_rows(m, begin, end, x, f);
    }
    __device__ T sum(T partial) const {
        const T block_total = Reduce(storage).Sum(partial);
        if (threadIdx.x == 0) total = block_total;
        __syncthreads();
        const T result = total;
        __syncthreads();  // storage and total are free again
        return result;
    }
    __device__ bool leader() const { return threadIdx.x == 0; }
    __device__ void sync() const { __syncthreads(); }
};

// SSOR-preconditioned CG on a small system, `count` iterations in one block: the scalars in
// shared memory, and what `plan` places there (the sweeps' matrix, z, r, inv_diag, p), copied
// in at the start and the vectors stored back at the end. Traffic:
// KernelTable::cg_sweep_iterations, plus the staged arrays once per launch.
template <typename T, typename View, bool all_staged>
__global__ void __launch_bounds__(sor_block_threads)
    cg_sweep_kernel(View a, CgSweepVectors<T> v, CgScalars<T>* state, SharedStaging plan,
                    std::int64_t count) {
    __shared__ CgScalars<T> s;
    __shared__ typename ThreadBlock<T>::Reduce::TempStorage storage;
    __shared__ T total;
    __shared__ std::int32_t offsets[shared_colour_offsets + 1];
    extern __shared__ __align__(16) unsigned char staged[];
    if (threadIdx.x == 0) s = *state;
    CgSweepVectors<T> in = v;
    in.m = with_shared_offsets(v.m, offsets);
    const std::int64_t n = v.n;
    in.m.values = stage_in<all_staged>(staged, plan.values, v.m.values, v.m.nnz);
    in.m.col = stage_in<all_staged>(staged, plan.col, v.m.col, v.m.nnz);
    in.m.row_ptr = stage_in<all_staged>(staged, plan.row_ptr, v.m.row_ptr, n + 1);
    in.m.rows = stage_in<all_staged>(staged, plan.rows, v.m.rows, n);
    in.m.inv_diag = stage_in<all_staged>(staged, plan.inv_diag, v.m.inv_diag, n);
    in.m.diag = stage_in<all_staged>(staged, plan.diag, v.m.diag, n);
    in.z = stage_in<all_staged>(staged, plan.z, v.z, n);
    in.r = stage_in<all_staged>(staged, plan.r, v.r, n);
    in.p = stage_in<all_staged>(staged, plan.p, v.p, n);
    __syncthreads();
    ThreadBlock<T> block{storage, total};
    cg_sweep_iterations_in_block(block, a, in, s, count);
    __syncthreads();
    stage_out(in.z, v.z, n);
    stage_out(in.r, v.r, n);
    stage_out(in.p, v.p, n);
    if (threadIdx.x == 0) *state = s;
}

}  // namespace

template <typename T>
bool fuses_cg_sweeps(std::int64_t n) {
    return n <= sor_block_rows;
}

// The dynamic shared memory one launch of the kernel may take: the device's opt-in limit per
// block less the kernel's static shared memory, asked once per kernel, of the device current
// at that first call (the kernel's attribute raised to it then).
template <auto kernel>
std::size_t staging_budget() {
    static const std::size_t budget = [] {
        int device = 0;
        int limit = 0;
        SIMRUN_CUDA_CHECK(cudaGetDevice(&device));
        SIMRUN_CUDA_CHECK(
            cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        cudaFuncAttributes attributes{};
        SIMRUN_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
        const std::size_t dynamic =
            static_cast<std::size_t>(limit) > attributes.sharedSizeBytes
                ? static_cast<std::size_t>(limit) - attributes.sharedSizeBytes
                : 0;
        SIMRUN_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(dynamic)));
        return dynamic;
    }();
    return budget;
}

template <typename T>
void cg_sweep_iterations(const Backend& backend, const RowMatrixView<T>& a,
                         const CgSweepVectors<T>& v, CgScalars<T>* s, std::int64_t count) {
    if (v.n == 0 || count < 1) return;
    if (v.n > sor_block_rows) {
        throw DimensionMismatch("cg_sweep_iterations: " + std::to_string(v.n) +
                                " rows, one block takes at most " + std::to_string(sor_block_rows));
    }
    with_row_view(a, [&](const auto& view) {
        using View = std::decay_t<decltype(view)>;
        CgSweepVectors<T> vectors = v;
        // The smaller of the two kernels' budgets (their static shared memory is the same), so
        // that one plan serves whichever runs.
        const SharedStaging plan = plan_shared_staging(
            vectors, std::min(staging_budget<cg_sweep_kernel<T, View, false>>(),
                              staging_budget<cg_sweep_kernel<T, View, true>>()));
        // From global memory, A's own rows serve the product better (a 20^3 Laplacian's
        // stencil: 32000 against 37000 cycles on an H200).
        vectors.product_from_sweeps = v.product_from_sweeps && plan.values >= 0;
        const bool all_staged = plan.values >= 0 && plan.z >= 0 && plan.r >= 0 &&
                                plan.inv_diag >= 0 && plan.p >= 0 && plan.diag >= 0;
        const cudaStream_t stream = as_cuda(backend).stream();
        if (all_staged) {
            cg_sweep_kernel<T, View, true>
                <<<1, sor_block_threads, plan.bytes, stream>>>(view, vectors, s, plan, count);
        } else {
            cg_sweep_kernel<T, View, false>
                <<<1, sor_block_threads, plan.bytes, stream>>>(view, vectors, s, plan, count);
        }
        SIMRUN_CUDA_CHECK_LAUNCH(cg_sweep_kernel);
    });
}

#define SIMRUN_INSTANTIATE_CG_SWEEPS(T)                                           \
    template bool fuses_cg_sweeps<T>(std::int64_t);                               \
    template void cg_sweep_iterations<T>(const Backend&, const RowMatrixView<T>&, \
                                         const CgSweepVectors<T>&, CgScalars<T>*, std::int64_t);

SIMRUN_INSTANTIATE_CG_SWEEPS(float)
SIMRUN_INSTANTIATE_CG_SWEEPS(double)

#undef SIMRUN_INSTANTIATE_CG_SWEEPS

}  // namespace simrun::solvers::cuda

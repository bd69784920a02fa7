// The CUDA back-end's kernels: element-wise and fused CG ones from the unified source, plus the
// DIA SpMV and the deterministic dot product specialised here.
#include <cooperative_groups.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <optional>
#include <type_traits>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "cuda_sparse_kernels.cuh"
#include "kernels/unified/box_setup_points.hpp"
#include "kernels/unified/cg_scalar_steps.hpp"
#include "kernels/unified/device_math.hpp"
#include "kernels/unified/fused_steps.hpp"
#include "kernels/unified/row_products.hpp"
#include "simrun/solvers/base/host_device.hpp"

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

#include "kernels/unified/elementwise_kernels.inc.hpp"
#include "kernels/unified/multigrid_kernels.inc.hpp"
#include "kernels/unified/multigrid_setup_kernels.inc.hpp"

// The collapsed weights and P^T A P point by point on the GPU.
inline void box_collapsed_weights(const Backend& backend, const DiaView<double>& a,
                                  const BoxDiagonalSteps& steps, const BoxTransferView<double>& t,
                                  double* weights) {
    box_collapsed_weights_by_points(backend, a, steps, t, weights);
}

inline void box_galerkin(const Backend& backend, const DiaView<double>& a,
                         const BoxDiagonalSteps& steps, const BoxTransferView<double>& t,
                         const GalerkinTableView& table, const GalerkinLayout& layout,
                         double* coarse) {
    box_galerkin_by_points(backend, a, steps, t, table, layout, coarse);
}

// ---- Red-black Gauss-Seidel, both colours in one pass (2D boxes) ----
// A block owns a tile of sweep_tile_x x sweep_tile_y points and loads x over the tile and a
// halo of 2 into shared memory; it updates the first colour over the tile and a halo of 1 (the
// halo's updates repeat the neighbouring tiles' own, value for value), then the second colour
// over the tile, and writes the tile to x_out: a separate vector, since blocks run in any order
// and a halo read from x must not see a neighbouring tile's writes. Traffic per point: x read (1.2x
// with the halo), b and A's row (mask, class or values) read for the points updated (1.1x), x
// written once: about half of two passes, which each touch every cache line of x and b. Tiles of 64
// x 32 make many small blocks, so the last wave of a large box is nearly full (4096^2 at 128 x 32
// was 4.03 waves of 8 blocks per multiprocessor on an H100).
constexpr int sweep_tile_x = 64, sweep_tile_y = 32;
constexpr int sweep_load_x = sweep_tile_x + 4, sweep_load_y = sweep_tile_y + 4;

// Per diagonal, the step between a point and its coupled neighbour in the shared tile.
struct SweepTileSteps {
    int step[max_stencil_diagonals];
};

template <typename T, int D>
__device__ void sweep_update(const DiaView<T>& a, int main, const SweepTileSteps& steps,
                             std::int64_t row, int local, const T* __restrict__ b, T* xs) {
    const unsigned key = dia_row_key(a, row);
    T sum = 0;
#pragma unroll
    for (int d = 0; d < D; ++d) {
        // Couplings a box matrix lacks (outside the box, or wrapping a line) are zero, so no
        // entry is read outside the loaded tile.
        const T value = dia_entry(a, key, d, row);
        if (value != T(0)) sum += value * xs[local + steps.step[d]];
    }
    xs[local] += (b[row] - sum) / dia_entry(a, key, main, row);
}

template <typename T, int D>
__global__ void __launch_bounds__(block_size)
    red_black_tile_kernel(DiaView<T> a, int main, SweepTileSteps steps, std::int64_t nx,
                          std::int64_t ny, int first, const T* __restrict__ b,
                          const T* __restrict__ x, T* __restrict__ x_out) {
    __shared__ T xs[sweep_load_x * sweep_load_y];
    const std::int64_t x0 = std::int64_t(blockIdx.x) * sweep_tile_x - 2;  // even
    const std::int64_t y0 = std::int64_t(blockIdx.y) * sweep_tile_y - 2;
    // Unrolled, so each thread has all its loads in flight at once.
    constexpr int loads = (sweep_load_x * sweep_load_y + block_size - 1) / block_size;
#pragma unroll
    for (int k = 0; k < loads; ++k) {
        const int t = threadIdx.x + k * block_size;
        if (t >= sweep_load_x * sweep_load_y) break;
        const int lx = t % sweep_load_x, ly = t / sweep_load_x;
        const std::int64_t gx = x0 + lx, gy = y0 + ly;
        xs[t] = gx >= 0 && gx < nx && gy >= 0 && gy < ny ? x[gy * nx + gx] : T(0);
    }
    __syncthreads();
    // The points of one colour in the local rows [row0, row0 + rows) and columns [col0, col0 +
    // 2 per_row), per_row of them in each row: local column p + 2 m with p the row's parity
    // for the colour (x0 is even, so a local column has its global column's parity).
    const auto update_colour = [&](int colour, int row0, int rows, int col0, int per_row) {
#pragma unroll 4
        for (int t = threadIdx.x; t < rows * per_row; t += block_size) {
            const int ly = row0 + t / per_row;
            const std::int64_t gy = y0 + ly;
            const int parity = static_cast<int>((colour + gy) & 1);
            const int lx = parity + 2 * (t % per_row) + ((col0 - parity + 1) / 2) * 2;
            const std::int64_t gx = x0 + lx;
            if (gx < 0 || gx >= nx || gy < 0 || gy >= ny) continue;
            sweep_update<T, D>(a, main, steps, gy * nx + gx, ly * sweep_load_x + lx, b, xs);
        }
    };
    // The first colour over the tile and a halo of 1 (columns 1 .. load_x - 2: 65 a row), then
    // the second over the tile (columns 2 .. tile_x + 1: 64 a row).
    update_colour(first, 1, sweep_load_y - 2, 1, (sweep_load_x - 2) / 2);
    __syncthreads();
    update_colour(1 - first, 2, sweep_tile_y, 2, sweep_tile_x / 2);
    __syncthreads();
    constexpr int stores = sweep_tile_x * sweep_tile_y / block_size;
#pragma unroll
    for (int k = 0; k < stores; ++k) {
        const int t = threadIdx.x + k * block_size;
        const int lx = 2 + t % sweep_tile_x, ly = 2 + t / sweep_tile_x;
        const std::int64_t gx = x0 + lx, gy = y0 + ly;
        if (gx < nx && gy < ny) x_out[gy * nx + gx] = xs[ly * sweep_load_x + lx];
    }
}

// The tile's steps per diagonal where the box is 2D with a 5-point pattern (offsets 0, +-1,
// +-nx; nx >= 2) and its tiles fit the grid's y extent; nothing otherwise.
template <typename T>
std::optional<SweepTileSteps> sweep_tile_steps(const DiaView<T>& a, BoxShape box) {
    const std::int64_t nx = box.points[0], ny = box.points[1];
    if (box.points[2] != 1 || nx < 2 || a.num_diagonals != 5 || a.n != nx * ny ||
        (ny + sweep_tile_y - 1) / sweep_tile_y > 65535) {
        return std::nullopt;
    }
    SweepTileSteps steps{};
    for (int d = 0; d < a.num_diagonals; ++d) {
        const std::int64_t o = a.offsets[d];
        if (o == 0 || o == 1 || o == -1) {
            steps.step[d] = static_cast<int>(o);
        } else if (o == nx || o == -nx) {
            steps.step[d] = o > 0 ? sweep_load_x : -sweep_load_x;
        } else {
            return std::nullopt;
        }
    }
    return steps;
}

template <typename T>
bool fuses_red_black_sweep(const DiaView<T>& a, BoxShape box) {
    return sweep_tile_steps(a, box).has_value();
}

// Fused where sweep_tile_steps allows; otherwise a copy and a pass per colour.
template <typename T>
void box_red_black_sweep(const Backend& backend, const DiaView<T>& a, int main, BoxShape box,
                         int first, const T* b, const T* x, T* x_out) {
    const std::int64_t nx = box.points[0], ny = box.points[1];
    const std::optional<SweepTileSteps> steps = sweep_tile_steps(a, box);
    const bool tiled = steps.has_value();
    if (!tiled) {
        box_colour_sweeps(backend, a, main, box, first, b, x, x_out);
        return;
    }
    const dim3 grid(static_cast<unsigned>((nx + sweep_tile_x - 1) / sweep_tile_x),
                    static_cast<unsigned>((ny + sweep_tile_y - 1) / sweep_tile_y));
    red_black_tile_kernel<T, 5><<<grid, block_size, 0, as_cuda(backend).stream()>>>(
        a, main, *steps, nx, ny, first, b, x, x_out);
    SIMRUN_CUDA_CHECK_LAUNCH(red_black_tile_kernel);
}

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

// ---- Krylov bases ----
// First pass of basis_dots: block (x, y) sums, over its grid-strided rows, the products of w
// with a group of basis_dot_group vectors (group y; the vector after the basis is w itself),
// reduced with CUB and stored at partials[j * gridDim.x + x] for vector j. Traffic: the
// group's vectors once, w once per group (from L2 after the first).
constexpr int basis_dot_group = 8;

template <typename T>
__global__ void __launch_bounds__(block_size)
    basis_dot_partials_kernel(std::size_t n, int k, KrylovBasis<T> basis, const T* __restrict__ w,
                              T* __restrict__ partials) {
    using BlockReduce = cub::BlockReduce<T, block_size>;
    __shared__ typename BlockReduce::TempStorage storage;
    const int first = static_cast<int>(blockIdx.y) * basis_dot_group;
    const int count = min(basis_dot_group, k + 1 - first);
    const T* vectors[basis_dot_group];
    T sums[basis_dot_group];
#pragma unroll
    for (int g = 0; g < basis_dot_group; ++g) {
        vectors[g] = g < count ? (first + g < k ? basis.vectors[first + g] : w) : w;
        sums[g] = 0;
    }
    for (std::size_t i = blockIdx.x * std::size_t(block_size) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * block_size) {
        const T wi = w[i];
#pragma unroll
        for (int g = 0; g < basis_dot_group; ++g) {
            if (g < count) sums[g] += vectors[g][i] * wi;
        }
    }
#pragma unroll
    for (int g = 0; g < basis_dot_group; ++g) {
        if (g >= count) break;
        const T total = BlockReduce(storage).Sum(sums[g]);
        if (threadIdx.x == 0) partials[(first + g) * gridDim.x + blockIdx.x] = total;
        __syncthreads();
    }
}

// Second pass: block j adds vector j's partial sums in a fixed order.
template <typename T>
__global__ void basis_dot_totals_kernel(int blocks, const T* __restrict__ partials,
                                        T* __restrict__ totals) {
    using BlockReduce = cub::BlockReduce<T, block_size>;
    __shared__ typename BlockReduce::TempStorage storage;
    const T* mine = partials + std::size_t(blockIdx.x) * blocks;
    T sum = 0;
    for (int i = threadIdx.x; i < blocks; i += block_size) sum += mine[i];
    const T total = BlockReduce(storage).Sum(sum);
    if (threadIdx.x == 0) totals[blockIdx.x] = total;
}

// The grid depends on n and k only: the same bits every run. One round trip for all k + 1.
template <typename T>
void basis_dots(const Backend& backend, std::size_t n, int k, const KrylovBasis<T>& basis,
                const T* w, T* out) {
    const CudaBackend& cuda = as_cuda(backend);
    if (n == 0) {
        std::fill(out, out + k + 1, T(0));
        return;
    }
    T* partials = static_cast<T*>(cuda.reduction_scratch());
    T* totals = partials + std::size_t(k + 1) * max_reduction_blocks;
    const unsigned blocks = grid_for(n, max_reduction_blocks);
    const dim3 grid(blocks, static_cast<unsigned>((k + basis_dot_group) / basis_dot_group));
    basis_dot_partials_kernel<T><<<grid, block_size, 0, cuda.stream()>>>(n, k, basis, w, partials);
    SIMRUN_CUDA_CHECK_LAUNCH(basis_dot_partials_kernel);
    basis_dot_totals_kernel<T><<<static_cast<unsigned>(k + 1), block_size, 0, cuda.stream()>>>(
        static_cast<int>(blocks), partials, totals);
    SIMRUN_CUDA_CHECK_LAUNCH(basis_dot_totals_kernel);
    const void* host = cuda.fetch_result(totals, std::size_t(k + 1) * sizeof(T));
    std::copy_n(static_cast<const T*>(host), k + 1, out);
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

// ---- Fused steps (unified/fused_steps.hpp) ----
// A block's part of a step: its rows (grid-strided from the block's first one), then each of
// its Sums partial sums reduced with CUB and stored at partials[k * gridDim.x + blockIdx.x].
template <typename T, typename Step, typename Context, typename Storage>
__device__ void store_block_sums(std::int64_t n, const Step& step, const Context& context,
                                 T* partials, Storage& storage) {
    static_assert(Step::sums <= fused_step_sums);
    using BlockReduce = cub::BlockReduce<T, block_size>;
    T sums[Step::sums] = {};
    for (std::int64_t i = blockIdx.x * std::int64_t(block_size) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * block_size) {
        step.row(i, context, sums);
    }
    for (int k = 0; k < Step::sums; ++k) {
        const T total = BlockReduce(storage).Sum(sums[k]);
        if (threadIdx.x == 0) partials[k * gridDim.x + blockIdx.x] = total;
        __syncthreads();
    }
}

// The sums over the grid of the blocks' stored sums, added in block order (valid in thread 0).
// Traffic: Sums * gridDim.x values, from L2 (other blocks wrote them).
template <typename T, int Sums, typename Storage>
__device__ void grid_totals(const T* partials, T (&totals)[Sums], Storage& storage) {
    using BlockReduce = cub::BlockReduce<T, block_size>;
    for (int k = 0; k < Sums; ++k) {
        T sum = 0;
        for (unsigned b = threadIdx.x; b < gridDim.x; b += block_size) {
            sum += __ldcg(partials + k * gridDim.x + b);
        }
        totals[k] = BlockReduce(storage).Sum(sum);
        __syncthreads();
    }
}

// One step in one launch: each block stores its sums; the last block to finish (a ticket
// taken after a fence) adds them in block order, runs finish and resets the ticket.
template <typename T, typename State, typename Step>
__device__ void fused_step(std::int64_t n, State* state, T* partials, unsigned* ticket,
                           const Step& step) {
    // The scalars the setup reads and the phase are loaded together (one round trip); the
    // phase is the same for every block of this launch.
    const auto context = step.setup(*state);
    if (!state->running()) return;
    __shared__ typename cub::BlockReduce<T, block_size>::TempStorage storage;
    __shared__ bool last_block;
    store_block_sums(n, step, context, partials, storage);
    if (threadIdx.x == 0) {
        __threadfence();  // this block's sums are visible before its ticket is
        last_block = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last_block) return;
    __threadfence();
    T totals[Step::sums];
    grid_totals(partials, totals, storage);
    if (threadIdx.x == 0) {
        step.finish(*state, totals);
        *ticket = 0;
    }
}

// The step's kernel for double: the registers the compiler chooses (40 for the 5-point CG and
// BiCGStab steps, 6 blocks an SM; asking for more blocks makes some steps spill, asking for
// fewer lets them grow to 52-56 registers and run 10% slower).
template <typename T, typename State, typename Step>
__global__ void __launch_bounds__(block_size)
    fused_step_kernel(std::int64_t n, State* state, T* partials, unsigned* ticket, Step step) {
    fused_step(n, state, partials, ticket, step);
}

// ... for float: a full SM (2048 threads, 32 registers a thread), since its rows bring half
// the bytes of double's and more of them must be in flight (398 -> 352 us per CG iteration at
// 4096^2 on an H200).
template <typename T, typename State, typename Step>
__global__ void __launch_bounds__(block_size, 2048 / block_size)
    fused_step_kernel_full_sm(std::int64_t n, State* state, T* partials, unsigned* ticket,
                              Step step) {
    fused_step(n, state, partials, ticket, step);
}

// A step inside the persistent kernel: the blocks store their sums, wait for each other at a
// grid barrier, and every block adds all the sums itself, in the same order, so each block's
// copy of the scalars stays bit-identical to the others' without a second barrier.
template <typename T, typename State, typename Step, typename Storage>
__device__ void persistent_step(std::int64_t n, State& s, const Step& step, T* partials,
                                Storage& storage, const cooperative_groups::grid_group& grid) {
    store_block_sums(n, step, step.setup(s), partials, storage);
    grid.sync();
    T totals[Step::sums];
    grid_totals(partials, totals, storage);
    if (threadIdx.x == 0) step.finish(s, totals);
    __syncthreads();
}

// `count` iterations of the steps in one cooperative launch: no launch, and no kernel boundary,
// between steps; one grid barrier per step replaces them. Each block keeps the scalars in
// shared memory; block 0 stores them at the end. Consecutive steps use alternate halves of
// the partials (a block may start storing the next step's sums while another still reads this
// step's). Traffic: that of the steps, plus gridDim.x * Sums values read per block and step.
template <typename T, typename State, typename... Steps>
__global__ void __launch_bounds__(block_size)
    fused_iterations_kernel(std::int64_t n, State* state, T* partials, std::int64_t count,
                            Steps... steps) {
    __shared__ State s;
    __shared__ typename cub::BlockReduce<T, block_size>::TempStorage storage;
    if (threadIdx.x == 0) s = *state;
    __syncthreads();
    const cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    constexpr int half = fused_step_sums * fused_reduction_blocks;
    int set = 0;
    const auto run = [&](const auto& step) {
        if (!s.running()) return;
        persistent_step(n, s, step, partials + set * half, storage, grid);
        set ^= 1;
    };
    for (std::int64_t k = 0; k < count && s.running(); ++k) (run(steps), ...);
    if (blockIdx.x == 0 && threadIdx.x == 0) *state = s;
}

// How many blocks of `kernel` the device holds at once (once per kernel).
template <typename Kernel>
unsigned resident_blocks(const CudaBackend& cuda, Kernel kernel) {
    static const unsigned resident = [&] {
        int per_sm = 0, sms = 0;
        SIMRUN_CUDA_CHECK(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_size, 0));
        SIMRUN_CUDA_CHECK(
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, cuda.device()));
        return static_cast<unsigned>(std::max(1, per_sm * sms));
    }();
    return resident;
}

// The grid: one block per 256 rows, at most as many blocks as the device holds at once (one
// wave: a second, partial wave would leave SMs idle at its end; and a cooperative launch must
// fit) and fused_reduction_blocks. It depends on n and the device only, so the summation order
// is fixed.
template <typename Kernel>
unsigned fused_grid(const CudaBackend& cuda, std::int64_t n, Kernel kernel) {
    return std::min(grid_for(static_cast<std::size_t>(n), fused_reduction_blocks),
                    resident_blocks(cuda, kernel));
}

// The persistent kernel serves systems of up to this many rows per resident thread; larger ones
// get a kernel per step. Measured on an H200 (CG, 5-point Poisson, double, per iteration):
// 7.0-8.6 us against 10.4-12.9 us at 128^2 and 256^2, 48 against 53 us at 1024^2 (4 rows per
// thread), but 583 against 552 us at 4096^2 (62 rows per thread), where launches cost little
// and the kernel per step, each with its own registers, streams faster.
constexpr std::int64_t persistent_rows_per_thread = 8;

template <typename T, typename State, typename... Steps>
void fused_iterations(const Backend& backend, std::int64_t n, State* state,
                      FusedWorkspace<T> workspace, std::int64_t count, const Steps&... steps) {
    if (n == 0 || count < 1) return;
    const CudaBackend& cuda = as_cuda(backend);
    const auto kernel = fused_iterations_kernel<T, State, Steps...>;
    if (n <= persistent_rows_per_thread * block_size * resident_blocks(cuda, kernel)) {
        cudaLaunchAttribute cooperative{};
        cooperative.id = cudaLaunchAttributeCooperative;
        cooperative.val.cooperative = 1;
        cudaLaunchConfig_t config{};
        config.gridDim = dim3(fused_grid(cuda, n, kernel));
        config.blockDim = dim3(block_size);
        config.stream = cuda.stream();
        config.attrs = &cooperative;
        config.numAttrs = 1;
        SIMRUN_CUDA_CHECK(
            cudaLaunchKernelEx(&config, kernel, n, state, workspace.partials, count, steps...));
        return;
    }
    const auto launch = [&](const auto& step) {
        using Step = std::decay_t<decltype(step)>;
        const auto kernel = [] {
            if constexpr (sizeof(T) == 4) {
                return fused_step_kernel_full_sm<T, State, Step>;
            } else {
                return fused_step_kernel<T, State, Step>;
            }
        }();
        kernel<<<fused_grid(cuda, n, kernel), block_size, 0, cuda.stream()>>>(
            n, state, workspace.partials, workspace.ticket, step);
        SIMRUN_CUDA_CHECK_LAUNCH(fused_step_kernel);
    };
    for (std::int64_t k = 0; k < count; ++k) (launch(steps), ...);
}

#include "kernels/unified/bicgstab_kernels.inc.hpp"
#include "kernels/unified/cg_kernels.inc.hpp"
#include "kernels/unified/jacobi_kernels.inc.hpp"

}  // namespace

#include "kernels/unified/kernel_table.inc.hpp"

}  // namespace simrun::solvers::cuda

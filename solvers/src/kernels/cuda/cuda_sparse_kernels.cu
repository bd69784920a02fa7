// The CUDA back-end's sparse matrix-vector products (CSR in three row bins on forked streams,
// ELL, COO, dense), the multicolour SOR sweep and the compensated dot product. No sum uses
// atomics: each is reduced in an order fixed by the sizes, so every run gives the same bits.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <string>
#include <type_traits>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "cuda_sparse_kernels.cuh"
#include "kernels/unified/cg_sweeps_in_block.hpp"
#include "kernels/unified/row_products.hpp"
#include "simrun/solvers/base/errors.hpp"

namespace simrun::solvers::cuda {
namespace {

constexpr int warp_size = 32;
constexpr unsigned full_mask = 0xffffffffu;
constexpr int reduction_block = 256;  // both passes of dot_compensated
constexpr int row_block = 256;        // thread-per-row and warp-per-row kernels
constexpr int long_row_block = 512;   // block-per-row kernel (csr_binning.cpp's long_limit)
constexpr int coo_block = 256;
constexpr int coo_items = 4;  // consecutive entries per thread
constexpr int coo_tile = coo_block * coo_items;

unsigned blocks_for(std::int64_t threads, int block) {
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

// ---------------------------------------------------------------------------------------------
// Compensated dot product.

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

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
// COO, rows sorted: a segmented sum over fixed tiles of coo_tile entries. Each block sums the
// rows that start and end inside its tile and writes them; for a row that crosses a tile edge
// it writes its part to first_sum[tile] (the tile's first row, begun in an earlier tile) or
// last_sum[tile] (the tile's last row, going on into the next). A second kernel adds the parts
// of each crossing row in tile order. Rows with no entries are zeroed by the thread that sees
// the gap. The order of every sum depends on nnz alone.

// (row, partial sum of that row); combining keeps the right row and adds when rows match.
// Associative on sorted rows, so a block scan of the per-thread tails carries each row's sum
// from thread to thread.
template <typename T>
struct RowPartial {
    std::int32_t row;
    T value;
};

struct SameRowSum {
    template <typename T>
    __device__ __forceinline__ RowPartial<T> operator()(const RowPartial<T>& a,
                                                        const RowPartial<T>& b) const {
        return {b.row, a.row == b.row ? a.value + b.value : b.value};
    }
};

// Traffic: nnz (row, column, value) + x gathered + one write per row (+ two neighbouring row
// indices per thread and per tile, from cache) + at most two partial sums per tile.
template <typename T>
__global__ void __launch_bounds__(coo_block)
    coo_tile_kernel(std::int32_t rows, std::int64_t nnz, const std::int32_t* __restrict__ row,
                    const std::int32_t* __restrict__ col, const T* __restrict__ values,
                    const T* __restrict__ x, T* __restrict__ y, T* __restrict__ first_sum,
                    T* __restrict__ last_sum) {
    using LoadIndex =
        cub::BlockLoad<std::int32_t, coo_block, coo_items, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using LoadValue = cub::BlockLoad<T, coo_block, coo_items, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using Scan = cub::BlockScan<RowPartial<T>, coo_block>;
    __shared__ union {
        typename LoadIndex::TempStorage index;
        typename LoadValue::TempStorage value;
        typename Scan::TempStorage scan;
    } storage;

    const std::int64_t tile_begin = blockIdx.x * std::int64_t(coo_tile);
    const int valid = nnz - tile_begin < coo_tile ? static_cast<int>(nnz - tile_begin) : coo_tile;
    const std::int64_t tile_last = tile_begin + valid - 1;
    std::int32_t r[coo_items];
    std::int32_t c[coo_items];
    T v[coo_items];
    LoadIndex(storage.index).Load(row + tile_begin, r, valid, INT_MAX);
    __syncthreads();
    LoadIndex(storage.index).Load(col + tile_begin, c, valid, 0);
    __syncthreads();
    LoadValue(storage.value).Load(values + tile_begin, v, valid, T(0));
    __syncthreads();

    // This thread's entries are tile_begin + first + [0, count).
    const int first = static_cast<int>(threadIdx.x) * coo_items;
    const int count = max(0, min(coo_items, valid - first));
    T p[coo_items];
#pragma unroll
    for (int k = 0; k < coo_items; ++k) p[k] = k < count ? v[k] * __ldg(x + c[k]) : T(0);

    // The sum of this thread's last run of equal rows, scanned across the block.
    RowPartial<T> tail{INT_MAX, T(0)};
#pragma unroll
    for (int k = 0; k < coo_items; ++k) {
        if (k < count) {
            tail.value = (k > 0 && r[k] == tail.row) ? tail.value + p[k] : p[k];
            tail.row = r[k];
        }
    }
    RowPartial<T> before;
    Scan(storage.scan).ExclusiveScan(tail, before, SameRowSum{});

    // The tile's first row, when it began in an earlier tile, is summed there by the carry pass.
    const std::int32_t tile_first_row = row[tile_begin];
    const bool first_row_continues = tile_begin > 0 && row[tile_begin - 1] == tile_first_row;
    T running = 0;
#pragma unroll
    for (int k = 0; k < coo_items; ++k) {
        if (k < count) {
            const std::int64_t g = tile_begin + first + k;
            const std::int32_t current = r[k];
            const std::int32_t previous = k > 0 ? r[k > 0 ? k - 1 : 0] : (g > 0 ? row[g - 1] : -1);
            if (current != previous) {
                for (std::int32_t empty = previous + 1; empty < current; ++empty) y[empty] = T(0);
                running = p[k];
            } else if (k == 0) {
                running = (threadIdx.x > 0 ? before.value : T(0)) + p[k];
            } else {
                running += p[k];
            }
            const bool has_next = g + 1 < nnz;
            const std::int32_t next =
                k + 1 < count ? r[k + 1 < coo_items ? k + 1 : k] : (has_next ? row[g + 1] : -1);
            const bool started_in_tile = !(first_row_continues && current == tile_first_row);
            if (!has_next || next != current) {
                if (started_in_tile) {
                    y[current] = running;
                } else {
                    first_sum[blockIdx.x] = running;
                }
                if (!has_next) {
                    for (std::int32_t empty = current + 1; empty < rows; ++empty) y[empty] = T(0);
                }
            } else if (g == tile_last) {
                last_sum[blockIdx.x] = running;
                if (!started_in_tile) first_sum[blockIdx.x] = running;
            }
        }
    }
}

// One thread per tile whose last row goes on into the next tile and began in this one: adds the
// row's parts tile by tile. Traffic: a few row indices and two partial sums per tile.
template <typename T>
__global__ void __launch_bounds__(row_block)
    coo_carry_kernel(std::int64_t nnz, std::int64_t tiles, const std::int32_t* __restrict__ row,
                     const T* __restrict__ first_sum, const T* __restrict__ last_sum,
                     T* __restrict__ y) {
    const std::int64_t tile = blockIdx.x * std::int64_t(row_block) + threadIdx.x;
    if (tile + 1 >= tiles) return;  // the last tile's rows all end in it
    const std::int64_t begin = tile * coo_tile;
    const std::int64_t end = begin + coo_tile;  // a full tile: not the last one
    const std::int32_t r = row[end - 1];
    if (row[end] != r) return;                                       // ends in this tile
    if (tile > 0 && row[begin] == r && row[begin - 1] == r) return;  // began in an earlier one
    T sum = last_sum[tile];
    for (std::int64_t t = tile + 1; t < tiles; ++t) {
        sum += first_sum[t];
        const std::int64_t t_end = (t + 1) * coo_tile;
        if (t_end >= nnz || row[t_end] != r) break;
    }
    y[r] = sum;
}

std::int64_t coo_tiles(std::int64_t nnz) { return (nnz + coo_tile - 1) / coo_tile; }

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
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

// A small system's rows in one block: groups of lanes share the rows (a group a row, its
// entries split among the lanes and summed by shuffles, so a long row costs a few dependent
// loads rather than one per entry). For r in [begin, end), row_at(r) gives the row i and where
// its entries begin and end in (col, values); f(i, sum_k values_k x_col_k) runs on the row's
// first lane. The entries are read through the read-only cache where read_only (an operator
// in global memory), with plain loads otherwise (they may lie in shared memory); x always with
// plain loads: the block may have written it.
// Lanes per row: as many as keep the rows in one round over the block (8 up to 128 rows, 4 up
// to 256, 2 up to 512), 2 up to 1024 rows (two rounds), one above. Measured on an H200, cycles
// of nos3's product in one block (960 rows of 16.5 entries in shared memory): 11700 with 8
// lanes (8 rounds), 10700 with 4, 10000 with 2, 10700 with 1 (gr_900: 12.4, 11.4, 11.2 us per
// SSOR-PCG iteration with 8, 4, 2); on an H100, us per iteration of a 20^3 Laplacian's colours
// of 4000 rows of 7 entries in global memory: 121 with 8 lanes (32 rounds), 90 with two (8
// rounds), 71-75 with one (4 rounds). The lane count a run-time value rather than a template
// argument cost nos3 10-14 us per iteration.
constexpr int sor_block_threads = 1024;

struct RowSpan {
    std::int32_t row, begin, end;
};

template <bool read_only, typename V>
__device__ __forceinline__ V entry_load(const V* p) {
    if constexpr (read_only) {
        return __ldg(p);
    } else {
        return *p;
    }
}

template <int lanes, bool read_only, typename T, typename RowAt, typename F>
__device__ void group_row_sums_with(std::int32_t begin, std::int32_t end, RowAt row_at,
                                    const std::int32_t* col, const T* values, const T* x, F f) {
    constexpr int groups = sor_block_threads / lanes;
    const int group = static_cast<int>(threadIdx.x) / lanes;
    const int lane = static_cast<int>(threadIdx.x) % lanes;
    // A warp's first group: past the rows, the warp has none in this round or a later one.
    const int warp_first = static_cast<int>(threadIdx.x) / warp_size * (warp_size / lanes);
    // The same trip count for every thread of a warp: the shuffles need the whole warp.
    for (std::int32_t base = begin; base < end; base += groups) {
        if (base + warp_first >= end) break;
        const std::int32_t r = base + group;
        const RowSpan span = r < end ? row_at(r) : RowSpan{-1, 0, 0};
        // Four entries a lane at a time, their loads issued together (one lane may have a
        // whole row).
        T sum = 0;
        std::int32_t k = span.begin + lane;
        for (; k + 3 * lanes < span.end; k += 4 * lanes) {
            std::int32_t j[4];
            T value[4];
#pragma unroll
            for (int u = 0; u < 4; ++u) j[u] = entry_load<read_only>(col + k + u * lanes);
#pragma unroll
            for (int u = 0; u < 4; ++u) value[u] = entry_load<read_only>(values + k + u * lanes);
#pragma unroll
            for (int u = 0; u < 4; ++u) sum += value[u] * x[j[u]];
        }
        for (; k < span.end; k += lanes) {
            sum += entry_load<read_only>(values + k) * x[entry_load<read_only>(col + k)];
        }
        if constexpr (lanes > 1) {
#pragma unroll
            for (int width = lanes / 2; width > 0; width /= 2) {
                sum += __shfl_xor_sync(full_mask, sum, width, lanes);
            }
        }
        if (span.row >= 0 && lane == 0) f(span.row, sum);
    }
}

template <bool read_only, typename T, typename RowAt, typename F>
__device__ void group_row_sums(std::int32_t begin, std::int32_t end, RowAt row_at,
                               const std::int32_t* col, const T* values, const T* x, F f) {
    const std::int32_t count = end - begin;
    if (count <= sor_block_threads / 8) {
        group_row_sums_with<8, read_only>(begin, end, row_at, col, values, x, f);
    } else if (count <= sor_block_threads / 4) {
        group_row_sums_with<4, read_only>(begin, end, row_at, col, values, x, f);
    } else if (count <= sor_block_threads) {
        group_row_sums_with<2, read_only>(begin, end, row_at, col, values, x, f);
    } else {
        group_row_sums_with<1, read_only>(begin, end, row_at, col, values, x, f);
    }
}

// The positions [begin, end) of the sweeps: f(i, sum_{j != i} a_ij x_j) for their rows.
template <typename T, typename F>
__device__ void colour_rows(const MulticolourSweepsView<T>& m, std::int32_t begin, std::int32_t end,
                            const T* x, F f) {
    group_row_sums<false>(
        begin, end,
        [&m](std::int32_t r) {
            return RowSpan{m.rows[r], m.row_ptr[r], m.row_ptr[r + 1]};
        },
        m.col, m.values, x, f);
}

// The colour offsets in shared memory when there are few enough colours (a triangular solve's
// levels may be thousands): the sweeps' view then points there, so the first load of each
// colour pass is not a global one. The block waits before using them.
constexpr int shared_colour_offsets = 256;

template <typename T>
__device__ MulticolourSweepsView<T> with_shared_offsets(MulticolourSweepsView<T> m,
                                                        std::int32_t* shared) {
    if (m.colours > shared_colour_offsets) return m;
    for (int c = static_cast<int>(threadIdx.x); c <= m.colours; c += blockDim.x) {
        shared[c] = m.offsets[c];
    }
    m.offsets = shared;
    return m;
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

// ---------------------------------------------------------------------------------------------
// Host entry points.

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

template <typename T>
void ell_spmv(const Backend& backend, const EllView<T>& a, const T* x, T* y) {
    if (a.rows <= 0) return;
    ell_kernel<T><<<blocks_for(a.rows, row_block), row_block, 0, as_cuda(backend).stream()>>>(
        a.rows, a.col, a.values, a.row_length, x, y);
    SIMRUN_CUDA_CHECK_LAUNCH(ell_kernel);
}

// Two partial sums (first and last row) per tile when the entries span more than one tile.
template <typename T>
std::size_t coo_workspace_bytes(std::int32_t, std::int64_t nnz) {
    const std::int64_t tiles = coo_tiles(nnz);
    return tiles > 1 ? 2 * static_cast<std::size_t>(tiles) * sizeof(T) : 0;
}

template <typename T>
void coo_spmv(const Backend& backend, const CooView<T>& a, const T* x, T* y) {
    if (a.rows <= 0) return;
    const cudaStream_t stream = as_cuda(backend).stream();
    if (a.nnz == 0) {
        SIMRUN_CUDA_CHECK(
            cudaMemsetAsync(y, 0, static_cast<std::size_t>(a.rows) * sizeof(T), stream));
        return;
    }
    const std::size_t needed = coo_workspace_bytes<T>(a.rows, a.nnz);
    if (a.workspace_bytes < needed || (needed > 0 && a.workspace == nullptr)) {
        throw DimensionMismatch("coo_spmv: the workspace has " + std::to_string(a.workspace_bytes) +
                                " bytes, " + std::to_string(needed) + " are needed for " +
                                std::to_string(a.nnz) + " nonzeros");
    }
    const std::int64_t tiles = coo_tiles(a.nnz);
    T* first_sum = needed > 0 ? static_cast<T*>(a.workspace) : nullptr;
    T* last_sum = needed > 0 ? first_sum + tiles : nullptr;
    coo_tile_kernel<T><<<static_cast<unsigned>(tiles), coo_block, 0, stream>>>(
        a.rows, a.nnz, a.row, a.col, a.values, x, y, first_sum, last_sum);
    SIMRUN_CUDA_CHECK_LAUNCH(coo_tile_kernel);
    if (tiles > 1) {
        coo_carry_kernel<T><<<blocks_for(tiles, row_block), row_block, 0, stream>>>(
            a.nnz, tiles, a.row, first_sum, last_sum, y);
        SIMRUN_CUDA_CHECK_LAUNCH(coo_carry_kernel);
    }
}

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

#define SIMRUN_INSTANTIATE_SPARSE_KERNELS(T)                                           \
    template T dot_compensated<T>(const Backend&, std::size_t, const T*, const T*);    \
    template void csr_spmv<T>(const Backend&, const CsrView<T>&, const T*, T*);        \
    template void ell_spmv<T>(const Backend&, const EllView<T>&, const T*, T*);        \
    template void coo_spmv<T>(const Backend&, const CooView<T>&, const T*, T*);        \
    template std::size_t coo_workspace_bytes<T>(std::int32_t, std::int64_t);           \
    template void dense_spmv<T>(const Backend&, const DenseView<T>&, const T*, T*);    \
    template void sor_colour_sweep<T>(const Backend&, const MulticolourSweepsView<T>&, \
                                      std::int32_t, std::int32_t, const T*, T*);       \
    template void sor_sweeps<T>(const Backend&, const MulticolourSweepsView<T>&,       \
                                const std::int32_t*, SweepOrder, const T*, T*);        \
    template bool fuses_cg_sweeps<T>(std::int64_t);                                    \
    template void cg_sweep_iterations<T>(const Backend&, const RowMatrixView<T>&,      \
                                         const CgSweepVectors<T>&, CgScalars<T>*, std::int64_t);

SIMRUN_INSTANTIATE_SPARSE_KERNELS(float)
SIMRUN_INSTANTIATE_SPARSE_KERNELS(double)

#undef SIMRUN_INSTANTIATE_SPARSE_KERNELS

}  // namespace simrun::solvers::cuda

// The CUDA back-end's COO product (cuda_sparse_kernels.cuh): a segmented sum over fixed tiles
// of entries and a carry pass for the rows that cross a tile's edge. No atomics: the order of
// every sum depends on nnz alone, so every run gives the same bits.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>
#include <string>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "cuda_sparse_kernels.cuh"
#include "cuda_sparse_launch.cuh"
#include "simrun/solvers/base/errors.hpp"

namespace simrun::solvers::cuda {
namespace {

constexpr int coo_block = 256;
constexpr int coo_items = 4;  // consecutive entries per thread
constexpr int coo_tile = coo_block * coo_items;

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

}  // namespace

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

#define SIMRUN_INSTANTIATE_COO_KERNELS(T)                                       \
    template void coo_spmv<T>(const Backend&, const CooView<T>&, const T*, T*); \
    template std::size_t coo_workspace_bytes<T>(std::int32_t, std::int64_t);

SIMRUN_INSTANTIATE_COO_KERNELS(float)
SIMRUN_INSTANTIATE_COO_KERNELS(double)

#undef SIMRUN_INSTANTIATE_COO_KERNELS

}  // namespace simrun::solvers::cuda

#pragma once
// A small system's rows summed by one block of threads (cuda_sor_sweeps.cu and
// cuda_cg_sweeps.cu): groups of lanes per row, the multicolour sweeps' rows, and the colour
// offsets in shared memory.
#include <cstdint>

#include "base/kernel_table.hpp"
#include "cuda_sparse_launch.cuh"

namespace simrun::solvers::cuda {

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
inline constexpr int sor_block_threads = 1024;

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
inline constexpr int shared_colour_offsets = 256;

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

}  // namespace simrun::solvers::cuda

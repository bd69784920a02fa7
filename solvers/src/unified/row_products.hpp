#pragma once
// One row of A times a vector, for the formats whose rows a thread computes alone (DIA in both
// storages, ELLPACK-R, CSR). `x` is any callable giving x_j, so a fused kernel can form the
// vector on the fly (CG's new direction from r and the old one) instead of reading it from
// memory. Written once for the CPU and the GPU; the entries are added in storage order.
#include <cstdint>

#include "simrun/solvers/host_device.hpp"
#include "simrun/solvers/kernel_table.hpp"

namespace simrun::solvers {

// Traffic per row: D values (or one mask byte) + x_j for each stored diagonal.
template <typename T, typename X>
SIMRUN_HOST_DEVICE inline T row_product(const DiaView<T>& a, std::int64_t i, const X& x) {
    T sum = 0;
    if (a.row_masks != nullptr) {
        const unsigned mask = a.row_masks[i];
        for (int d = 0; d < a.num_diagonals; ++d) {
            if ((mask >> d) & 1u) sum += a.constants[d] * x(i + a.offsets[d]);
        }
        return sum;
    }
    for (int d = 0; d < a.num_diagonals; ++d) {
        const std::int64_t j = i + a.offsets[d];
        if (j >= 0 && j < a.n) sum += a.values[d * a.n + i] * x(j);
    }
    return sum;
}

// Traffic per row: the row length + its entries (value and column) + x_j for each.
template <typename T, typename X>
SIMRUN_HOST_DEVICE inline T row_product(const EllView<T>& a, std::int64_t i, const X& x) {
    T sum = 0;
    const std::int32_t length = a.row_length[i];
    for (std::int32_t k = 0; k < length; ++k) {
        const std::int64_t slot = std::int64_t{k} * a.rows + i;
        sum += a.values[slot] * x(a.col[slot]);
    }
    return sum;
}

// Traffic per row: two row pointers + its entries (value and column) + x_j for each.
template <typename T, typename X>
SIMRUN_HOST_DEVICE inline T row_product(const CsrView<T>& a, std::int64_t i, const X& x) {
    T sum = 0;
    const std::int32_t end = a.row_ptr[i + 1];
    for (std::int32_t k = a.row_ptr[i]; k < end; ++k) sum += a.values[k] * x(a.col[k]);
    return sum;
}

// A value of an array the kernel only reads (through the GPU's read-only cache).
template <typename T>
SIMRUN_HOST_DEVICE inline T read_only(const T* p) {
#if defined(__CUDA_ARCH__)
    return __ldg(p);
#else
    return *p;
#endif
}

// x_j read from memory.
template <typename T>
struct VectorEntries {
    const T* x;
    SIMRUN_HOST_DEVICE T operator()(std::int64_t j) const { return read_only(x + j); }
};

}  // namespace simrun::solvers

#pragma once
// One row of A times a vector, for the formats whose rows a thread computes alone (DIA in both
// storages, ELLPACK-R, CSR). `x` is any callable giving x_j, so a fused kernel can form the
// vector on the fly (CG's new direction from r and the old one) instead of reading it from
// memory. Written once for the CPU and the GPU; the entries are added in storage order.
#include <cstdint>
#include <variant>

#include "base/kernel_table.hpp"
#include "simrun/solvers/base/host_device.hpp"

namespace simrun::solvers {

// The entry of diagonal d in a stencil row with this mask: the diagonal's constant, 1 in an
// identity row (whose mask holds the main diagonal alone), 0 where the row lacks it.
template <typename T>
SIMRUN_HOST_DEVICE inline T stencil_entry(const DiaView<T>& a, unsigned mask, int d) {
    if (!((mask >> d) & 1u)) return T(0);
    // Bit 7 is the identity flag only where no eighth diagonal takes it.
    return a.num_diagonals < 8 && (mask & stencil_unit_row) ? T(1) : a.constants[d];
}

// What a DIA row's terms are looked up by, read once per row: its mask (stencil storage), its
// class (row-class storage), or nothing (general storage).
template <typename T>
SIMRUN_HOST_DEVICE inline unsigned dia_row_key(const DiaView<T>& a, std::int64_t i) {
    return a.row_masks != nullptr     ? a.row_masks[i]
           : a.row_classes != nullptr ? a.row_classes[i]
                                      : 0u;
}

// Entry d of DIA row i with its key, in any storage (zero where the row lacks it).
template <typename T>
SIMRUN_HOST_DEVICE inline T dia_entry(const DiaView<T>& a, unsigned key, int d, std::int64_t i) {
    if (a.row_masks != nullptr) return stencil_entry(a, key, d);
    if (a.row_classes != nullptr) return a.class_values[key * a.num_diagonals + d];
    const std::int64_t j = i + a.offsets[d];
    return j >= 0 && j < a.n ? a.values[d * a.n + i] : T(0);
}

template <typename T>
SIMRUN_HOST_DEVICE inline T dia_entry(const DiaView<T>& a, int d, std::int64_t i) {
    return dia_entry(a, dia_row_key(a, i), d, i);
}

// Term d of DIA row i (zero when the row lacks it): the stencil's entry where the row's mask
// has bit d, the class's nonzero entry, or the stored value when column i + offsets[d] lies in
// the matrix (x_j is read only then).
template <typename T, typename X>
SIMRUN_HOST_DEVICE inline T dia_term(const DiaView<T>& a, unsigned key, int d, std::int64_t i,
                                     const X& x) {
    const std::int64_t j = i + a.offsets[d];
    if (a.row_masks != nullptr) return ((key >> d) & 1u) ? stencil_entry(a, key, d) * x(j) : T(0);
    if (a.row_classes != nullptr) {
        const T value = a.class_values[key * a.num_diagonals + d];
        return value != T(0) ? value * x(j) : T(0);
    }
    return j >= 0 && j < a.n ? a.values[d * a.n + i] * x(j) : T(0);
}

// Traffic per row: D values (or one mask or class byte) + x_j for each stored diagonal.
template <typename T, typename X>
SIMRUN_HOST_DEVICE inline T row_product(const DiaView<T>& a, std::int64_t i, const X& x) {
    const unsigned key = dia_row_key(a, i);
    T sum = 0;
    // Eight diagonals' terms formed together (their loads in flight at once), then added in
    // order: a loop of one term at a time waits for each load in turn (nos3's 21 diagonals in
    // one GPU block: about 14000 cycles a product).
    constexpr int chunk = 8;
    int d = 0;
    for (; d + chunk <= a.num_diagonals; d += chunk) {
        T term[chunk];
        SIMRUN_UNROLL
        for (int u = 0; u < chunk; ++u) term[u] = dia_term(a, key, d + u, i, x);
        SIMRUN_UNROLL
        for (int u = 0; u < chunk; ++u) sum += term[u];
    }
    for (; d < a.num_diagonals; ++d) sum += dia_term(a, key, d, i, x);
    return sum;
}

// A DIA view whose diagonal count D is known when compiling: the loop over the diagonals is
// unrolled, so a thread issues all its loads at once (more bytes in flight per thread).
template <typename T, int D>
struct FixedDiagonals {
    DiaView<T> a;
};

template <typename T, int D, typename X>
SIMRUN_HOST_DEVICE inline T row_product(const FixedDiagonals<T, D>& f, std::int64_t i, const X& x) {
    const unsigned key = dia_row_key(f.a, i);
    T sum = 0;
    SIMRUN_UNROLL
    for (int d = 0; d < D; ++d) sum += dia_term(f.a, key, d, i, x);
    return sum;
}

// Calls f with the view as FixedDiagonals for the grid stencils' counts (3, 5, 7 and 9
// diagonals), as it is otherwise.
template <typename T, typename F>
void with_diagonal_count(const DiaView<T>& a, F&& f) {
    switch (a.num_diagonals) {
        case 3:
            return f(FixedDiagonals<T, 3>{a});
        case 5:
            return f(FixedDiagonals<T, 5>{a});
        case 7:
            return f(FixedDiagonals<T, 7>{a});
        case 9:
            return f(FixedDiagonals<T, 9>{a});
        default:
            return f(a);
    }
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

// Calls f with the row view as the type it holds (DIA as FixedDiagonals where it can be), so
// a kernel is compiled for each format.
template <typename T, typename F>
void with_row_view(const RowMatrixView<T>& a, F&& f) {
    if (const auto* dia = std::get_if<DiaView<T>>(&a)) {
        with_diagonal_count(*dia, f);
    } else {
        std::visit(f, a);
    }
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

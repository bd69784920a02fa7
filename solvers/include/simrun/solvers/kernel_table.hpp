#pragma once
// The kernels every back-end provides, declared once. Each back-end fills one table per value
// type; algorithms call them through Backend::kernels<T>() and never branch on the back-end.
// Pointers are to memory of the back-end that owns the table. Sizes are element counts.
#include <cstddef>
#include <cstdint>

namespace simrun::solvers {

class Backend;

// A DIA matrix as kernels see it: values are diagonal-major, values[d * n + i] = A(i, i +
// offsets[d]); entries whose column falls outside [0, n) are ignored.
template <typename T>
struct DiaView {
    std::int64_t n;
    int num_diagonals;
    const int* offsets;
    const T* values;
};

template <typename T>
struct KernelTable {
    // x = value. Traffic: n writes.
    void (*fill)(const Backend&, std::size_t n, T value, T* x);
    // y = y + alpha x. Traffic: 2n reads, n writes.
    void (*axpy)(const Backend&, std::size_t n, T alpha, const T* x, T* y);
    // y = x + beta y. Traffic: 2n reads, n writes.
    void (*xpby)(const Backend&, std::size_t n, const T* x, T beta, T* y);
    // z = x .* y (element-wise). Traffic: 2n reads, n writes.
    void (*multiply)(const Backend&, std::size_t n, const T* x, const T* y, T* z);
    // Deterministic dot product x . y returned to the host: the same inputs give the same bits
    // on every run. Traffic: 2n reads.
    T (*dot)(const Backend&, std::size_t n, const T* x, const T* y);
    // y = A x. Traffic: num_diagonals * n matrix values + x (about n with caching) + n writes.
    void (*dia_spmv)(const Backend&, const DiaView<T>& a, const T* x, T* y);
    // CG step 1: p = z + beta p. Traffic: 2n reads, n writes.
    void (*cg_step_1)(const Backend&, std::size_t n, T beta, const T* z, T* p);
    // CG step 2: x = x + alpha p, r = r - alpha q. Traffic: 4n reads, 2n writes.
    void (*cg_step_2)(const Backend&, std::size_t n, T alpha, const T* p, const T* q, T* x, T* r);
};

}  // namespace simrun::solvers

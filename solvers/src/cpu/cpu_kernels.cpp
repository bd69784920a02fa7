#include "cpu/cpu_kernels.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "simrun/solvers/backend.hpp"
#include "simrun/solvers/host_device.hpp"

namespace simrun::solvers::cpu {
namespace {

template <typename F>
void parallel_for(const Backend&, std::size_t n, F f) {
    const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < count; ++i) f(static_cast<std::size_t>(i));
}

#include "unified/elementwise_kernels.inc.hpp"

// Reductions are summed in fixed chunks, then the chunk sums in chunk order, so the result is
// the same for any number of threads.
constexpr std::size_t reduction_chunk = 4096;

// Traffic: 2n reads.
template <typename T>
T dot(const Backend&, std::size_t n, const T* x, const T* y) {
    const auto chunks = static_cast<std::int64_t>((n + reduction_chunk - 1) / reduction_chunk);
    std::vector<T> partial(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
        const std::size_t begin = static_cast<std::size_t>(c) * reduction_chunk;
        const std::size_t end = std::min(n, begin + reduction_chunk);
        T sum = 0;
        for (std::size_t i = begin; i < end; ++i) sum += x[i] * y[i];
        partial[static_cast<std::size_t>(c)] = sum;
    }
    T total = 0;
    for (T value : partial) total += value;
    return total;
}

// y = A x. Traffic: num_diagonals * n values, x (~n, reused from cache), n writes.
template <typename T>
void dia_spmv(const Backend&, const DiaView<T>& a, const T* x, T* y) {
    const std::int64_t n = a.n;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
        T sum = 0;
        for (int d = 0; d < a.num_diagonals; ++d) {
            const std::int64_t j = i + a.offsets[d];
            if (j >= 0 && j < n) sum += a.values[d * n + i] * x[j];
        }
        y[i] = sum;
    }
}

}  // namespace

#include "unified/kernel_table.inc.hpp"

}  // namespace simrun::solvers::cpu

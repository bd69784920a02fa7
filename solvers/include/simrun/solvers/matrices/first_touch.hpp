#pragma once
// Sizing a large new host array that a parallel pass over rows fills next (a DIA matrix's
// diagonals, a CSR copy): the kernel zeroes each page at its first touch, on one core where the
// vector's own zero fill makes it. Touched first by the OpenMP threads in the shares of a static
// schedule over rows, the zeroing is spread over them; the fill then meets pages present.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace simrun::solvers {

// Resizes `v` (empty on entry) to strips * rows value-initialised elements, each strip of `rows`
// elements first touched a page at a time by the threads of `#pragma omp for schedule(static)`
// over its rows. Small arrays (under 16 MiB) are sized plainly.
template <typename T>
void resize_first_touched(std::vector<T>& v, std::size_t rows, std::size_t strips = 1) {
    const std::size_t n = rows * strips;
    if (n * sizeof(T) >= (std::size_t{1} << 24)) {
        v.reserve(n);
        auto* bytes = reinterpret_cast<volatile unsigned char*>(v.data());
        constexpr std::int64_t page = 4096;
        const auto strip_bytes = static_cast<std::int64_t>(rows * sizeof(T));
        for (std::size_t s = 0; s < strips; ++s) {
            volatile unsigned char* strip = bytes + static_cast<std::int64_t>(s) * strip_bytes;
#pragma omp parallel for schedule(static)
            for (std::int64_t at = 0; at < strip_bytes; at += page) strip[at] = 0;
        }
    }
    v.resize(n);
}

}  // namespace simrun::solvers

#pragma once
// Sizing a large new std::vector whose every element a parallel pass writes next (the assembled
// operator, its row scale): the kernel zeroes a page at its first touch, serially where the
// vector's own zero fill makes it. Touching the storage first from the threads that fill it
// spreads that zeroing over them; the fill then meets pages already present.
#include <omp.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace simrun::framework {

// Resizes `v` (empty on entry) to n value-initialised elements, its storage first touched a
// page at a time by the OpenMP threads, thread t the t-th of `parts` equal parts of every one
// of `strips` equal strips (the diagonals of a DIA matrix, each filled in row blocks).
template <typename T>
void resize_touched(std::vector<T>& v, std::size_t n, int parts, std::size_t strips = 1) {
    v.reserve(n);
    auto* bytes = reinterpret_cast<volatile unsigned char*>(v.data());
    const std::size_t strip = n / strips * sizeof(T);
    constexpr std::size_t page = 4096;
#pragma omp parallel for schedule(static, 1) num_threads(parts) if (n * sizeof(T) >= (1u << 24))
    for (int part = 0; part < parts; ++part) {
        for (std::size_t s = 0; s < strips; ++s) {
            const std::size_t begin = s * strip + strip * static_cast<std::size_t>(part) / parts;
            const std::size_t end = s * strip + strip * static_cast<std::size_t>(part + 1) / parts;
            for (std::size_t at = begin; at < end; at += page) bytes[at] = 0;
        }
    }
    v.resize(n);
}

}  // namespace simrun::framework

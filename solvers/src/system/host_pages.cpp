#include "simrun/solvers/system/host_pages.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include <sys/mman.h>

namespace simrun::solvers {

void* allocate_host_pages(std::size_t bytes, std::size_t alignment) noexcept {
    // A size no rounding below can hold (an array new's overflowed size) is no memory.
    if (bytes > std::numeric_limits<std::size_t>::max() - std::max(alignment, huge_page_bytes)) {
        return nullptr;
    }
    if (bytes < large_host_allocation) {
        // aligned_alloc wants a multiple of the alignment.
        return std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
    }
    const std::size_t rounded = (bytes + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
    void* pointer = std::aligned_alloc(huge_page_bytes, rounded);
    // Before the first write, so that the first fault of each 2 MiB already takes a huge page.
    // Advice only: a kernel without THP (or a sanitizer's allocator) leaves 4 KiB pages.
    if (pointer != nullptr) madvise(pointer, rounded, MADV_HUGEPAGE);
    return pointer;
}

}  // namespace simrun::solvers

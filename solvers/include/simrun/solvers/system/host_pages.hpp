#pragma once
// Host memory for large arrays on the kernel's transparent huge pages (2 MiB) where it offers
// them. A set-up that fills gigabytes of new host memory (the assembled matrix, the multigrid
// levels and their transfers) otherwise takes one page fault per 4 KiB: about a million per
// 4 GB, each a trip into the kernel that zeroes one page, which on the GPU machines (a virtual
// machine, THP on request only: `madvise`) took 40% of the set-up of an 8192^2 Poisson problem
// (docs/benchmarks.md). On 2 MiB pages the faults are 512 times fewer.
#include <cstddef>

namespace simrun::solvers {

// Allocations from this size on are placed on huge pages (rounded up to whole ones, and aligned
// to one: at most 4 MiB more address space; memory is taken a huge page at a time as it is
// written). Where the kernel has no huge page at hand it gives 4 KiB pages.
inline constexpr std::size_t large_host_allocation = std::size_t{16} << 20;
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

// `bytes` of host memory aligned to `alignment` (a power of two, at most huge_page_bytes),
// released with std::free; nullptr where there is none (or `bytes` is too large for any
// rounding). From large_host_allocation bytes on,
// the memory is aligned to a huge page and advised to the kernel as huge-page memory
// (madvise MADV_HUGEPAGE; where THP is off the advice changes nothing).
void* allocate_host_pages(std::size_t bytes, std::size_t alignment) noexcept;

}  // namespace simrun::solvers

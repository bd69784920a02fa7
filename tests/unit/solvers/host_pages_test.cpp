// Large host allocations on transparent huge pages: the solver library's allocation
// (allocate_host_pages, the CPU back-end's vectors) and the simrun executable's operator new
// (app/host_pages_new.cpp, linked into this test program too, so that its containers
// allocate as simrun's do). The kernel's own account of each mapping (/proc/self/smaps,
// "THPeligible") says whether huge pages may back it.
#include "simrun/solvers/system/host_pages.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace simrun::solvers {
namespace {

// The kernel's THP mode ("always", "madvise" or "never"; none where it has no THP).
std::optional<std::string> thp_mode() {
    std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string text;
    if (!std::getline(file, text)) return std::nullopt;
    const auto open = text.find('['), close = text.find(']');
    if (open == std::string::npos || close == std::string::npos) return std::nullopt;
    return text.substr(open + 1, close - open - 1);
}

// Whether the kernel may back the mapping holding `address` with huge pages (smaps'
// THPeligible), or none where smaps does not say.
std::optional<bool> huge_page_eligible(const void* address) {
    const auto at = reinterpret_cast<std::uintptr_t>(address);
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool inside = false;
    while (std::getline(smaps, line)) {
        std::uintptr_t begin = 0, end = 0;
        char dash = 0;
        std::istringstream range(line);
        if (range >> std::hex >> begin >> dash >> end && dash == '-') {
            inside = begin <= at && at < end;
        } else if (inside && line.rfind("THPeligible:", 0) == 0) {
            return std::stoi(line.substr(12)) == 1;
        }
    }
    return std::nullopt;
}

// Skips unless the kernel gives huge pages on request only, the mode in which advice decides.
#define SKIP_UNLESS_THP_ON_REQUEST()                                                           \
    if (thp_mode() != "madvise") {                                                             \
        GTEST_SKIP() << "the kernel's THP mode is not madvise (the advice decides only there)"; \
    }

struct Freed {
    void operator()(void* pointer) const { std::free(pointer); }
};

TEST(HostPages, SmallAllocationsKeepTheirAlignmentAndSize) {
    for (const std::size_t alignment : {std::size_t{16}, std::size_t{64}, std::size_t{4096}}) {
        std::unique_ptr<void, Freed> memory(allocate_host_pages(1000, alignment));
        ASSERT_NE(memory, nullptr);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(memory.get()) % alignment, 0u);
        std::memset(memory.get(), 1, 1000);
    }
}

TEST(HostPages, LargeAllocationsStartOnAHugePageAndAreAdvised) {
    const std::size_t bytes = large_host_allocation + 12345;  // not a whole number of pages
    std::unique_ptr<void, Freed> memory(allocate_host_pages(bytes, 64));
    ASSERT_NE(memory, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(memory.get()) % huge_page_bytes, 0u);
    std::memset(memory.get(), 1, bytes);  // the whole size is usable
    SKIP_UNLESS_THP_ON_REQUEST();
    const std::optional<bool> eligible = huge_page_eligible(memory.get());
    if (!eligible) GTEST_SKIP() << "/proc/self/smaps has no THPeligible";
    EXPECT_TRUE(*eligible);
    // The check can fail: a mapping of its own (not in a range another allocation advised)
    // without the advice is not eligible.
    void* plain = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(plain, MAP_FAILED);
    EXPECT_EQ(huge_page_eligible(plain), std::optional<bool>(false));
    munmap(plain, bytes);
}

TEST(HostPages, TheExecutablesLargeContainersAreAdvised) {
    SKIP_UNLESS_THP_ON_REQUEST();
    const std::vector<double> large(large_host_allocation / sizeof(double) + 1, 1.0);
    const std::optional<bool> eligible = huge_page_eligible(large.data());
    if (!eligible) GTEST_SKIP() << "/proc/self/smaps has no THPeligible";
    EXPECT_TRUE(*eligible);
}

}  // namespace
}  // namespace simrun::solvers

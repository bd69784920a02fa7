// The executable's operator new: large allocations on huge pages (solvers/base/host_pages.hpp).
// The set-up's big arrays are standard containers (a matrix's diagonals, a level's transfer
// weights), so replacing the global allocation functions ([new.delete]) reaches all of them;
// the libraries leave a program that links them its own. Every form that allocates without an
// alignment of its own is replaced (single and array, throwing and nothrow), and every
// matching release frees, so that no memory passes between this allocation and another one's
// release (a sanitizer's replacement, say). The aligned forms keep the C++ library's.
#include <cstdlib>
#include <new>

#include "simrun/solvers/system/host_pages.hpp"

namespace {

void* allocate(std::size_t bytes) noexcept {
    return simrun::solvers::allocate_host_pages(bytes == 0 ? 1 : bytes,
                                                __STDCPP_DEFAULT_NEW_ALIGNMENT__);
}

void* allocate_or_throw(std::size_t bytes) {
    for (;;) {
        if (void* pointer = allocate(bytes)) return pointer;
        const std::new_handler handler = std::get_new_handler();
        if (handler == nullptr) throw std::bad_alloc();
        handler();
    }
}

void* allocate_or_null(std::size_t bytes) noexcept {
    try {
        return allocate_or_throw(bytes);
    } catch (...) {
        return nullptr;
    }
}

}  // namespace

void* operator new(std::size_t bytes) { return allocate_or_throw(bytes); }
void* operator new[](std::size_t bytes) { return allocate_or_throw(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
    return allocate_or_null(bytes);
}
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept {
    return allocate_or_null(bytes);
}

void operator delete(void* pointer) noexcept { std::free(pointer); }
void operator delete[](void* pointer) noexcept { std::free(pointer); }
void operator delete(void* pointer, std::size_t) noexcept { std::free(pointer); }
void operator delete[](void* pointer, std::size_t) noexcept { std::free(pointer); }
void operator delete(void* pointer, const std::nothrow_t&) noexcept { std::free(pointer); }
void operator delete[](void* pointer, const std::nothrow_t&) noexcept { std::free(pointer); }

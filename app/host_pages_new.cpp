// The executable's operator new: large allocations on huge pages (solvers/base/host_pages.hpp).
// The set-up's big arrays are standard containers (a matrix's diagonals, a level's transfer
// weights), so replacing the global allocation function ([new.delete]) reaches all of them;
// the libraries leave a program that links them its own. The other forms (arrays, nothrow)
// call these; the aligned forms keep the C++ library's, which allocate with aligned_alloc and
// release with free as these do.
#include <cstdlib>
#include <new>

#include "simrun/solvers/base/host_pages.hpp"

void* operator new(std::size_t bytes) {
    for (;;) {
        if (void* pointer = simrun::solvers::allocate_host_pages(
                bytes == 0 ? 1 : bytes, __STDCPP_DEFAULT_NEW_ALIGNMENT__)) {
            return pointer;
        }
        const std::new_handler handler = std::get_new_handler();
        if (handler == nullptr) throw std::bad_alloc();
        handler();
    }
}

void operator delete(void* pointer) noexcept { std::free(pointer); }

void operator delete(void* pointer, std::size_t) noexcept { std::free(pointer); }

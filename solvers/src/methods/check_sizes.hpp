#pragma once
// Size check shared by the iterative methods.
#include <string>

#include "simrun/solvers/base/array.hpp"

namespace simrun::solvers {

template <typename T>
void check_system_sizes(const char* method, std::size_t n, const Array<T>& b, const Array<T>& x) {
    if (b.size() != n || x.size() != n) {
        throw DimensionMismatch(std::string(method) + ": operator has " + std::to_string(n) +
                                " rows, b has " + std::to_string(b.size()) + ", x has " +
                                std::to_string(x.size()));
    }
}

}  // namespace simrun::solvers

#pragma once
// DenseData<T>: a small dense matrix in host memory, row-major.
#include <cstdint>
#include <vector>

namespace simrun::solvers {

template <typename T>
struct DenseData {
    std::int32_t rows = 0;
    std::int32_t cols = 0;
    std::vector<T> values;  // rows * cols, row-major

    T& at(std::int32_t i, std::int32_t j) {
        return values[static_cast<std::size_t>(i) * static_cast<std::size_t>(cols) +
                      static_cast<std::size_t>(j)];
    }
    const T& at(std::int32_t i, std::int32_t j) const {
        return values[static_cast<std::size_t>(i) * static_cast<std::size_t>(cols) +
                      static_cast<std::size_t>(j)];
    }
};

}  // namespace simrun::solvers

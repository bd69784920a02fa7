#pragma once
// DiaData<T>: a square matrix in DIA format in host memory, the form in which it is assembled
// and analysed. values[d * n + i] = A(i, i + offsets[d]); entries whose column lies outside
// [0, n) are ignored (conventionally zero). Offsets are distinct and sorted ascending.
#include <cstdint>
#include <vector>

namespace simrun::solvers {

template <typename T>
struct DiaData {
    std::int64_t n = 0;
    std::vector<int> offsets;
    std::vector<T> values;

    int num_diagonals() const { return static_cast<int>(offsets.size()); }
    // Index of the diagonal with the given offset, or -1.
    int find_diagonal(int offset) const {
        for (int d = 0; d < num_diagonals(); ++d) {
            if (offsets[d] == offset) return d;
        }
        return -1;
    }
    T& at(int diagonal, std::int64_t row) { return values[diagonal * n + row]; }
    const T& at(int diagonal, std::int64_t row) const { return values[diagonal * n + row]; }
};

}  // namespace simrun::solvers

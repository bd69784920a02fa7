#pragma once
// DiaData<T>: a square matrix in DIA format in host memory, the form in which it is assembled
// and analysed. values[d * n + i] = A(i, i + offsets[d]); entries whose column lies outside
// [0, n) are ignored (conventionally zero). Offsets are distinct and sorted ascending.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
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

    // Keeps, in order, the diagonals d for which keep(d) holds, in this storage: the kept
    // diagonals move down in place (a set-up over the whole matrix allocates and copies
    // nothing more).
    template <typename Keep>
    void keep_diagonals(Keep keep) {
        std::size_t kept = 0;
        for (std::size_t d = 0; d < offsets.size(); ++d) {
            if (!keep(static_cast<int>(d))) continue;
            if (kept != d) {
                // Down to a lower place (std::copy copies front to back).
                const auto from = values.begin() + static_cast<std::int64_t>(d) * n;
                std::copy(from, from + n, values.begin() + static_cast<std::int64_t>(kept) * n);
                offsets[kept] = offsets[d];
            }
            ++kept;
        }
        offsets.resize(kept);
        values.resize(kept * static_cast<std::size_t>(n));
    }
    // Puts the diagonals in ascending order of their offsets (a matrix built diagonal by
    // diagonal in another order); nothing is copied where they are in order.
    void sort_diagonals() {
        if (std::is_sorted(offsets.begin(), offsets.end())) return;
        std::vector<std::size_t> order(offsets.size());
        for (std::size_t d = 0; d < order.size(); ++d) order[d] = d;
        std::sort(order.begin(), order.end(),
                  [&](std::size_t a, std::size_t b) { return offsets[a] < offsets[b]; });
        std::vector<int> sorted_offsets;
        std::vector<T> sorted_values;
        sorted_values.reserve(values.size());
        for (const std::size_t d : order) {
            sorted_offsets.push_back(offsets[d]);
            const auto from = values.begin() + static_cast<std::int64_t>(d) * n;
            sorted_values.insert(sorted_values.end(), from, from + n);
        }
        offsets = std::move(sorted_offsets);
        values = std::move(sorted_values);
    }
    // Keeps rows [first, first + count), their entries as they are, as a matrix of `count`
    // rows (a block of this one's rows), in this storage.
    // Throws std::out_of_range where they are not rows of this matrix.
    void keep_rows(std::int64_t first, std::int64_t count) {
        if (first < 0 || count < 0 || first + count > n) {
            throw std::out_of_range("DiaData::keep_rows: rows [" + std::to_string(first) + ", " +
                                    std::to_string(first + count) + ") of a matrix of " +
                                    std::to_string(n));
        }
        for (std::size_t d = 0; d < offsets.size(); ++d) {
            // Each diagonal's rows down to their new place (at or below the old one).
            const auto from = values.begin() + static_cast<std::int64_t>(d) * n + first;
            std::copy(from, from + count, values.begin() + static_cast<std::int64_t>(d) * count);
        }
        values.resize(offsets.size() * static_cast<std::size_t>(count));
        n = count;
    }
};

}  // namespace simrun::solvers

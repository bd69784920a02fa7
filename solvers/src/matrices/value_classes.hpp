#pragma once
// Points whose sets of values repeat, kept as classes: a byte per point naming its set, and the
// table of the distinct sets. A constant-coefficient grid operator has a few kinds of rows
// (inner, sides, corners), and so have its multigrid interpolation and Galerkin operators: as
// classes they cost a byte per point instead of a value per slot. Internal to the solver layer.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/kernel_table.hpp"  // max_value_classes

namespace simrun::solvers {

template <typename V>
struct ValueClasses {
    std::vector<std::uint8_t> of_point;  // the class of each point
    std::vector<V> table;                // class c's value in slot s at c * stride + s
};

// Classifies `points` points of `slots` values each, value(s, i) the value of point i in slot
// s, into classes whose table rows are `stride` (>= slots) values apart (zero beyond `slots`).
// Nothing where there are more than max_value_classes distinct sets. Sets are compared value by
// value (==), on every core: each thread compares a point with its predecessor's class first,
// then with its own table; the threads' tables are merged in thread order.
template <typename V, typename Value>
std::optional<ValueClasses<V>> classify_values(std::int64_t points, int slots, int stride,
                                               const Value& value) {
    ValueClasses<V> classes;
    classes.of_point.resize(static_cast<std::size_t>(points));
    const int threads = omp_get_max_threads();
    std::vector<std::vector<V>> sets(static_cast<std::size_t>(threads));
    std::vector<std::int64_t> bounds(static_cast<std::size_t>(threads) + 1, points);
    bool too_many = false;
#pragma omp parallel num_threads(threads) reduction(|| : too_many)
    {
        const int t = omp_get_thread_num(), parts = omp_get_num_threads();
        const std::int64_t begin = points * t / parts, end = points * (t + 1) / parts;
        bounds[static_cast<std::size_t>(t)] = begin;
        std::vector<V>& own = sets[static_cast<std::size_t>(t)];
        std::vector<V> point(static_cast<std::size_t>(slots));
        int last = -1;
        for (std::int64_t i = begin; i < end; ++i) {
            for (int s = 0; s < slots; ++s) point[static_cast<std::size_t>(s)] = value(s, i);
            const auto same = [&](int c) {
                return std::equal(point.begin(), point.end(),
                                  own.begin() + static_cast<std::ptrdiff_t>(c) * slots);
            };
            const int count = static_cast<int>(own.size()) / slots;
            int found = last >= 0 && same(last) ? last : -1;
            for (int c = 0; c < count && found < 0; ++c) {
                if (same(c)) found = c;
            }
            if (found < 0) {
                if (count == max_value_classes) {
                    too_many = true;
                    break;
                }
                own.insert(own.end(), point.begin(), point.end());
                found = count;
            }
            classes.of_point[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(found);
            last = found;
        }
    }
    if (too_many) return std::nullopt;
    std::vector<std::vector<std::uint8_t>> renamed(static_cast<std::size_t>(threads));
    std::vector<V> merged;
    for (int t = 0; t < threads; ++t) {
        const std::vector<V>& own = sets[static_cast<std::size_t>(t)];
        for (std::size_t c = 0; c < own.size() / static_cast<std::size_t>(slots); ++c) {
            const auto first = own.begin() + static_cast<std::ptrdiff_t>(c) * slots;
            const std::size_t count = merged.size() / static_cast<std::size_t>(slots);
            std::size_t m = 0;
            while (m < count &&
                   !std::equal(first, first + slots,
                               merged.begin() + static_cast<std::ptrdiff_t>(m) * slots)) {
                ++m;
            }
            if (m == count) {
                if (count == max_value_classes) return std::nullopt;
                merged.insert(merged.end(), first, first + slots);
            }
            renamed[static_cast<std::size_t>(t)].push_back(static_cast<std::uint8_t>(m));
        }
    }
#pragma omp parallel for schedule(static, 1)
    for (int t = 0; t < threads; ++t) {
        const auto& names = renamed[static_cast<std::size_t>(t)];
        for (std::int64_t i = bounds[static_cast<std::size_t>(t)];
             i < bounds[static_cast<std::size_t>(t) + 1]; ++i) {
            auto& c = classes.of_point[static_cast<std::size_t>(i)];
            c = names[c];
        }
    }
    const std::size_t count = merged.size() / static_cast<std::size_t>(slots);
    classes.table.assign(count * static_cast<std::size_t>(stride), V(0));
    for (std::size_t c = 0; c < count; ++c) {
        std::copy_n(merged.begin() + static_cast<std::ptrdiff_t>(c) * slots, slots,
                    classes.table.begin() + static_cast<std::ptrdiff_t>(c) * stride);
    }
    return classes;
}

}  // namespace simrun::solvers

#pragma once
// Host values of a multigrid set-up (computed in double) converted to the cycle's precision.
#include <cstdint>
#include <memory>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"

namespace simrun::solvers::multigrid {

// The values in To, converted on every core.
template <typename To, typename From>
std::vector<To> converted_values(const std::vector<From>& values) {
    std::vector<To> converted(values.size());
    const auto n = static_cast<std::int64_t>(values.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
        converted[static_cast<std::size_t>(i)] =
            static_cast<To>(values[static_cast<std::size_t>(i)]);
    }
    return converted;
}

// `values` on the back-end, in T.
template <typename T>
Array<T> upload(const std::shared_ptr<const Backend>& backend, const std::vector<double>& values) {
    const std::vector<T> converted = converted_values<T>(values);
    return Array<T>::from_host(backend, converted);
}

template <typename To, typename From>
DiaData<To> convert_dia(const DiaData<From>& a) {
    return DiaData<To>{a.n, a.offsets, converted_values<To>(a.values)};
}

}  // namespace simrun::solvers::multigrid

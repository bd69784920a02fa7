#pragma once
// Values of a multigrid set-up (computed in double) converted to the cycle's precision, on the
// host or on the back-end.
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "base/kernel_table.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"
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

// `from` (double, on the back-end) into `to` (T, as many values), rounded there.
template <typename T>
void converted_on_backend(const std::shared_ptr<const Backend>& backend, const Array<double>& from,
                          Array<T>& to) {
    if (from.size() == 0) return;
    if constexpr (std::is_same_v<T, double>) {
        backend->copy(to.data(), from.data(), from.size() * sizeof(double));
    } else {
        backend->kernels<double>().copy_to_other(*backend, from.size(), from.data(), to.data());
    }
}

template <typename To, typename From>
DiaData<To> convert_dia(const DiaData<From>& a) {
    return DiaData<To>{a.n, a.offsets, converted_values<To>(a.values)};
}

}  // namespace simrun::solvers::multigrid

#pragma once
// Random test data (never all zero): vectors and DIA matrices with a fixed seed.
#include <cstdint>
#include <random>
#include <vector>

#include "simrun/solvers/matrices/dia_data.hpp"

namespace simrun::testing {

template <typename T>
std::vector<T> random_vector(std::size_t n, std::uint32_t seed, double low = -1.0,
                             double high = 1.0) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<double> distribution(low, high);
    std::vector<T> values(n);
    for (auto& v : values) v = static_cast<T>(distribution(generator));
    return values;
}

// A random DIA matrix with the given offsets (entries outside the matrix are set to zero).
template <typename T>
solvers::DiaData<T> random_dia(std::int64_t n, std::vector<int> offsets, std::uint32_t seed) {
    solvers::DiaData<T> a;
    a.n = n;
    a.offsets = std::move(offsets);
    a.values = random_vector<T>(a.offsets.size() * static_cast<std::size_t>(n), seed);
    for (int d = 0; d < a.num_diagonals(); ++d) {
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t j = i + a.offsets[d];
            if (j < 0 || j >= n) a.at(d, i) = T(0);
        }
    }
    return a;
}

// The 2D 5-point Laplacian (Dirichlet, m x m interior nodes) in DIA: SPD, 4 on the diagonal.
inline solvers::DiaData<double> laplacian_2d(std::int64_t m) {
    solvers::DiaData<double> a;
    a.n = m * m;
    a.offsets = {-static_cast<int>(m), -1, 0, 1, static_cast<int>(m)};
    a.values.assign(5 * static_cast<std::size_t>(a.n), 0.0);
    for (std::int64_t i = 0; i < a.n; ++i) {
        const std::int64_t x = i % m;
        const std::int64_t y = i / m;
        a.at(2, i) = 4.0;
        if (y > 0) a.at(0, i) = -1.0;
        if (x > 0) a.at(1, i) = -1.0;
        if (x < m - 1) a.at(3, i) = -1.0;
        if (y < m - 1) a.at(4, i) = -1.0;
    }
    return a;
}

// The 5-point Laplacian on an nx x ny box as a grid with Dirichlet sides assembles it: the
// box's boundary points are identity rows, and the couplings of the inner points to them are
// dropped.
inline solvers::DiaData<double> laplacian_2d_dirichlet_rows(std::int64_t nx, std::int64_t ny) {
    solvers::DiaData<double> a;
    a.n = nx * ny;
    a.offsets = {-static_cast<int>(nx), -1, 0, 1, static_cast<int>(nx)};
    a.values.assign(5 * static_cast<std::size_t>(a.n), 0.0);
    const auto boundary = [&](std::int64_t i) {
        const std::int64_t x = i % nx, y = i / nx;
        return x == 0 || y == 0 || x == nx - 1 || y == ny - 1;
    };
    for (std::int64_t i = 0; i < a.n; ++i) {
        a.at(2, i) = boundary(i) ? 1.0 : 4.0;
        if (boundary(i)) continue;
        for (const int d : {0, 1, 3, 4}) {
            if (!boundary(i + a.offsets[static_cast<std::size_t>(d)])) a.at(d, i) = -1.0;
        }
    }
    return a;
}

inline solvers::DiaData<double> laplacian_2d_dirichlet_rows(std::int64_t m) {
    return laplacian_2d_dirichlet_rows(m, m);
}

// y = A x with a plain dense-style loop in long double: the independent reference.
template <typename T>
std::vector<long double> reference_spmv(const solvers::DiaData<T>& a, const std::vector<T>& x) {
    std::vector<long double> y(static_cast<std::size_t>(a.n), 0.0L);
    for (int d = 0; d < a.num_diagonals(); ++d) {
        for (std::int64_t i = 0; i < a.n; ++i) {
            const std::int64_t j = i + a.offsets[d];
            if (j >= 0 && j < a.n) {
                y[static_cast<std::size_t>(i)] +=
                    static_cast<long double>(a.at(d, i)) *
                    static_cast<long double>(x[static_cast<std::size_t>(j)]);
            }
        }
    }
    return y;
}

}  // namespace simrun::testing

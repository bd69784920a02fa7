#include "multigrid/coarsest_inverse.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simrun/solvers/multigrid/multigrid_setup_error.hpp"

namespace simrun::solvers::multigrid {
namespace {

// The entries of the row-major n x n matrix m lie within `lower` places below the diagonal and
// `upper` above it.
struct Band {
    std::int32_t lower = 0, upper = 0;
};

// m = P L U by Gaussian elimination with partial pivoting on the band (U then reaches lower +
// upper above the diagonal), in place: L's multipliers below the diagonal, U on and above it,
// pivot[k] the row swapped with row k. False where a pivot is below `tolerance`.
bool banded_lu(DenseData<double>& m, Band band, std::vector<std::int32_t>& pivot,
               double tolerance) {
    const std::int32_t n = m.rows;
    const std::int32_t reach = band.lower + band.upper;
    pivot.assign(static_cast<std::size_t>(n), 0);
    for (std::int32_t k = 0; k < n; ++k) {
        const std::int32_t last_row = std::min(n - 1, k + band.lower);
        const std::int32_t last_column = std::min(n - 1, k + reach);
        std::int32_t p = k;
        for (std::int32_t r = k + 1; r <= last_row; ++r) {
            if (std::abs(m.at(r, k)) > std::abs(m.at(p, k))) p = r;
        }
        if (!(std::abs(m.at(p, k)) > tolerance)) return false;
        pivot[static_cast<std::size_t>(k)] = p;
        if (p != k) {
            for (std::int32_t j = k; j <= last_column; ++j) std::swap(m.at(p, j), m.at(k, j));
        }
        for (std::int32_t r = k + 1; r <= last_row; ++r) {
            const double factor = m.at(r, k) / m.at(k, k);
            m.at(r, k) = factor;
            if (factor == 0.0) continue;
            for (std::int32_t j = k + 1; j <= last_column; ++j) m.at(r, j) -= factor * m.at(k, j);
        }
    }
    return true;
}

// The inverse from banded_lu's factors: column j solves P L U x = e_j (the swaps applied to
// e_j, then L and U on the band), the columns on every thread: one fork, and no step waits for
// another (an elimination on the threads would wait at every pivot, each wait long where idle
// threads sleep, as simrun's OMP_WAIT_POLICY makes them).
DenseData<double> inverse_from_lu(const DenseData<double>& lu, Band band,
                                  const std::vector<std::int32_t>& pivot) {
    const std::int32_t n = lu.rows;
    const std::int32_t reach = band.lower + band.upper;
    DenseData<double> inverse{n, n, std::vector<double>(static_cast<std::size_t>(n) * n, 0.0)};
#pragma omp parallel if (n >= 128)
    {
        std::vector<double> x(static_cast<std::size_t>(n));
#pragma omp for schedule(dynamic, 8)
        for (std::int32_t j = 0; j < n; ++j) {
            std::fill(x.begin(), x.end(), 0.0);
            x[static_cast<std::size_t>(j)] = 1.0;
            // Each step's swap, then its column of L (L is kept as eliminated, unswapped).
            for (std::int32_t k = 0; k < n; ++k) {
                std::swap(x[static_cast<std::size_t>(k)],
                          x[static_cast<std::size_t>(pivot[static_cast<std::size_t>(k)])]);
                const double xk = x[static_cast<std::size_t>(k)];
                if (xk == 0.0) continue;
                for (std::int32_t r = k + 1; r <= std::min(n - 1, k + band.lower); ++r) {
                    x[static_cast<std::size_t>(r)] -= lu.at(r, k) * xk;
                }
            }
            for (std::int32_t k = n - 1; k >= 0; --k) {
                double sum = x[static_cast<std::size_t>(k)];
                for (std::int32_t c = k + 1; c <= std::min(n - 1, k + reach); ++c) {
                    sum -= lu.at(k, c) * x[static_cast<std::size_t>(c)];
                }
                x[static_cast<std::size_t>(k)] = sum / lu.at(k, k);
            }
            for (std::int32_t i = 0; i < n; ++i) inverse.at(i, j) = x[static_cast<std::size_t>(i)];
        }
    }
    return inverse;
}

// The inverse of the dense matrix m (n x n, row-major) whose entries lie within `band`, or
// nothing when a pivot is below `tolerance`.
std::optional<DenseData<double>> banded_inverse(DenseData<double> m, Band band, double tolerance) {
    std::vector<std::int32_t> pivot;
    if (!banded_lu(m, band, pivot, tolerance)) return std::nullopt;
    return inverse_from_lu(m, band, pivot);
}

}  // namespace

CoarsestInverse invert_coarsest(const CsrData<double>& a) {
    const std::int32_t n = a.rows;
    DenseData<double> m{n, n, std::vector<double>(static_cast<std::size_t>(n) * n, 0.0)};
    double diagonal_sum = 0;
    for (std::int32_t i = 0; i < n; ++i) {
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            m.at(i, a.col[k]) = a.values[static_cast<std::size_t>(k)];
            if (a.col[k] == i) diagonal_sum += a.values[static_cast<std::size_t>(k)];
        }
    }
    // The pivots are judged on S A S, S = |diag A|^-1/2, whose rows are of one scale: the rows
    // of A may differ by 1e10 and more (identity rows of Dirichlet nodes beside k / h^2), and a
    // tolerance relative to A's largest entry took the identity rows' pivots of 1 for zeros.
    // Then A^-1 = S (S A S)^-1 S.
    std::vector<double> scale(static_cast<std::size_t>(n), 1.0);
    for (std::int32_t i = 0; i < n; ++i) {
        const double diagonal = std::abs(m.at(i, i));
        if (diagonal > 0 && std::isfinite(diagonal)) {
            scale[static_cast<std::size_t>(i)] = 1.0 / std::sqrt(diagonal);
        }
    }
    const auto scaled = [&](const DenseData<double>& matrix) {
        DenseData<double> result = matrix;
        for (std::int32_t i = 0; i < n; ++i) {
            for (std::int32_t j = 0; j < n; ++j) {
                result.at(i, j) *=
                    scale[static_cast<std::size_t>(i)] * scale[static_cast<std::size_t>(j)];
            }
        }
        return result;
    };
    const auto invert = [&](const DenseData<double>& matrix,
                            Band band) -> std::optional<DenseData<double>> {
        DenseData<double> s = scaled(matrix);
        double largest = 0;
        for (const double value : s.values) largest = std::max(largest, std::abs(value));
        auto inverse = banded_inverse(std::move(s), band, 1e-12 * largest * n);
        if (inverse) *inverse = scaled(*inverse);
        return inverse;
    };
    Band band;
    for (std::int32_t i = 0; i < n; ++i) {
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            band.lower = std::max(band.lower, i - a.col[k]);
            band.upper = std::max(band.upper, a.col[k] - i);
        }
    }
    if (auto inverse = invert(m, band)) return {std::move(*inverse), false};
    // A + s 1 1^T with s the mean diagonal entry over n: as large as A's own entries (and dense).
    const double shift = diagonal_sum / n / n;
    for (double& value : m.values) value += shift;
    if (auto inverse = invert(m, Band{n - 1, n - 1})) return {std::move(*inverse), true};
    throw MultigridSetupError("multigrid: the coarsest level's " + std::to_string(n) + " x " +
                              std::to_string(n) +
                              " matrix is singular beyond the constants (its pivots judged on "
                              "the matrix scaled to a unit diagonal)");
}

}  // namespace simrun::solvers::multigrid

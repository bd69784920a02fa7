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

// The inverse of the dense matrix m (n x n, row-major), or nothing when a pivot is below
// `tolerance`. The rows are eliminated on every thread (each row's arithmetic as on one: the
// same bits), the pivot found and scaled on one.
std::optional<DenseData<double>> gauss_jordan(DenseData<double> m, double tolerance) {
    const std::int32_t n = m.rows;
    DenseData<double> inverse{n, n, std::vector<double>(static_cast<std::size_t>(n) * n, 0.0)};
    for (std::int32_t i = 0; i < n; ++i) inverse.at(i, i) = 1.0;
    bool singular = false;
#pragma omp parallel if (n >= 128)
    for (std::int32_t col = 0; col < n; ++col) {
#pragma omp single
        {
            std::int32_t pivot = col;
            for (std::int32_t r = col + 1; r < n; ++r) {
                if (std::abs(m.at(r, col)) > std::abs(m.at(pivot, col))) pivot = r;
            }
            singular = !(std::abs(m.at(pivot, col)) > tolerance);
            if (!singular && pivot != col) {
                for (std::int32_t j = 0; j < n; ++j) {
                    std::swap(m.at(pivot, j), m.at(col, j));
                    std::swap(inverse.at(pivot, j), inverse.at(col, j));
                }
            }
            if (!singular) {
                const double scale = 1.0 / m.at(col, col);
                for (std::int32_t j = 0; j < n; ++j) {
                    m.at(col, j) *= scale;
                    inverse.at(col, j) *= scale;
                }
            }
        }  // (a barrier: every thread sees the pivot row)
        if (singular) break;
#pragma omp for schedule(static)
        for (std::int32_t r = 0; r < n; ++r) {
            const double factor = m.at(r, col);
            if (r == col || factor == 0.0) continue;
            for (std::int32_t j = 0; j < n; ++j) {
                m.at(r, j) -= factor * m.at(col, j);
                inverse.at(r, j) -= factor * inverse.at(col, j);
            }
        }
    }
    if (singular) return std::nullopt;
    return inverse;
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
    const auto invert = [&](const DenseData<double>& matrix) -> std::optional<DenseData<double>> {
        DenseData<double> s = scaled(matrix);
        double largest = 0;
        for (const double value : s.values) largest = std::max(largest, std::abs(value));
        auto inverse = gauss_jordan(std::move(s), 1e-12 * largest * n);
        if (inverse) *inverse = scaled(*inverse);
        return inverse;
    };
    if (auto inverse = invert(m)) return {std::move(*inverse), false};
    // A + s 1 1^T with s the mean diagonal entry over n: as large as A's own entries.
    const double shift = diagonal_sum / n / n;
    for (double& value : m.values) value += shift;
    if (auto inverse = invert(m)) return {std::move(*inverse), true};
    throw MultigridSetupError("multigrid: the coarsest level's " + std::to_string(n) + " x " +
                              std::to_string(n) +
                              " matrix is singular beyond the constants (its pivots judged on "
                              "the matrix scaled to a unit diagonal)");
}

}  // namespace simrun::solvers::multigrid

#include "simrun/solvers/matrix_properties.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include "simrun/solvers/conversions.hpp"

namespace simrun::solvers {
namespace {

// See MatrixProperties::constant_coefficients.
template <typename T>
bool has_constant_coefficients(const CsrData<T>& a, int num_diagonals) {
    if (num_diagonals > 8 || a.rows == 0) return false;
    std::map<std::int64_t, T> values;  // offset j - i -> its one value
    for (std::int32_t i = 0; i < a.rows; ++i) {
        bool has_diagonal = false;
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (a.values[k] == T(0)) continue;
            has_diagonal = has_diagonal || a.col[k] == i;
            const auto [entry, added] = values.emplace(std::int64_t{a.col[k]} - i, a.values[k]);
            if (!added && !(entry->second == a.values[k])) return false;
        }
        if (!has_diagonal) return false;
    }
    return true;
}

}  // namespace

template <typename T>
MatrixProperties analyze(const CsrData<T>& a, double symmetry_tolerance) {
    if (a.rows != a.cols) {
        throw std::invalid_argument("matrix analysis: the matrix is " + std::to_string(a.rows) +
                                    " x " + std::to_string(a.cols) + ", not square");
    }
    MatrixProperties p;
    p.rows = a.rows;
    p.nnz = a.nnz();
    p.num_diagonals = count_diagonals(a);
    double largest = 0.0;
    for (T v : a.values) largest = std::max(largest, std::abs(static_cast<double>(v)));

    // Symmetry: compare row i of A with row i of A^T (both sorted by column).
    const CsrData<T> at = transpose(a);
    double asymmetry = 0.0;
    for (std::int32_t i = 0; i < a.rows; ++i) {
        std::int32_t k = a.row_ptr[i], l = at.row_ptr[i];
        const std::int32_t k_end = a.row_ptr[i + 1], l_end = at.row_ptr[i + 1];
        while (k < k_end || l < l_end) {
            const std::int32_t ck = k < k_end ? a.col[k] : a.cols;
            const std::int32_t cl = l < l_end ? at.col[l] : a.cols;
            const double vk = ck <= cl ? static_cast<double>(a.values[k]) : 0.0;
            const double vl = cl <= ck ? static_cast<double>(at.values[l]) : 0.0;
            asymmetry = std::max(asymmetry, std::abs(vk - vl));
            if (ck <= cl) ++k;
            if (cl <= ck) ++l;
        }
    }
    p.asymmetry = largest > 0.0 ? asymmetry / largest : 0.0;
    p.symmetric = p.asymmetry <= symmetry_tolerance;

    p.positive_diagonal = a.rows > 0;
    p.weakly_dominant = true;
    p.strictly_dominant = true;
    p.worst_dominance_ratio = std::numeric_limits<double>::infinity();
    p.min_row_length = a.rows > 0 ? std::numeric_limits<std::int32_t>::max() : 0;
    for (std::int32_t i = 0; i < a.rows; ++i) {
        double diagonal = 0.0, off = 0.0;
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (a.col[k] == i) {
                diagonal += static_cast<double>(a.values[k]);
            } else {
                off += std::abs(static_cast<double>(a.values[k]));
            }
        }
        if (diagonal == 0.0) ++p.zero_diagonal_rows;
        if (!(diagonal > 0.0)) p.positive_diagonal = false;
        if (std::abs(diagonal) < off) p.weakly_dominant = false;
        if (!(std::abs(diagonal) > off)) p.strictly_dominant = false;
        if (off > 0.0) {
            p.worst_dominance_ratio = std::min(p.worst_dominance_ratio, std::abs(diagonal) / off);
        }
        p.min_row_length = std::min(p.min_row_length, a.row_length(i));
        p.max_row_length = std::max(p.max_row_length, a.row_length(i));
    }
    p.mean_row_length = a.rows > 0 ? static_cast<double>(p.nnz) / a.rows : 0.0;
    p.constant_coefficients = has_constant_coefficients(a, p.num_diagonals);
    return p;
}

template <typename T>
MatrixProperties analyze(const DiaData<T>& matrix, double symmetry_tolerance) {
    return analyze(to_csr(matrix), symmetry_tolerance);
}

std::string MatrixProperties::describe() const {
    char text[512];
    const char* dominance = strictly_dominant ? "strictly diagonally dominant"
                            : weakly_dominant ? "weakly diagonally dominant"
                                              : "not diagonally dominant";
    std::snprintf(text, sizeof text,
                  "%d rows, %lld nonzeros, %d diagonals, %s, %s, %s (worst row ratio %.3g)", rows,
                  static_cast<long long>(nnz), num_diagonals,
                  symmetric ? "symmetric" : "nonsymmetric",
                  positive_diagonal        ? "positive diagonal"
                  : zero_diagonal_rows > 0 ? "zero diagonal entries"
                                           : "diagonal not all positive",
                  dominance, worst_dominance_ratio);
    return text;
}

template MatrixProperties analyze(const CsrData<float>&, double);
template MatrixProperties analyze(const CsrData<double>&, double);
template MatrixProperties analyze(const DiaData<float>&, double);
template MatrixProperties analyze(const DiaData<double>&, double);

}  // namespace simrun::solvers

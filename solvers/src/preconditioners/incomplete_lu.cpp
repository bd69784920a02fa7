#include "simrun/solvers/preconditioners/incomplete_lu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "base/kernel_table.hpp"

namespace simrun::solvers {
namespace {

// A's pattern with a (zero) diagonal entry added to each row that lacks one, in double.
CsrData<double> with_diagonal(const CsrData<double>& a) {
    CsrData<double> out;
    out.rows = out.cols = a.rows;
    out.row_ptr.reserve(static_cast<std::size_t>(a.rows) + 1);
    for (std::int32_t i = 0; i < a.rows; ++i) {
        bool placed = false;
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (!placed && a.col[k] > i) {
                out.col.push_back(i);
                out.values.push_back(0.0);
                placed = true;
            }
            placed = placed || a.col[k] == i;
            out.col.push_back(a.col[k]);
            out.values.push_back(a.values[k]);
        }
        if (!placed) {
            out.col.push_back(i);
            out.values.push_back(0.0);
        }
        out.row_ptr.push_back(static_cast<std::int32_t>(out.col.size()));
    }
    return out;
}

// Rows grouped by level, given each row's level.
Colouring group_by_level(const std::vector<std::int32_t>& level) {
    const std::int32_t levels =
        level.empty() ? 0 : *std::max_element(level.begin(), level.end()) + 1;
    Colouring result;
    result.offsets.assign(static_cast<std::size_t>(levels) + 1, 0);
    for (std::int32_t l : level) ++result.offsets[static_cast<std::size_t>(l) + 1];
    for (std::int32_t l = 0; l < levels; ++l) {
        result.offsets[static_cast<std::size_t>(l) + 1] +=
            result.offsets[static_cast<std::size_t>(l)];
    }
    result.rows.resize(level.size());
    std::vector<std::int32_t> next(result.offsets.begin(), result.offsets.end() - 1);
    for (std::size_t i = 0; i < level.size(); ++i) {
        result.rows[static_cast<std::size_t>(next[static_cast<std::size_t>(level[i])]++)] =
            static_cast<std::int32_t>(i);
    }
    return result;
}

}  // namespace

// Saad's IKJ ILU(0): row i takes, for each k < i in its pattern (in column order), l_ik =
// a_ik / u_kk and subtracts l_ik times U's row k where row i has the column.
template <typename T>
IncompleteLu<T> incomplete_lu0(const CsrData<T>& a) {
    if (a.rows != a.cols) {
        throw std::invalid_argument("ilu0: the matrix is " + std::to_string(a.rows) + " x " +
                                    std::to_string(a.cols) + ", not square");
    }
    CsrData<double> a64;
    a64.rows = a64.cols = a.rows;
    a64.row_ptr = a.row_ptr;
    a64.col = a.col;
    a64.values.assign(a.values.begin(), a.values.end());
    CsrData<double> w = with_diagonal(a64);
    const std::int32_t n = w.rows;
    std::vector<std::int32_t> diagonal(static_cast<std::size_t>(n));
    std::vector<std::int32_t> where(static_cast<std::size_t>(n), -1);  // column -> entry of row i
    IncompleteLu<T> out;
    const double relative = std::sqrt(std::numeric_limits<double>::epsilon());
    for (std::int32_t i = 0; i < n; ++i) {
        const std::int32_t begin = w.row_ptr[i], end = w.row_ptr[i + 1];
        double largest = 0;
        for (std::int32_t k = begin; k < end; ++k) {
            if (!std::isfinite(w.values[k])) {
                throw std::invalid_argument("ilu0: row " + std::to_string(i) +
                                            " has an entry that is not finite");
            }
            largest = std::max(largest, std::abs(w.values[k]));
            where[static_cast<std::size_t>(w.col[k])] = k;
        }
        if (largest == 0) {
            throw std::invalid_argument("ilu0: row " + std::to_string(i) +
                                        " is all zero, so the matrix is singular");
        }
        for (std::int32_t k = begin; k < end && w.col[k] < i; ++k) {
            const std::int32_t row_k = w.col[k];
            const double l = w.values[k] / w.values[diagonal[static_cast<std::size_t>(row_k)]];
            w.values[k] = l;
            for (std::int32_t m = diagonal[static_cast<std::size_t>(row_k)] + 1;
                 m < w.row_ptr[row_k + 1]; ++m) {
                const std::int32_t at = where[static_cast<std::size_t>(w.col[m])];
                if (at >= 0) w.values[at] -= l * w.values[m];
            }
        }
        std::int32_t d = begin;
        while (w.col[d] != i) ++d;
        diagonal[static_cast<std::size_t>(i)] = d;
        const double bound = relative * largest;
        if (!(std::abs(w.values[d]) > bound)) {
            w.values[d] = w.values[d] < 0 ? -bound : bound;
            if (out.replaced_pivots++ == 0) out.first_replaced = i;
        }
        for (std::int32_t k = begin; k < end; ++k) where[static_cast<std::size_t>(w.col[k])] = -1;
    }
    // Split: below the diagonal into L, the rest into U.
    for (CsrData<T>* part : {&out.lower, &out.upper}) {
        part->rows = part->cols = n;
        part->row_ptr.assign(1, 0);
    }
    for (std::int32_t i = 0; i < n; ++i) {
        for (std::int32_t k = w.row_ptr[i]; k < w.row_ptr[i + 1]; ++k) {
            CsrData<T>& part = w.col[k] < i ? out.lower : out.upper;
            part.col.push_back(w.col[k]);
            part.values.push_back(static_cast<T>(w.values[k]));
        }
        out.lower.row_ptr.push_back(static_cast<std::int32_t>(out.lower.col.size()));
        out.upper.row_ptr.push_back(static_cast<std::int32_t>(out.upper.col.size()));
    }
    return out;
}

namespace {

// Each row's level is one more than the highest among the rows it reads: the rows before it
// (forward, L) or after it (backward, U), visited in the order that has them levelled first.
template <typename T>
Colouring triangular_levels(const CsrData<T>& t, bool forward) {
    std::vector<std::int32_t> level(static_cast<std::size_t>(t.rows), 0);
    for (std::int32_t step = 0; step < t.rows; ++step) {
        const std::int32_t i = forward ? step : t.rows - 1 - step;
        for (std::int32_t k = t.row_ptr[i]; k < t.row_ptr[i + 1]; ++k) {
            const std::int32_t j = t.col[k];
            if (forward ? j < i : j > i) {
                level[static_cast<std::size_t>(i)] = std::max(
                    level[static_cast<std::size_t>(i)], level[static_cast<std::size_t>(j)] + 1);
            }
        }
    }
    return group_by_level(level);
}

}  // namespace

template <typename T>
Colouring forward_levels(const CsrData<T>& lower) {
    return triangular_levels(lower, true);
}

template <typename T>
Colouring backward_levels(const CsrData<T>& upper) {
    return triangular_levels(upper, false);
}

template <typename T>
IluPreconditioner<T>::IluPreconditioner(std::shared_ptr<const Backend> backend, const CsrData<T>& a)
    : IluPreconditioner(std::move(backend), incomplete_lu0(a)) {}

// L's solve divides by its unit diagonal, U's by its stored one.
template <typename T>
IluPreconditioner<T>::IluPreconditioner(std::shared_ptr<const Backend> backend,
                                        const IncompleteLu<T>& factors)
    : lower_(backend, factors.lower, forward_levels(factors.lower),
             std::vector<T>(static_cast<std::size_t>(factors.lower.rows), T(1))),
      upper_(backend, factors.upper, backward_levels(factors.upper),
             [&] {
                 std::vector<T> inverse = diagonal_of(factors.upper);
                 for (T& d : inverse) d = T(1) / d;
                 return inverse;
             }()),
      replaced_pivots_(factors.replaced_pivots),
      first_replaced_(factors.first_replaced),
      between_(backend, static_cast<std::size_t>(factors.lower.rows)) {}

template <typename T>
std::string IluPreconditioner<T>::describe() const {
    std::string text = "L in " + std::to_string(lower_.num_colours()) + " levels, U in " +
                       std::to_string(upper_.num_colours()) + "; ";
    if (replaced_pivots_ == 0) return text + "no pivot shifted";
    return text + std::to_string(replaced_pivots_) +
           (replaced_pivots_ == 1 ? " pivot" : " pivots") +
           " shifted to sqrt(eps) times the row's largest entry (the first in row " +
           std::to_string(first_replaced_) + ")";
}

template <typename T>
void IluPreconditioner<T>::apply(const Array<T>& r, Array<T>& z) const {
    const T* r_data = r.data();
    T* z_data = z.data();
    const std::size_t n = z.size();
    recorded_.run(r.backend(), r_data, z_data, [this, r_data, z_data, n] {
        // A sweep of weight 1 still reads (1 - 1) x_i: x must hold no NaN or Inf before it.
        const Backend& backend = *lower_.backend();
        backend.kernels<T>().fill(backend, n, T(0), between_.data());
        lower_.forward(r_data, between_.data(), T(1));
        backend.kernels<T>().fill(backend, n, T(0), z_data);
        upper_.forward(between_.data(), z_data, T(1));
    });
}

template IncompleteLu<float> incomplete_lu0(const CsrData<float>&);
template IncompleteLu<double> incomplete_lu0(const CsrData<double>&);
template Colouring forward_levels(const CsrData<float>&);
template Colouring forward_levels(const CsrData<double>&);
template Colouring backward_levels(const CsrData<float>&);
template Colouring backward_levels(const CsrData<double>&);
template class IluPreconditioner<float>;
template class IluPreconditioner<double>;

}  // namespace simrun::solvers

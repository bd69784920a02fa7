#include "simrun/solvers/preconditioners/multicolour.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "base/kernel_table.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/preconditioners/preconditioner.hpp"

namespace simrun::solvers {

template <typename T>
Colouring greedy_colouring(const CsrData<T>& a) {
    // Neighbours in A + A^T, so that rows of one colour are uncoupled in both directions.
    const CsrData<T> at = transpose(a);
    std::vector<std::int32_t> colour(static_cast<std::size_t>(a.rows), -1);
    std::vector<std::int32_t> seen;  // seen[c] == row: colour c is taken by a neighbour of row
    int colours = 0;
    for (std::int32_t i = 0; i < a.rows; ++i) {
        for (const CsrData<T>* m : {&a, &at}) {
            for (std::int32_t k = m->row_ptr[i]; k < m->row_ptr[i + 1]; ++k) {
                const std::int32_t c = colour[static_cast<std::size_t>(m->col[k])];
                if (m->col[k] != i && c >= 0) seen[static_cast<std::size_t>(c)] = i;
            }
        }
        std::int32_t c = 0;
        while (c < colours && seen[static_cast<std::size_t>(c)] == i) ++c;
        if (c == colours) {
            ++colours;
            seen.push_back(-1);
        }
        colour[static_cast<std::size_t>(i)] = c;
    }
    Colouring result;
    result.offsets.assign(static_cast<std::size_t>(colours) + 1, 0);
    for (std::int32_t c : colour) ++result.offsets[static_cast<std::size_t>(c) + 1];
    for (int c = 0; c < colours; ++c) {
        result.offsets[static_cast<std::size_t>(c) + 1] +=
            result.offsets[static_cast<std::size_t>(c)];
    }
    result.rows.resize(static_cast<std::size_t>(a.rows));
    std::vector<std::int32_t> next(result.offsets.begin(), result.offsets.end() - 1);
    for (std::int32_t i = 0; i < a.rows; ++i) {
        result.rows[static_cast<std::size_t>(
            next[static_cast<std::size_t>(colour[static_cast<std::size_t>(i)])]++)] = i;
    }
    return result;
}

namespace {

template <typename T>
std::vector<T> checked_inverse_diagonal(const CsrData<T>& a) {
    std::vector<T> inverse = diagonal_of(a);
    for (std::size_t i = 0; i < inverse.size(); ++i) {
        if (inverse[i] == T(0) || !std::isfinite(static_cast<double>(inverse[i]))) {
            throw std::invalid_argument("Gauss-Seidel/SOR: diagonal entry of row " +
                                        std::to_string(i) + " is zero or not finite");
        }
        inverse[i] = T(1) / inverse[i];
    }
    return inverse;
}

}  // namespace

template <typename T>
MulticolourSweeper<T>::MulticolourSweeper(std::shared_ptr<const Backend> backend,
                                          const CsrData<T>& a)
    : MulticolourSweeper(backend, a, greedy_colouring(a), checked_inverse_diagonal(a)) {}

namespace {

// A's off-diagonal entries with its rows in the sweeps' order: position r holds row
// order.rows[r].
template <typename T>
CsrData<T> off_diagonal_in_order(const CsrData<T>& a, const Colouring& order) {
    CsrData<T> out;
    out.rows = a.rows;
    out.cols = a.cols;
    out.row_ptr.assign(1, 0);
    out.row_ptr.reserve(order.rows.size() + 1);
    for (const std::int32_t i : order.rows) {
        for (std::int32_t k = a.row_ptr[static_cast<std::size_t>(i)];
             k < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++k) {
            if (a.col[static_cast<std::size_t>(k)] == i) continue;
            out.col.push_back(a.col[static_cast<std::size_t>(k)]);
            out.values.push_back(a.values[static_cast<std::size_t>(k)]);
        }
        out.row_ptr.push_back(static_cast<std::int32_t>(out.col.size()));
    }
    return out;
}

}  // namespace

template <typename T>
MulticolourSweeper<T>::MulticolourSweeper(std::shared_ptr<const Backend> backend,
                                          const CsrData<T>& a, const Colouring& order,
                                          const std::vector<T>& inverse_diagonal)
    : MulticolourSweeper(std::move(backend), a, off_diagonal_in_order(a, order), order,
                         inverse_diagonal, OffDiagonalInOrder{}) {}

template <typename T>
MulticolourSweeper<T>::MulticolourSweeper(std::shared_ptr<const Backend> backend,
                                          const CsrData<T>& a, const CsrData<T>& in_order,
                                          const Colouring& order,
                                          const std::vector<T>& inverse_diagonal,
                                          OffDiagonalInOrder)
    : backend_(backend),
      n_(in_order.rows),
      inverse_diagonal_(Array<T>::from_host(backend, inverse_diagonal)),
      rows_(Array<std::int32_t>::from_host(backend, order.rows)),
      row_ptr_(Array<std::int32_t>::from_host(backend, in_order.row_ptr)),
      col_(Array<std::int32_t>::from_host(backend, in_order.col)),
      values_(Array<T>::from_host(backend, in_order.values)),
      diagonal_(Array<T>::from_host(backend, diagonal_of(a))),
      offsets_(order.offsets),
      device_offsets_(Array<std::int32_t>::from_host(backend, order.offsets)) {}

template <typename T>
void MulticolourSweeper<T>::sweeps(bool forward, bool backward, const T* b, T* x, T omega) const {
    const SweepOrder order = !backward  ? SweepOrder::forward
                             : !forward ? SweepOrder::backward
                                        : SweepOrder::forward_then_backward;
    backend_->kernels<T>().sor_sweeps(*backend_, view(omega), offsets_.data(), order, b, x);
}

template <typename T>
MulticolourSweepsView<T> MulticolourSweeper<T>::view(T omega) const {
    return {n_,
            static_cast<std::int64_t>(col_.size()),
            rows_.data(),
            row_ptr_.data(),
            col_.data(),
            values_.data(),
            device_offsets_.data(),
            num_colours(),
            diagonal_.data(),
            inverse_diagonal_.data(),
            omega};
}

template <typename T>
void MulticolourSweeper<T>::forward(const T* b, T* x, T omega) const {
    sweeps(true, false, b, x, omega);
}

template <typename T>
void MulticolourSweeper<T>::backward(const T* b, T* x, T omega) const {
    sweeps(false, true, b, x, omega);
}

template <typename T>
void MulticolourSweeper<T>::symmetric(const T* b, T* x, T omega) const {
    sweeps(true, true, b, x, omega);
}

template <typename T>
void MulticolourSweeper<T>::forward(const Array<T>& b, Array<T>& x, T omega) const {
    forward(b.data(), x.data(), omega);
}

template <typename T>
void MulticolourSweeper<T>::backward(const Array<T>& b, Array<T>& x, T omega) const {
    backward(b.data(), x.data(), omega);
}

template Colouring greedy_colouring(const CsrData<float>&);
template Colouring greedy_colouring(const CsrData<double>&);
template class MulticolourSweeper<float>;
template class MulticolourSweeper<double>;

}  // namespace simrun::solvers

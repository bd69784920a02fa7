#pragma once
// Vector operations on Arrays, run on the arrays' back-end. Operands must share one back-end
// and one size; otherwise DimensionMismatch (or std::invalid_argument for mixed back-ends).
#include <span>

#include "simrun/solvers/base/array.hpp"

namespace simrun::solvers {

template <typename T>
void fill(Array<T>& x, T value);
// y = y + alpha x
template <typename T>
void axpy(T alpha, const Array<T>& x, Array<T>& y);
// z = x .* y
template <typename T>
void multiply(const Array<T>& x, const Array<T>& y, Array<T>& z);
// Deterministic: the same inputs on the same back-end give the same bits every run. Over the
// ranks of the back-end's communicator (a distributed vector, each rank its rows): the ranks'
// partial products summed in rank order (Communicator::sum), so also the same on every rank.
template <typename T>
T dot(const Array<T>& x, const Array<T>& y);
// As dot, with compensated (Neumaier) summation when `compensated`.
template <typename T>
T dot(const Array<T>& x, const Array<T>& y, bool compensated);
// ||x||: sqrt(dot(x, x)) where that sum of squares is accurate; where it underflows (below
// 2^-990 in double, 2^-95 in float, zero included) or overflows while x is finite, ||x|| is
// recomputed with every value scaled by a power of two (on the host, a copy of x: the rare
// path), so that a finite vector's norm is neither lost to 0 nor taken for Inf. Deterministic
// as dot.
// An array with no back-end (default-constructed, empty) has norm 0.
template <typename T>
T norm2(const Array<T>& x, bool compensated = false);
// ||x|| = fraction * 2^exponent, computed as norm2 is but never rounded into T's range: a finite
// vector whose norm exceeds T's largest value (1e307 in 400 values of double) has a finite
// WideNorm where norm2 gives Inf. fraction is 0 for a zero vector, Inf or NaN (exponent 0) for
// a vector holding them.
struct WideNorm {
    double fraction = 0;
    int exponent = 0;
    bool finite_nonzero() const;
    // floor(log2 ||x||), for a finite nonzero norm.
    int log2_floor() const;
    // fraction * 2^exponent as a double (Inf beyond its range).
    double value() const;
};
template <typename T>
WideNorm wide_norm2(const Array<T>& x, bool compensated = false);
// Each value (a rank's partial sums) summed over the ranks of the back-end's communicator, in
// rank order; nothing to do on one process.
template <typename T>
void sum_over_ranks(const Backend& backend, std::span<T> values);
// y = x (same size and back-end)
template <typename T>
void copy(const Array<T>& x, Array<T>& y);

}  // namespace simrun::solvers

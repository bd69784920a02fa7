#include "simrun/solvers/base/vector_ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "base/kernel_table.hpp"

namespace simrun::solvers {
namespace {

template <typename T>
void check_same(const char* operation, const Array<T>& a, const Array<T>& b) {
    if (a.size() != b.size()) {
        throw DimensionMismatch(std::string(operation) + ": operands have " +
                                std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                                " values");
    }
    if (a.size() > 0 && &a.backend() != &b.backend() && a.backend().kind() != b.backend().kind()) {
        throw std::invalid_argument(std::string(operation) + ": operands on different back-ends");
    }
}

// The smallest sum of squares that the back-ends' dot products give to the precision's accuracy
// whatever the size (up to 2^31 values): below it, squares in the subnormal range (each off by
// up to half their spacing, 2^-1075 in double, 2^-150 in float) may weigh.
template <typename T>
constexpr T smallest_accurate_square() {
    return std::is_same_v<T, double> ? 0x1p-990 : 0x1p-95f;
}

// ||x|| with no square leaving the range: each value scaled by the power of two of the largest
// (over the ranks), the scaled squares summed on the host in index order and over the ranks in
// rank order (deterministic), in double; the power of two kept apart, so that no norm of finite
// values overflows. For sums of squares outside the safe range only.
template <typename T>
WideNorm scaled_norm2(const Array<T>& x) {
    const std::vector<T> values = x.to_host();
    double largest = 0;
    for (const T v : values) largest = std::max(largest, std::abs(static_cast<double>(v)));
    const Communicator& ranks = x.backend().communicator();
    if (ranks.size() > 1) largest = ranks.max(largest);
    if (largest == 0 || !std::isfinite(largest)) return {largest, 0};
    const int exponent = std::ilogb(largest);
    double sum = 0;
    for (const T v : values) {
        const double scaled = std::ldexp(static_cast<double>(v), -exponent);
        sum += scaled * scaled;
    }
    if (ranks.size() > 1) sum = ranks.sum(sum);
    return {std::sqrt(sum), exponent};
}

}  // namespace

template <typename T>
void fill(Array<T>& x, T value) {
    if (x.size() > 0)
        x.backend().template kernels<T>().fill(x.backend(), x.size(), value, x.data());
}

template <typename T>
void axpy(T alpha, const Array<T>& x, Array<T>& y) {
    check_same("axpy", x, y);
    if (x.size() > 0) {
        x.backend().template kernels<T>().axpy(x.backend(), x.size(), alpha, x.data(), y.data());
    }
}

template <typename T>
void multiply(const Array<T>& x, const Array<T>& y, Array<T>& z) {
    check_same("multiply", x, y);
    check_same("multiply", x, z);
    if (x.size() > 0) {
        x.backend().template kernels<T>().multiply(x.backend(), x.size(), x.data(), y.data(),
                                                   z.data());
    }
}

template <typename T>
void sum_over_ranks(const Backend& backend, std::span<T> values) {
    const Communicator& ranks = backend.communicator();
    if (ranks.size() == 1) return;
    std::vector<double> wide(values.begin(), values.end());
    ranks.sum(wide);
    std::copy(wide.begin(), wide.end(), values.begin());
}

template <typename T>
T dot(const Array<T>& x, const Array<T>& y) {
    return dot(x, y, false);
}

template <typename T>
T dot(const Array<T>& x, const Array<T>& y, bool compensated) {
    check_same("dot", x, y);
    if (!x.backend_ptr()) return T(0);  // an empty array of no back-end
    const auto& k = x.backend().template kernels<T>();
    T local = x.size() == 0 ? T(0)
                            : (compensated ? k.dot_compensated : k.dot)(x.backend(), x.size(),
                                                                        x.data(), y.data());
    sum_over_ranks(x.backend(), std::span<T>(&local, 1));
    return local;
}

template <typename T>
WideNorm wide_norm2(const Array<T>& x, bool compensated) {
    if (!x.backend_ptr()) return {};  // an empty array of no back-end
    const T squares = dot(x, x, compensated);
    // Every rank holds the same sum: all take the same branch (and its collectives) or none.
    if (squares < smallest_accurate_square<T>() || squares == std::numeric_limits<T>::infinity()) {
        return scaled_norm2(x);
    }
    return {std::sqrt(static_cast<double>(squares)), 0};  // NaN where x holds NaN
}

// sqrt of a float sum of squares taken in double and rounded to float is sqrtf's result (a
// double holds more than 2 x 24 + 2 bits): the common case is as before, bit for bit.
template <typename T>
T norm2(const Array<T>& x, bool compensated) {
    return static_cast<T>(wide_norm2(x, compensated).value());
}

bool WideNorm::finite_nonzero() const { return fraction != 0 && std::isfinite(fraction); }

int WideNorm::log2_floor() const { return std::ilogb(fraction) + exponent; }

double WideNorm::value() const { return std::ldexp(fraction, exponent); }

template <typename T>
void copy(const Array<T>& x, Array<T>& y) {
    check_same("copy", x, y);
    if (x.size() > 0) x.backend().copy(y.data(), x.data(), x.size() * sizeof(T));
}

#define SIMRUN_INSTANTIATE_VECTOR_OPS(T)                                    \
    template void fill<T>(Array<T>&, T);                                    \
    template void axpy<T>(T, const Array<T>&, Array<T>&);                   \
    template void multiply<T>(const Array<T>&, const Array<T>&, Array<T>&); \
    template void sum_over_ranks<T>(const Backend&, std::span<T>);          \
    template T dot<T>(const Array<T>&, const Array<T>&);                    \
    template T dot<T>(const Array<T>&, const Array<T>&, bool);              \
    template T norm2<T>(const Array<T>&, bool);                             \
    template WideNorm wide_norm2<T>(const Array<T>&, bool);                 \
    template void copy<T>(const Array<T>&, Array<T>&)

SIMRUN_INSTANTIATE_VECTOR_OPS(float);
SIMRUN_INSTANTIATE_VECTOR_OPS(double);

}  // namespace simrun::solvers

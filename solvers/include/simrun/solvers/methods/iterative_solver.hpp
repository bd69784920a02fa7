#pragma once
// The interface every iterative method offers: solve A x = b from the initial guess in x.
// A method is built once from its operator(s) and parameters and may solve many systems.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/methods/solve_result.hpp"

namespace simrun::solvers {

// What every method takes besides its operators.
struct MethodParameters {
    StoppingCriteria criteria;
    // Compensated (Neumaier) dot products: slower, less rounding in long sums.
    bool compensated_dots = false;
    // Relaxation weight for Jacobi and SOR (1 = plain Jacobi / Gauss-Seidel).
    double omega = 1.0;
    // GMRES's restart length m: a cycle builds at most m basis vectors (m + 1 stored).
    int restart = 30;
    // Fused kernels with the method's scalars kept on the back-end, where the method, the
    // format and the preconditioner allow (CG with DIA, ELLPACK-R or short-row CSR, no or
    // Jacobi preconditioner, plain dots). false: one kernel per operation and the host checks
    // every iteration (the reference the fused path is tested against).
    bool fused_kernels = true;
};

// The exponent k of the power of two 2^k by which a system whose right side has norm
// `rhs_norm` is solved scaled (b' = 2^k b, x' = 2^k x): 0 where ||b|| lies in [2^-range,
// 2^range] (range 256 in double, 20 in float: every square and product a method forms from
// vectors of that norm, down to the tolerance and up to the size, stays far from underflow
// and overflow), and for 0 or a non-finite norm; otherwise the k that brings ||b|| near 1,
// lowered where x0 (of norm `guess_norm`) would leave the range, within the exponents of T.
template <typename T>
int system_scale_exponent(double rhs_norm, double guess_norm) {
    const int range = std::is_same_v<T, double> ? 256 : 20;
    if (!(rhs_norm > 0) || !std::isfinite(rhs_norm)) return 0;
    const int exponent = std::ilogb(rhs_norm);
    if (exponent >= -range && exponent <= range) return 0;
    int k = -exponent;
    if (k > 0 && guess_norm > 0 && std::isfinite(guess_norm)) {
        k = std::max(0, std::min(k, range - std::ilogb(guess_norm)));
    }
    return std::clamp(k, std::numeric_limits<T>::min_exponent - 1,
                      std::numeric_limits<T>::max_exponent - 1);
}

template <typename T>
class IterativeSolver {
public:
    virtual ~IterativeSolver() = default;
    // Solves from the initial guess in x. Never throws for a solve that fails to converge: the
    // status says why it stopped and x holds the last iterate (after non_finite it may hold
    // NaN or Inf; LinearSystemSolver then restores the initial guess). Throws
    // DimensionMismatch when b or x do not match the operator.
    // Where ||b|| is out of range (system_scale_exponent), the method iterates on the system
    // scaled exactly by 2^k (b, x0 and atol), so that its norms and dot products neither
    // underflow nor overflow, and x and the result's norms are scaled back: the same iterates
    // up to the factor. Other systems are solved as given, bit for bit.
    SolveResult solve(const Array<T>& b, Array<T>& x) const {
        if (b.size() != x.size() || !b.backend_ptr()) return iterate(b, x);  // it throws
        const auto b_norm = static_cast<double>(norm2(b));
        if (system_scale_exponent<T>(b_norm, 0.0) == 0) return iterate(b, x);
        const int k = system_scale_exponent<T>(b_norm, static_cast<double>(norm2(x)));
        return k == 0 ? iterate(b, x) : iterate_scaled(b, x, k);
    }

protected:
    explicit IterativeSolver(const StoppingCriteria& criteria)
        : criteria_(criteria), current_(criteria) {}
    IterativeSolver(const IterativeSolver&) = delete;
    IterativeSolver& operator=(const IterativeSolver&) = delete;

    // The criteria of the solve under way: those given, atol scaled with the system.
    const StoppingCriteria& criteria() const { return current_; }
    // The method itself: solve's contract, on a system whose norms are in range.
    virtual SolveResult iterate(const Array<T>& b, Array<T>& x) const = 0;

private:
    // b' = 2^k b (in a buffer of its own), x' = 2^k x in place, atol' = 2^k atol; after the
    // method, x = 2^-k x' and the norms reported divided by 2^k. Exact: powers of two.
    SolveResult iterate_scaled(const Array<T>& b, Array<T>& x, int k) const {
        if (scaled_b_.size() != b.size()) scaled_b_ = Array<T>(b.backend_ptr(), b.size());
        fill(scaled_b_, std::ldexp(T(1), k));
        multiply(x, scaled_b_, x);
        multiply(b, scaled_b_, scaled_b_);
        current_.absolute_tolerance = std::ldexp(criteria_.absolute_tolerance, k);
        const auto unscale_x = [&] {
            current_ = criteria_;
            fill(scaled_b_, std::ldexp(T(1), -k));
            multiply(x, scaled_b_, x);
        };
        SolveResult result;
        try {
            result = iterate(scaled_b_, x);
        } catch (...) {
            unscale_x();
            throw;
        }
        unscale_x();
        result.scale_norms(-k);
        return result;
    }

    StoppingCriteria criteria_;
    mutable StoppingCriteria current_;
    mutable Array<T> scaled_b_;  // 2^k b, made at the first scaled solve
};

}  // namespace simrun::solvers

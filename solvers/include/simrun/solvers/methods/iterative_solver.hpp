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

// Powers of two 2^lowest .. 2^highest within which a magnitude is used as given; outside, the
// system is scaled exactly by a power of two that brings it near 1.
struct ExponentRange {
    int lowest;
    int highest;
    constexpr bool contains(int exponent) const {
        return exponent >= lowest && exponent <= highest;
    }
};

// ||b||'s range in precision T. The methods form squares of vectors of norm ||b|| (down to the
// tolerance times ||b||) and products with A up to ||A||^2 ||b||^2 (BiCGStab's t't).
// Float: 2^-20 keeps the residual at the smallest rtol float accepts (its unit roundoff, 2^-24)
// at a square of 2^-88 or more, above norm2's accurate 2^-95; 2^40 keeps ||b||^2 <= 2^80 and
// ||A||^2 ||b||^2 below FLT_MAX (2^128) for A's entries within matrix_entry_exponents (2^20,
// up to 8 a row: ||A|| <= 2^23). Ordinary float data (||b|| up to 1e12) is solved as given.
// Double: [2^-256, 2^256], far from both ends (squares within [2^-618, 2^512] at any rtol).
template <typename T>
constexpr ExponentRange rhs_norm_exponents() {
    return std::is_same_v<T, double> ? ExponentRange{-256, 256} : ExponentRange{-20, 40};
}

// The range of A's largest entry within which `simrun solve` and simrun.solve use A's rows as
// given (outside, A's rows and b are scaled by a power of two: x unchanged), in precision T.
template <typename T>
constexpr ExponentRange matrix_entry_exponents() {
    return std::is_same_v<T, double> ? ExponentRange{-256, 256} : ExponentRange{-20, 20};
}

// The exponent k of the power of two that brings a magnitude 2^exponent near 1 (k = -exponent)
// where it lies outside `range`; 0 inside.
constexpr int exponent_toward_one(int exponent, ExponentRange range) {
    return range.contains(exponent) ? 0 : -exponent;
}

// The exponent k of the power of two 2^k by which a system whose right side has norm `rhs` is
// solved scaled (b' = 2^k b, x' = 2^k x): 0 where ||b|| lies in rhs_norm_exponents<T>(), and for
// 0 or a non-finite norm; otherwise the k that brings ||b|| near 1 (any finite b: WideNorm does
// not overflow), lowered where x0 (of norm `guess`) would leave the range, within the exponents
// of T (2^k is a normal number).
template <typename T>
int system_scale_exponent(const WideNorm& rhs, const WideNorm& guess) {
    constexpr ExponentRange range = rhs_norm_exponents<T>();
    if (!rhs.finite_nonzero()) return 0;
    int k = exponent_toward_one(rhs.log2_floor(), range);
    if (k > 0 && guess.finite_nonzero()) {
        k = std::max(0, std::min(k, range.highest - guess.log2_floor()));
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
    // up to the factor. Other systems are solved as given, bit for bit. Where ||b|| is above the
    // range (k < 0), x0's entries below 2^(min_exponent - 1 - k) are rounded to T's subnormals
    // (to 0 below 2^-1074 ||b||, 2^-149 ||b|| in float): x0 is only where the iteration starts,
    // and the solution still meets the tolerance; a change of x0 below 2^-1074 ||b|| moves
    // ||b - A x0|| by at most ||A|| times that.
    SolveResult solve(const Array<T>& b, Array<T>& x) const {
        if (b.size() != x.size() || !b.backend_ptr()) return iterate(b, x);  // it throws
        const WideNorm b_norm = wide_norm2(b);
        if (system_scale_exponent<T>(b_norm, WideNorm{}) == 0) return iterate(b, x);
        const int k = system_scale_exponent<T>(b_norm, wide_norm2(x));
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

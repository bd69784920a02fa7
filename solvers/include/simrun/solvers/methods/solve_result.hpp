#pragma once
// The outcome of a solve, as a value: why it stopped, how far it got, and the history.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "simrun/solvers/base/enum_names.hpp"
#include "simrun/solvers/base/precision.hpp"

namespace simrun::solvers {

enum class SolveStatus {
    converged,       // the residual met the tolerance
    max_iterations,  // the iteration limit came first
    breakdown,       // a quantity the method divides by vanished (breakdown_quantity says which)
    diverged,        // the residual grew past the divergence limit
    non_finite,      // NaN or Inf appeared (the quantity is named when known)
    indefinite,      // CG met p'Ap <= 0 (or a preconditioner that is not positive definite)
    stagnated,       // the method's residual met the tolerance, b - A x recomputed did not, even
                     // after restarts from x: the tolerance is below what the precision
                     // reaches on this system
    no_progress,     // the best residual did not fall by 1% over the progress window
                     // (StoppingCriteria::progress_window): stopped early for the next method
    singular,        // the residual met the tolerance, but the matrix is structurally singular
                     // (an empty row or column): x is one of infinitely many solutions
    interrupted,     // the caller asked the solve to stop (StoppingCriteria::interrupted): x is
                     // the last iterate
};

template <>
inline constexpr std::array enum_names<SolveStatus> = {
    EnumName<SolveStatus>{SolveStatus::converged, "converged"},
    EnumName<SolveStatus>{SolveStatus::max_iterations, "max_iterations"},
    EnumName<SolveStatus>{SolveStatus::breakdown, "breakdown"},
    EnumName<SolveStatus>{SolveStatus::diverged, "diverged"},
    EnumName<SolveStatus>{SolveStatus::non_finite, "non_finite"},
    EnumName<SolveStatus>{SolveStatus::indefinite, "indefinite"},
    EnumName<SolveStatus>{SolveStatus::stagnated, "stagnated"},
    EnumName<SolveStatus>{SolveStatus::no_progress, "no_progress"},
    EnumName<SolveStatus>{SolveStatus::singular, "singular"},
    EnumName<SolveStatus>{SolveStatus::interrupted, "interrupted"}};

std::string_view to_string(SolveStatus status);

// When to stop: ||r|| <= max(relative_tolerance * ||b||, absolute_tolerance), or after
// max_iterations; diverged when ||r|| > divergence_limit * max(||r0||, ||b||).
struct StoppingCriteria {
    double relative_tolerance = 1e-8;
    double absolute_tolerance = 0.0;
    std::int64_t max_iterations = 1000;
    double divergence_limit = 1e8;
    // > 0: stop as no_progress once the smallest ||r|| so far is not below 0.99 times the
    // smallest of `progress_window` iterations before (a method that stalls is left for the
    // next one of a fallback chain rather than run to max_iterations). 0: never.
    std::int64_t progress_window = 0;
    // Asked between batches of iterations (every iteration where the host checks each): true
    // stops the solve as interrupted (e.g. Ctrl-C in the Python module). Empty: never. It may
    // be called often: a hook that costs (taking a lock) limits itself.
    std::function<bool()> interrupted;
};

// What is wrong with criteria a solve in `precision` is asked to meet, by the key it concerns
// ("rtol", "atol", "max_iterations"), or nothing: rtol in [0, 1) and not below the unit roundoff
// (a tolerance no solve can reach), atol >= 0 and finite, not both 0, max_iterations >= 1. The
// input file and the command line check the same way and place the message themselves.
struct CriteriaProblem {
    std::string_view key;
    std::string message;
};
std::optional<CriteriaProblem> find_problem(const StoppingCriteria& criteria, Precision precision);

struct SolveResult {
    SolveStatus status = SolveStatus::max_iterations;
    std::int64_t iterations = 0;
    double rhs_norm = 0.0;          // ||b||
    double initial_residual = 0.0;  // ||b - A x0||
    // ||b - A x|| as tracked by the method; for a solve the method called converged, b - A x
    // recomputed (LinearSystemSolver), which decides the status.
    double final_residual = 0.0;
    std::vector<double> residual_history;  // ||r_k||, k = 0 .. iterations
    std::string breakdown_quantity;        // e.g. "p'Ap" or "rho", when one occurred
    std::optional<double> breakdown_value;
    // The power of the system's scale in breakdown_value (b and x times s: the value times
    // s^degree): 2 for a product of two of its vectors (rho, p'Ap, r'Mr, r0'v, t't), 0 for a
    // scale-free one (omega, GMRES's h of normalized basis vectors).
    int breakdown_degree = 2;

    bool converged() const { return status == SolveStatus::converged; }
    // final_residual / rhs_norm (final_residual itself when b = 0).
    double relative_residual() const;
    // One line for logs, e.g. "converged in 12 iterations, ||r||/||b|| = 3.1e-09".
    std::string summary() const;
    // Every norm (||b||, the residuals and their history) times 2^exponent, and breakdown_value
    // times 2^(breakdown_degree x exponent), exactly: the result of a system whose b and x were
    // solved scaled by 2^-exponent, reported at the system's own scale.
    void scale_norms(int exponent);
};

// A converged verdict checked against b - A x recomputed independently of the solve (e.g. in
// long double), as `true_relative_residual` = ||b - A x|| / ||b||: it stands where that meets
// rtol, or its absolute value (times result.rhs_norm) meets atol, with no slack; otherwise the
// status becomes stagnated and final_residual the true one. Any other status, and a NaN true
// residual (not recomputed), leave the result as it is.
void confirm_true_residual(SolveResult& result, double true_relative_residual,
                           const StoppingCriteria& criteria);

}  // namespace simrun::solvers

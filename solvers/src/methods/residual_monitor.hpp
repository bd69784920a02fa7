#pragma once
// Applies StoppingCriteria to the residual norms an iterative method produces, recording them
// in its SolveResult. Shared by every method so they stop, and report, in one way.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "base/kernel_table.hpp"
#include "kernels/unified/iteration_decisions.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/matrices/linear_operator.hpp"
#include "simrun/solvers/methods/solve_result.hpp"

namespace simrun::solvers {

// r = b - A x; returns ||r||. Traffic: one SpMV, then 2n reads + n writes, then n reads.
template <typename T>
double compute_residual(const LinearOperator<T>& a, const Array<T>& b, const Array<T>& x,
                        Array<T>& r, bool compensated) {
    a.apply(x, r);
    const Backend& backend = *a.backend();
    backend.kernels<T>().xpby(backend, r.size(), b.data(), T(-1), r.data());
    return static_cast<double>(norm2(r, compensated));
}

class ResidualMonitor {
public:
    // Records ||b|| in result (the scale of the relative tolerance) and sets the target.
    template <typename T>
    ResidualMonitor(const StoppingCriteria& criteria, SolveResult& result, const Array<T>& b,
                    bool compensated)
        : criteria_(criteria),
          result_(result),
          target_(std::max(criteria.relative_tolerance *
                               (result.rhs_norm = static_cast<double>(norm2(b, compensated))),
                           criteria.absolute_tolerance)) {}

    // The start every method shares: r = b - A x recorded as iteration 0. Returns true when the
    // initial guess already stops the solve.
    template <typename T>
    bool start(const LinearOperator<T>& a, const Array<T>& b, const Array<T>& x, Array<T>& r,
               bool compensated) {
        return stop_at(compute_residual(a, b, x, r, compensated), 0);
    }

    // Records ||r|| after `iteration` iterations (0 = the initial residual). Returns true when
    // the method must stop, with result.status set: converged, non_finite, diverged,
    // no_progress, or interrupted (the caller's hook, asked once the residual is recorded).
    bool stop_at(double residual, std::int64_t iteration) {
        return record(residual, iteration) || interrupted();
    }

    // stop_at without asking the caller's hook: for the iterations of a batch replayed, after
    // which the batch asks once (interrupted()).
    bool record(double residual, std::int64_t iteration) {
        result_.iterations = iteration;
        result_.final_residual = residual;
        result_.residual_history.push_back(residual);
        if (iteration == 0) {
            result_.initial_residual = residual;
            divergence_ = criteria_.divergence_limit * std::max(residual, result_.rhs_norm);
            smallest_.clear();
        }
        smallest_.push_back(
            smallest_.empty() || !(residual >= smallest_.back()) ? residual : smallest_.back());
        return verdict(residual);
    }

    // Replaces the residual last recorded by b - A x recomputed at the same iterate (a
    // restarted method's new start). Returns true when the method must stop, as stop_at.
    bool revise(double residual) {
        result_.final_residual = residual;
        result_.residual_history.back() = residual;
        const std::size_t last = smallest_.size() - 1;
        smallest_[last] =
            last == 0 || !(residual >= smallest_[last - 1]) ? residual : smallest_[last - 1];
        return verdict(residual) || interrupted();
    }

    // Whether the caller asked the solve to stop (StoppingCriteria::interrupted); if so the
    // status says interrupted.
    bool interrupted() {
        return criteria_.interrupted && criteria_.interrupted() && finish(SolveStatus::interrupted);
    }

    // Whether a residual norm meets the tolerance (without recording it).
    bool meets_tolerance(double residual) const { return residual <= target_; }
    // The limits: converged when ||r|| <= target(), diverged when ||r|| > divergence() (set by
    // the initial residual, stop_at(..., 0)).
    double target() const { return target_; }
    double divergence() const { return divergence_; }

    // Records a breakdown of the method: a quantity it divides by or needs positive failed;
    // `degree`: its power of the system's scale (SolveResult::breakdown_degree).
    void breakdown(SolveStatus status, const char* quantity, double value, int degree = 2) {
        result_.status = status;
        result_.breakdown_quantity = quantity;
        result_.breakdown_value = value;
        result_.breakdown_degree = degree;
    }

private:
    bool verdict(double residual) {
        switch (residual_verdict(residual, target_, divergence_)) {
            case ResidualVerdict::non_finite:
                return finish(SolveStatus::non_finite);
            case ResidualVerdict::converged:
                return finish(SolveStatus::converged);
            case ResidualVerdict::diverged:
                return finish(SolveStatus::diverged);
            case ResidualVerdict::go_on:
                break;
        }
        const auto window = static_cast<std::size_t>(criteria_.progress_window);
        if (window > 0 && smallest_.size() > window &&
            !(smallest_.back() < 0.99 * smallest_[smallest_.size() - 1 - window])) {
            return finish(SolveStatus::no_progress);
        }
        return false;
    }

    bool finish(SolveStatus status) {
        result_.status = status;
        return true;
    }

    const StoppingCriteria& criteria_;
    SolveResult& result_;
    double target_;
    double divergence_ = 0.0;
    std::vector<double> smallest_;  // smallest ||r|| up to each iteration
};

}  // namespace simrun::solvers

#include "simrun/solvers/methods/solve_result.hpp"

#include <cmath>
#include <cstdio>

namespace simrun::solvers {

std::string_view to_string(SolveStatus status) { return name_of(status); }

std::optional<CriteriaProblem> find_problem(const StoppingCriteria& c, Precision precision) {
    const double u = unit_roundoff(precision);
    if (!(c.relative_tolerance >= 0.0 && c.relative_tolerance < 1.0)) {
        return CriteriaProblem{"rtol", "must be in [0, 1)"};
    }
    if (c.relative_tolerance > 0.0 && c.relative_tolerance < u) {
        char text[200];
        std::snprintf(text, sizeof text,
                      "%.3g is below the unit roundoff of %s (%.3g): no solve can reach it; use "
                      "atol for an absolute tolerance",
                      c.relative_tolerance, std::string(name_of(precision)).c_str(), u);
        return CriteriaProblem{"rtol", text};
    }
    if (!(c.absolute_tolerance >= 0.0) || !std::isfinite(c.absolute_tolerance)) {
        return CriteriaProblem{"atol", "must be >= 0 and finite"};
    }
    if (c.relative_tolerance == 0.0 && c.absolute_tolerance == 0.0) {
        return CriteriaProblem{"rtol", "rtol and atol cannot both be 0"};
    }
    if (c.max_iterations < 1) return CriteriaProblem{"max_iterations", "must be >= 1"};
    return std::nullopt;
}

double SolveResult::relative_residual() const {
    return rhs_norm > 0.0 ? final_residual / rhs_norm : final_residual;
}

void SolveResult::scale_norms(int exponent) {
    for (double* norm : {&rhs_norm, &initial_residual, &final_residual}) {
        *norm = std::ldexp(*norm, exponent);
    }
    for (double& norm : residual_history) norm = std::ldexp(norm, exponent);
    if (breakdown_value)
        breakdown_value = std::ldexp(*breakdown_value, breakdown_degree * exponent);
}

void confirm_true_residual(SolveResult& result, double true_relative_residual,
                           const StoppingCriteria& criteria) {
    if (!result.converged() || std::isnan(true_relative_residual)) return;
    if (true_relative_residual <= criteria.relative_tolerance ||
        true_relative_residual * result.rhs_norm <= criteria.absolute_tolerance) {
        return;
    }
    result.status = SolveStatus::stagnated;
    result.final_residual = true_relative_residual * result.rhs_norm;
}

std::string SolveResult::summary() const {
    char line[256];
    std::snprintf(line, sizeof line, "%s after %lld iterations, ||r||/||b|| = %.3e",
                  std::string(to_string(status)).c_str(), static_cast<long long>(iterations),
                  relative_residual());
    std::string text = line;
    if (status == SolveStatus::stagnated) {
        text +=
            " (b - A x recomputed; the method's own residual met the tolerance: the tolerance "
            "is below what this precision reaches on this system)";
    }
    if (status == SolveStatus::singular) {
        text += " (the matrix is structurally singular: x is one solution of many)";
    }
    if (status == SolveStatus::interrupted) text += " (stopped at the caller's request)";
    if (status == SolveStatus::no_progress) {
        text += " (no progress over the window: stopped for the next method)";
    }
    if (breakdown_value) {
        std::snprintf(line, sizeof line, " (%s = %.3e)", breakdown_quantity.c_str(),
                      *breakdown_value);
        text += line;
    }
    return text;
}

}  // namespace simrun::solvers

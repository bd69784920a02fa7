#include "simrun/solvers/methods/solve_result.hpp"

#include <cstdio>

namespace simrun::solvers {

std::string_view to_string(SolveStatus status) { return name_of(status); }

double SolveResult::relative_residual() const {
    return rhs_norm > 0.0 ? final_residual / rhs_norm : final_residual;
}

std::string SolveResult::summary() const {
    char line[256];
    std::snprintf(line, sizeof line, "%s after %lld iterations, ||r||/||b|| = %.3e",
                  std::string(to_string(status)).c_str(), static_cast<long long>(iterations),
                  relative_residual());
    std::string text = line;
    if (breakdown_value) {
        std::snprintf(line, sizeof line, " (%s = %.3e)", breakdown_quantity.c_str(),
                      *breakdown_value);
        text += line;
    }
    return text;
}

}  // namespace simrun::solvers

#include "solve_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/system/memory_budget.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/matrix_market.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"

namespace simrun::app {
namespace {

using framework::InputError;

using Clock = std::chrono::steady_clock;

std::vector<double> read_vector(const std::string& path, std::int32_t n, const char* what) {
    std::vector<double> v = solvers::read_matrix_market_vector(path);
    if (static_cast<std::int64_t>(v.size()) != n) {
        throw InputError(path + ": " + what + " has " + std::to_string(v.size()) +
                         " entries, the matrix has " + std::to_string(n) + " rows");
    }
    return v;
}

std::string format_error_vs_ones(double error) {
    char text[64];
    std::snprintf(text, sizeof text, ", max |x - 1| = %.3e", error);
    return text;
}

// Why a solve exits 1, in a line for stderr: the last attempt's outcome, the true residual,
// and for a structurally singular matrix what makes it so.
std::string failure_reason(const SystemSolution& outcome) {
    const solvers::SolveResult& result = outcome.report.result();
    std::string reason = result.summary();
    if (!outcome.finite) reason += "; the solution is not finite";
    if (!std::isnan(outcome.relative_residual)) {
        char text[80];
        std::snprintf(text, sizeof text, "; true ||b - Ax||/||b|| = %.3e",
                      outcome.relative_residual);
        reason += text;
    }
    if (!outcome.plan.singular.empty()) reason += "; " + outcome.plan.singular;
    return reason;
}

}  // namespace

int run_solve(const SolveOptions& o) {
    check_settings(o.settings, SettingNames::command_line);

    const auto read_start = Clock::now();
    solvers::CooData<double> coo = solvers::read_matrix_market(o.matrix);
    // Before the matrix and vectors of this size are made: a short file may declare 2^31 rows.
    // Per row: the CSR row pointer and about 14 vectors (b, x, x0 and the solution on the host;
    // the solver's work vectors); per entry the CSR index and value and their device copy.
    const double bytes = (4.0 + 8.0 * 14) * coo.rows + 24.0 * static_cast<double>(coo.nnz());
    if (const auto problem = solvers::memory_problem(bytes)) {
        throw InputError(o.matrix + ": a system of " + std::to_string(coo.rows) + " rows and " +
                         std::to_string(coo.nnz()) + " entries " + *problem);
    }
    const solvers::CsrData<double> a = solvers::to_csr(coo);
    if (a.rows != a.cols) {
        throw InputError(o.matrix + ": the matrix is " + std::to_string(a.rows) + " x " +
                         std::to_string(a.cols) + "; a linear system needs a square matrix");
    }
    check_grid(o.settings, a.rows, SettingNames::command_line);
    const auto n = static_cast<std::size_t>(a.rows);
    const bool generated_rhs = o.rhs.empty();
    std::vector<double> b;
    if (generated_rhs) {  // b = A * ones, so the exact solution is all ones
        b.assign(n, 0.0);
        for (std::int32_t i = 0; i < a.rows; ++i) {
            long double sum = 0;
            for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) sum += a.values[k];
            b[static_cast<std::size_t>(i)] = static_cast<double>(sum);
        }
    } else {
        b = read_vector(o.rhs, a.rows, "the right-hand side");
    }
    const std::vector<double> x0 = o.initial_guess.empty()
                                       ? std::vector<double>(n, 0.0)
                                       : read_vector(o.initial_guess, a.rows, "the initial guess");
    const double read_seconds = std::chrono::duration<double>(Clock::now() - read_start).count();

    SystemSolution outcome = solve_system(a, b, x0, o.settings);
    const solvers::SolveResult& result = outcome.report.result();
    double error_vs_ones = 0;
    for (double v : outcome.x) error_vs_ones = std::max(error_vs_ones, std::abs(v - 1.0));
    const bool finite = outcome.finite;
    const std::int64_t iterations = outcome.iterations;
    const double relative_residual = outcome.relative_residual;
    const solvers::MatrixProperties& properties = outcome.properties;

    if (!o.out.empty()) {
        if (!finite) {
            std::fprintf(stderr, "simrun solve: not writing %s: the solution is not finite\n",
                         o.out.c_str());
        } else {
            solvers::write_matrix_market_vector(o.out, outcome.x);
        }
    }

    if (o.json) {
        nlohmann::json j = std::move(outcome.json);
        j["matrix"] = o.matrix;
        if (generated_rhs) j["error_vs_ones"] = error_vs_ones;
        j["read_seconds"] = read_seconds;
        std::printf("%s\n", j.dump().c_str());
    } else {
        std::printf("matrix   %s: %s\n", o.matrix.c_str(), properties.describe().c_str());
        std::printf("backend  %s (%s), %s precision\n", outcome.backend.c_str(),
                    outcome.backend_reason.c_str(),
                    std::string(solvers::name_of(o.settings.precision)).c_str());
        std::printf("solver   %s\n", outcome.plan.first.reason.c_str());
        std::printf("format   %s\n", outcome.plan.format_reason.c_str());
        if (!outcome.plan.singular.empty()) {
            std::printf("singular %s\n", outcome.plan.singular.c_str());
        }
        if (!outcome.preconditioner_details.empty()) {
            std::printf("%-8s %s\n",
                        outcome.plan.first.preconditioner == solvers::PreconditionerKind::multigrid
                            ? "cycle"
                            : "precond",
                        outcome.preconditioner_details.c_str());
        }
        for (const auto& attempt : outcome.report.attempts) {
            std::printf("attempt  %s: %s\n", attempt.step.name().c_str(),
                        attempt.result.summary().c_str());
            if (!attempt.preconditioner_details.empty() &&
                attempt.step.preconditioner != solvers::PreconditionerKind::multigrid) {
                std::printf("         %s: %s\n",
                            solvers::to_string(attempt.step.preconditioner).c_str(),
                            attempt.preconditioner_details.c_str());
            }
        }
        std::printf("result   %s, %lld iterations, true ||b - Ax||/||b|| = %.3e%s\n",
                    std::string(solvers::to_string(result.status)).c_str(),
                    static_cast<long long>(iterations), relative_residual,
                    generated_rhs ? format_error_vs_ones(error_vs_ones).c_str() : "");
        std::printf("time     setup %.3g s, solve %.3g s (%.3g s per iteration)\n",
                    outcome.setup_seconds, outcome.solve_seconds,
                    iterations > 0 ? outcome.solve_seconds / static_cast<double>(iterations) : 0.0);
    }
    if (!outcome.converged) {
        std::fprintf(stderr, "simrun solve: %s: not solved: %s\n", o.matrix.c_str(),
                     failure_reason(outcome).c_str());
    }
    return outcome.converged ? 0 : 1;
}

}  // namespace simrun::app

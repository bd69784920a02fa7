#include "solve_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "command_options.hpp"
#include "front_end/solver_words.hpp"
#include "front_end/system_solve.hpp"
#include "front_end/timing.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/matrix_market.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"
#include "simrun/solvers/system/memory_budget.hpp"

namespace simrun::app {
namespace {

using framework::InputError;
using front_end::SettingNames;
using front_end::SystemSolution;

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

// A, b and x0 as the options name them, checked against each other.
struct System {
    solvers::CsrData<double> a;
    std::vector<double> b, x0;
    bool generated_rhs = false;  // b = A * ones, so the exact solution is all ones
};

solvers::CsrData<double> read_matrix(const SolveOptions& o) {
    solvers::CooData<double> coo = solvers::read_matrix_market(o.matrix);
    // Before the matrix and vectors of this size are made: a short file may declare 2^31 rows.
    // Per row: the CSR row pointer and about 14 vectors (b, x, x0 and the solution on the host;
    // the solver's work vectors); per entry the CSR index and value and their device copy.
    const double bytes = (4.0 + 8.0 * 14) * coo.rows + 24.0 * static_cast<double>(coo.nnz());
    if (const auto problem = solvers::memory_problem(bytes)) {
        throw InputError(o.matrix + ": a system of " + std::to_string(coo.rows) + " rows and " +
                         std::to_string(coo.nnz()) + " entries " + *problem);
    }
    solvers::CsrData<double> a = solvers::to_csr(coo);
    if (a.rows != a.cols) {
        throw InputError(o.matrix + ": the matrix is " + std::to_string(a.rows) + " x " +
                         std::to_string(a.cols) + "; a linear system needs a square matrix");
    }
    return a;
}

System read_system(const SolveOptions& o) {
    System s;
    s.a = read_matrix(o);
    const solvers::CsrData<double>& a = s.a;
    front_end::check_grid(o.settings, a.rows, SettingNames::command_line);
    const auto n = static_cast<std::size_t>(a.rows);
    s.generated_rhs = o.rhs.empty();
    if (s.generated_rhs) {
        s.b.assign(n, 0.0);
        for (std::int32_t i = 0; i < a.rows; ++i) {
            long double sum = 0;
            for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) sum += a.values[k];
            s.b[static_cast<std::size_t>(i)] = static_cast<double>(sum);
        }
    } else {
        s.b = read_vector(o.rhs, a.rows, "the right-hand side");
    }
    s.x0 = o.initial_guess.empty() ? std::vector<double>(n, 0.0)
                                   : read_vector(o.initial_guess, a.rows, "the initial guess");
    return s;
}

// The report as text: the matrix, the back-end, the plan, each attempt, the result and times.
void print_report(const SolveOptions& o, const SystemSolution& outcome,
                  std::optional<double> error_vs_ones) {
    const solvers::SolveResult& result = outcome.report.result();
    const std::int64_t iterations = outcome.iterations;
    std::printf("matrix   %s: %s\n", o.matrix.c_str(), outcome.properties.describe().c_str());
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
                static_cast<long long>(iterations), outcome.relative_residual,
                error_vs_ones ? format_error_vs_ones(*error_vs_ones).c_str() : "");
    std::printf("time     setup %.3g s, solve %.3g s (%.3g s per iteration)\n",
                outcome.setup_seconds, outcome.solve_seconds,
                iterations > 0 ? outcome.solve_seconds / static_cast<double>(iterations) : 0.0);
}

// The settings from the options' words, checked before any system is read.
void complete_settings(SolveOptions& o) {
    o.settings.solver.request =
        front_end::parse_solver_request(o.method, o.preconditioner, o.format);
    if (!o.grid.empty()) front_end::set_grid(o.settings, o.grid, SettingNames::command_line);
    front_end::check_settings(o.settings, o.restart, SettingNames::command_line);
}

}  // namespace

CLI::App* add_solve_command(CLI::App& app, SolveOptions& o) {
    CLI::App* solve = app.add_subcommand(
        "solve", "Solve A x = b from Matrix Market files with the solver layer on its own");
    solve->add_option("matrix", o.matrix, "A.mtx (square)")->required();
    solve->add_option("--rhs", o.rhs, "b.mtx (default: b = A * ones)");
    solve->add_option("--x0", o.initial_guess, "Initial guess x0.mtx (default: 0)");
    const auto words = [&](const char* name, std::string& value,
                           const std::vector<std::string>& list) {
        solve->add_option(name, value, joined(list))->check(CLI::IsMember(list));
    };
    words("--solver", o.method, front_end::method_words());
    words("--precond", o.preconditioner, front_end::preconditioner_words());
    words("--format", o.format, front_end::format_words());
    front_end::SolveSettings& s = o.settings;
    solve->add_option_function<double>(
        "--rtol", [&s](double rtol) { s.set_rtol(rtol); },
        "Relative tolerance ||r||/||b|| (1e-8; 1e-6 in float)");
    solve->add_option("--atol", s.solver.method.criteria.absolute_tolerance,
                      "Absolute tolerance ||r|| (0)");
    solve->add_option_function<long long>(
        "--max-iters", [&s](long long limit) { s.set_max_iterations(limit); },
        "Iteration limit (default: 2 n within [1000, 10000])");
    solve->add_option("--omega", s.solver.method.omega,
                      "Relaxation weight for jacobi/sor/ssor (1)");
    solve->add_option("--restart-length", o.restart,
                      "GMRES's restart length m: basis vectors per cycle (30; at most 128)");
    add_word_option(*solve, "--precision", s.precision, "Floating-point type");
    add_word_option(*solve, "--backend", s.backend, "Back-end");
    solve
        ->add_option("--grid", o.grid,
                     "The rows are the points of this box, x fastest (so multigrid applies)")
        ->option_text("NXxNY[xNZ]");
    solve->add_option("--out", o.out, "Write the solution to x.mtx");
    solve->add_flag("--compensated", s.solver.method.compensated_dots,
                    "Compensated (Kahan/Neumaier) dot products");
    solve->add_flag("--json", o.json, "Print one JSON object");
    return solve;
}

int run_solve(SolveOptions o) {
    complete_settings(o);
    const auto read_start = front_end::Clock::now();
    const System system = read_system(o);
    const double read_seconds = front_end::seconds_since(read_start);

    SystemSolution outcome = front_end::solve_system(system.a, system.b, system.x0, o.settings);
    std::optional<double> error_vs_ones;
    if (system.generated_rhs) {
        error_vs_ones = 0.0;
        for (double v : outcome.x) error_vs_ones = std::max(*error_vs_ones, std::abs(v - 1.0));
    }
    if (!o.out.empty()) {
        if (!outcome.finite) {
            std::fprintf(stderr, "simrun solve: not writing %s: the solution is not finite\n",
                         o.out.c_str());
        } else {
            solvers::write_matrix_market_vector(o.out, outcome.x);
        }
    }
    if (o.json) {
        nlohmann::json j = std::move(outcome.json);
        j["matrix"] = o.matrix;
        if (error_vs_ones) j["error_vs_ones"] = *error_vs_ones;
        j["read_seconds"] = read_seconds;
        std::printf("%s\n", j.dump().c_str());
    } else {
        print_report(o, outcome, error_vs_ones);
    }
    if (!outcome.converged) {
        std::fprintf(stderr, "simrun solve: %s: not solved: %s\n", o.matrix.c_str(),
                     failure_reason(outcome).c_str());
    }
    return outcome.converged ? 0 : 1;
}

}  // namespace simrun::app

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
#include "simrun/solvers/base/memory_budget.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/matrix_market.hpp"
#include "simrun/solvers/methods/gmres.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"

namespace simrun::app {
namespace {

using framework::InputError;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// b - A x in long double, independent of the solver's kernels.
double true_relative_residual(const solvers::CsrData<double>& a, const std::vector<double>& b,
                              const std::vector<double>& x) {
    long double r2 = 0, b2 = 0;
    for (std::int32_t i = 0; i < a.rows; ++i) {
        long double ax = 0;
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            ax += static_cast<long double>(a.values[k]) * x[static_cast<std::size_t>(a.col[k])];
        }
        const long double r = b[static_cast<std::size_t>(i)] - ax;
        r2 += r * r;
        b2 += static_cast<long double>(b[static_cast<std::size_t>(i)]) *
              b[static_cast<std::size_t>(i)];
    }
    return static_cast<double>(b2 > 0 ? std::sqrt(r2 / b2) : std::sqrt(r2));
}

std::vector<double> read_vector(const std::string& path, std::int32_t n, const char* what) {
    std::vector<double> v = solvers::read_matrix_market_vector(path);
    if (static_cast<std::int64_t>(v.size()) != n) {
        throw InputError(path + ": " + what + " has " + std::to_string(v.size()) +
                         " entries, the matrix has " + std::to_string(n) + " rows");
    }
    return v;
}

// The stopping criteria asked for. Default limit: twice the size (CG's exact-arithmetic bound
// is n), within [1000, 10000].
solvers::StoppingCriteria criteria(const SolveOptions& o, std::int32_t rows) {
    solvers::StoppingCriteria c;
    c.relative_tolerance = o.rtol                                                ? *o.rtol
                           : o.precision == solvers::Precision::single_precision ? 1e-6
                                                                                 : 1e-8;
    c.absolute_tolerance = o.atol;
    c.max_iterations = o.max_iterations ? *o.max_iterations
                                        : std::clamp<std::int64_t>(
                                              2 * static_cast<std::int64_t>(rows), 1000, 10000);
    return c;
}

struct Outcome {
    solvers::SolveReport report;
    std::vector<double> x;
    double setup_seconds = 0;
    double solve_seconds = 0;
    std::string backend;
    std::string backend_reason;
    solvers::SolverPlan plan;
    std::string preconditioner_details;  // the multigrid hierarchy, where there is one
};

template <typename T>
Outcome solve_in(const solvers::CsrData<double>& a, const solvers::MatrixProperties& properties,
                 const std::vector<double>& b, const std::vector<double>& x0,
                 const SolveOptions& o) {
    Outcome outcome;
    const auto setup_start = Clock::now();
    solvers::BackendDecision decision = solvers::choose_backend_for_solve(o.backend, a.rows);
    const auto backend = std::move(decision.backend);
    outcome.backend =
        std::string(solvers::to_string(backend->kind())) + " (" + backend->description() + ")";
    outcome.backend_reason = std::move(decision.reason);
    outcome.plan = solvers::plan_solver(properties, o.request);
    solvers::MethodParameters parameters;
    parameters.criteria = criteria(o, a.rows);
    parameters.compensated_dots = o.compensated;
    parameters.omega = o.omega;
    parameters.restart = static_cast<int>(o.restart);  // checked in run_solve
    const solvers::LinearSystemSolver<T> solver(backend, solvers::convert_values<T>(a),
                                                outcome.plan, parameters);
    const std::vector<T> b_t(b.begin(), b.end()), x0_t(x0.begin(), x0.end());
    const auto bb = solvers::Array<T>::from_host(backend, b_t);
    auto x = solvers::Array<T>::from_host(backend, x0_t);
    backend->synchronize();
    outcome.setup_seconds = seconds_since(setup_start);

    const auto solve_start = Clock::now();
    outcome.report = solver.solve(bb, x);
    outcome.preconditioner_details = solver.preconditioner_details();
    backend->synchronize();
    outcome.solve_seconds = seconds_since(solve_start);
    const std::vector<T> x_t = x.to_host();
    outcome.x.assign(x_t.begin(), x_t.end());
    return outcome;
}

std::string format_error_vs_ones(double error) {
    char text[64];
    std::snprintf(text, sizeof text, ", max |x - 1| = %.3e", error);
    return text;
}

}  // namespace

int run_solve(const SolveOptions& o) {
    // The same checks as the input file's [solver] (before any file is read).
    if (const auto problem = solvers::find_problem(criteria(o, 1), o.precision)) {
        const std::string option =
            problem->key == "max_iterations" ? "max-iters" : std::string(problem->key);
        throw InputError("--" + option + " " + problem->message);
    }
    if (const auto problem = solvers::find_restart_problem(o.restart)) {
        throw InputError("--restart-length " + *problem);
    }

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
    const solvers::MatrixProperties properties = solvers::analyze(a);
    const double read_seconds = seconds_since(read_start);

    const Outcome outcome = o.precision == solvers::Precision::single_precision
                                ? solve_in<float>(a, properties, b, x0, o)
                                : solve_in<double>(a, properties, b, x0, o);
    const solvers::SolveResult& result = outcome.report.result();
    const double relative_residual = true_relative_residual(a, b, outcome.x);
    double error_vs_ones = 0;
    for (double v : outcome.x) error_vs_ones = std::max(error_vs_ones, std::abs(v - 1.0));
    bool finite = true;
    for (double v : outcome.x) finite = finite && std::isfinite(v);
    const bool converged = outcome.report.converged() && finite;
    const std::int64_t iterations = outcome.report.total_iterations();

    if (!o.out.empty()) {
        if (!finite) {
            std::fprintf(stderr, "simrun solve: not writing %s: the solution is not finite\n",
                         o.out.c_str());
        } else {
            solvers::write_matrix_market_vector(o.out, outcome.x);
        }
    }

    if (o.json) {
        nlohmann::json j;
        j["matrix"] = o.matrix;
        j["rows"] = a.rows;
        j["nnz"] = a.nnz();
        j["method"] = solvers::to_string(outcome.report.step().method);
        j["preconditioner"] = solvers::to_string(outcome.report.step().preconditioner);
        j["format"] = std::string(solvers::to_string(outcome.plan.format));
        j["backend"] = outcome.backend.substr(0, outcome.backend.find(' '));
        j["device"] = outcome.backend;
        j["backend_reason"] = outcome.backend_reason;
        j["precision"] = solvers::name_of(o.precision);
        j["compensated_dots"] = o.compensated;
        j["reason"] = outcome.plan.first.reason;
        if (!outcome.plan.singular.empty()) j["singular"] = outcome.plan.singular;
        j["format_reason"] = outcome.plan.format_reason;
        if (!outcome.preconditioner_details.empty()) {
            j[outcome.plan.first.preconditioner == solvers::PreconditionerKind::multigrid
                  ? "multigrid"
                  : "preconditioner_details"] = outcome.preconditioner_details;
        }
        j["status"] = std::string(solvers::to_string(result.status));
        j["iterations"] = iterations;
        j["relative_residual"] = relative_residual;
        j["solver_relative_residual"] = result.relative_residual();
        if (generated_rhs) j["error_vs_ones"] = error_vs_ones;
        j["read_seconds"] = read_seconds;
        j["setup_seconds"] = outcome.setup_seconds;
        j["seconds"] = outcome.solve_seconds;
        j["seconds_per_iteration"] =
            iterations > 0 ? outcome.solve_seconds / static_cast<double>(iterations) : 0.0;
        nlohmann::json attempts = nlohmann::json::array();
        for (std::size_t i = 0; i < outcome.report.attempts.size(); ++i) {
            const auto& attempt = outcome.report.attempts[i];
            nlohmann::json a_json;
            a_json["method"] = solvers::to_string(attempt.step.method);
            a_json["preconditioner"] = solvers::to_string(attempt.step.preconditioner);
            a_json["status"] = std::string(solvers::to_string(attempt.result.status));
            a_json["iterations"] = attempt.result.iterations;
            a_json["relative_residual"] = attempt.result.relative_residual();
            a_json["reason"] = attempt.step.reason;
            if (!attempt.preconditioner_details.empty()) {
                a_json["preconditioner_details"] = attempt.preconditioner_details;
            }
            if (attempt.result.breakdown_value) {
                a_json["breakdown_quantity"] = attempt.result.breakdown_quantity;
                a_json["breakdown_value"] = *attempt.result.breakdown_value;
            }
            attempts.push_back(a_json);
        }
        j["attempts"] = attempts;
        nlohmann::json fallbacks = nlohmann::json::array();
        for (std::size_t i = 1; i < outcome.report.attempts.size(); ++i)
            fallbacks.push_back(attempts[i]);
        j["fallbacks"] = fallbacks;
        j["residual_history"] = result.residual_history;
        std::printf("%s\n", j.dump().c_str());
    } else {
        std::printf("matrix   %s: %s\n", o.matrix.c_str(), properties.describe().c_str());
        std::printf("backend  %s (%s), %s precision\n", outcome.backend.c_str(),
                    outcome.backend_reason.c_str(),
                    std::string(solvers::name_of(o.precision)).c_str());
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
    return converged ? 0 : 1;
}

}  // namespace simrun::app

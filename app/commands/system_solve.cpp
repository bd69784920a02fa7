#include "system_solve.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/methods/gmres.hpp"
#include "simrun/solvers/methods/solve_result.hpp"

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

// The stopping criteria asked for. Default limit: twice the size (CG's exact-arithmetic bound
// is n), within [1000, 10000].
solvers::StoppingCriteria criteria(const SolveSettings& s, std::int32_t rows) {
    solvers::StoppingCriteria c;
    c.relative_tolerance = s.rtol                                                ? *s.rtol
                           : s.precision == solvers::Precision::single_precision ? 1e-6
                                                                                 : 1e-8;
    c.absolute_tolerance = s.atol;
    c.max_iterations = s.max_iterations ? *s.max_iterations
                                        : std::clamp<std::int64_t>(
                                              2 * static_cast<std::int64_t>(rows), 1000, 10000);
    return c;
}

// The vectors of a solve in the back-end's memory: b, and x holding x0.
template <typename T>
struct SolveVectors {
    solvers::Array<T> b, x;
};

// Chooses the back-end and the plan, builds the solver and solves with the vectors that
// `vectors(backend)` makes; x is left on the back-end.
template <typename T, typename MakeVectors>
SolveVectors<T> solve_in(const solvers::CsrData<double>& a, const SolveSettings& s,
                         solvers::BackendDecision decision, SystemSolution& solution,
                         MakeVectors&& vectors) {
    const auto setup_start = Clock::now();
    const auto backend = std::move(decision.backend);
    solution.backend =
        std::string(solvers::to_string(backend->kind())) + " (" + backend->description() + ")";
    solution.backend_reason = std::move(decision.reason);
    solution.plan = solvers::plan_solver(solution.properties, s.request);
    solvers::MethodParameters parameters;
    parameters.criteria = criteria(s, a.rows);
    parameters.compensated_dots = s.compensated;
    parameters.omega = s.omega;
    parameters.restart = static_cast<int>(s.restart);  // checked in check_settings
    const solvers::LinearSystemSolver<T> solver(backend, solvers::convert_values<T>(a),
                                                solution.plan, parameters);
    SolveVectors<T> v = vectors(backend);
    backend->synchronize();
    solution.setup_seconds = seconds_since(setup_start);

    const auto solve_start = Clock::now();
    solution.report = solver.solve(v.b, v.x);
    solution.preconditioner_details = solver.preconditioner_details();
    backend->synchronize();
    solution.solve_seconds = seconds_since(solve_start);
    return v;
}

template <typename T>
void solve_from_host(const solvers::CsrData<double>& a, const std::vector<double>& b,
                     const std::vector<double>& x0, const SolveSettings& s,
                     SystemSolution& solution) {
    const SolveVectors<T> v =
        solve_in<T>(a, s, solvers::choose_backend_for_solve(s.backend, a.rows), solution,
                    [&](const std::shared_ptr<const solvers::Backend>& backend) {
                        const std::vector<T> b_t(b.begin(), b.end()), x0_t(x0.begin(), x0.end());
                        return SolveVectors<T>{solvers::Array<T>::from_host(backend, b_t),
                                               solvers::Array<T>::from_host(backend, x0_t)};
                    });
    const std::vector<T> x_t = v.x.to_host();
    solution.x.assign(x_t.begin(), x_t.end());
}

template <typename T>
void solve_on_device(const solvers::CsrData<double>& a, const void* b, void* x,
                     const SolveSettings& s, SystemSolution& solution) {
    // `auto` takes the GPU whatever the size: the vectors are there already.
    solvers::BackendDecision decision = solvers::choose_backend(
        s.backend == solvers::BackendChoice::automatic ? solvers::BackendChoice::cuda : s.backend);
    if (decision.backend->kind() != solvers::BackendKind::cuda) {
        throw std::invalid_argument(
            "b and x0 are in a GPU's memory: backend must be auto or "
            "cuda, not " +
            std::string(solvers::to_string(decision.backend->kind())));
    }
    const auto n = static_cast<std::size_t>(a.rows);
    solve_in<T>(
        a, s, std::move(decision), solution,
        [&](const std::shared_ptr<const solvers::Backend>& backend) {
            return SolveVectors<T>{
                solvers::Array<T>::borrow(backend, static_cast<T*>(const_cast<void*>(b)), n),
                solvers::Array<T>::borrow(backend, static_cast<T*>(x), n)};
        });
}

nlohmann::json report_json(const SystemSolution& s, const solvers::CsrData<double>& a,
                           const SolveSettings& settings) {
    const solvers::SolveResult& result = s.report.result();
    nlohmann::json j;
    j["rows"] = a.rows;
    j["nnz"] = a.nnz();
    j["method"] = solvers::to_string(s.report.step().method);
    j["preconditioner"] = solvers::to_string(s.report.step().preconditioner);
    j["format"] = std::string(solvers::to_string(s.plan.format));
    j["backend"] = s.backend.substr(0, s.backend.find(' '));
    j["device"] = s.backend;
    j["backend_reason"] = s.backend_reason;
    j["precision"] = solvers::name_of(settings.precision);
    j["compensated_dots"] = settings.compensated;
    j["reason"] = s.plan.first.reason;
    if (!s.plan.singular.empty()) j["singular"] = s.plan.singular;
    j["format_reason"] = s.plan.format_reason;
    if (!s.preconditioner_details.empty()) {
        j[s.plan.first.preconditioner == solvers::PreconditionerKind::multigrid
              ? "multigrid"
              : "preconditioner_details"] = s.preconditioner_details;
    }
    j["status"] = std::string(solvers::to_string(result.status));
    j["iterations"] = s.iterations;
    j["relative_residual"] = s.relative_residual;
    j["solver_relative_residual"] = result.relative_residual();
    j["analysis_seconds"] = s.analysis_seconds;
    j["setup_seconds"] = s.setup_seconds;
    j["seconds"] = s.solve_seconds;
    j["seconds_per_iteration"] =
        s.iterations > 0 ? s.solve_seconds / static_cast<double>(s.iterations) : 0.0;
    nlohmann::json attempts = nlohmann::json::array();
    for (const auto& attempt : s.report.attempts) {
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
    for (std::size_t i = 1; i < attempts.size(); ++i) fallbacks.push_back(attempts[i]);
    j["fallbacks"] = fallbacks;
    j["residual_history"] = result.residual_history;
    return j;
}

void check_square(const solvers::CsrData<double>& a) {
    if (a.rows != a.cols) {
        throw InputError("the matrix is " + std::to_string(a.rows) + " x " +
                         std::to_string(a.cols) + "; a linear system needs a square matrix");
    }
}

std::string setting_name(std::string_view key, SettingNames names) {
    if (names == SettingNames::keywords) return std::string(key);
    return key == "max_iterations" ? "--max-iters" : "--" + std::string(key);
}

}  // namespace

solvers::SolverRequest parse_solve_request(const std::string& method,
                                           const std::string& preconditioner,
                                           const std::string& format) {
    if (method == "pcg" && preconditioner == "none") {
        throw std::invalid_argument(
            "--solver pcg needs a preconditioner; use --solver cg for none");
    }
    solvers::SolverRequest request =
        solvers::SolverRequest::parse(method == "pcg" ? "cg" : method, preconditioner, format);
    if (method == "cg" && preconditioner == "auto") {
        request.preconditioner = solvers::PreconditionerKind::none;
    }
    return request;
}

void check_settings(const SolveSettings& settings, SettingNames names) {
    // The same checks as the input file's [solver].
    if (const auto problem = solvers::find_problem(criteria(settings, 1), settings.precision)) {
        throw InputError(setting_name(problem->key, names) + " " + problem->message);
    }
    if (const auto problem = solvers::find_restart_problem(settings.restart)) {
        throw InputError((names == SettingNames::keywords ? "restart " : "--restart-length ") +
                         *problem);
    }
}

SystemSolution solve_system(const solvers::CsrData<double>& a, const std::vector<double>& b,
                            const std::vector<double>& x0, const SolveSettings& settings) {
    check_square(a);
    const auto n = static_cast<std::size_t>(a.rows);
    if (b.size() != n || x0.size() != n) {
        throw InputError(std::string(b.size() != n ? "the right-hand side" : "the initial guess") +
                         " has " + std::to_string(b.size() != n ? b.size() : x0.size()) +
                         " entries, the matrix has " + std::to_string(a.rows) + " rows");
    }
    SystemSolution solution;
    const auto analysis_start = Clock::now();
    solution.properties = solvers::analyze(a);
    solution.analysis_seconds = seconds_since(analysis_start);
    if (settings.precision == solvers::Precision::single_precision) {
        solve_from_host<float>(a, b, x0, settings, solution);
    } else {
        solve_from_host<double>(a, b, x0, settings, solution);
    }
    solution.relative_residual = true_relative_residual(a, b, solution.x);
    solution.finite = std::all_of(solution.x.begin(), solution.x.end(),
                                  [](double v) { return std::isfinite(v); });
    solution.converged = solution.report.converged() && solution.finite;
    solution.iterations = solution.report.total_iterations();
    solution.json = report_json(solution, a, settings);
    return solution;
}

SystemSolution solve_system_on_device(const solvers::CsrData<double>& a, const void* b, void* x,
                                      const SolveSettings& settings) {
    check_square(a);
    SystemSolution solution;
    const auto analysis_start = Clock::now();
    solution.properties = solvers::analyze(a);
    solution.analysis_seconds = seconds_since(analysis_start);
    if (settings.precision == solvers::Precision::single_precision) {
        solve_on_device<float>(a, b, x, settings, solution);
    } else {
        solve_on_device<double>(a, b, x, settings, solution);
    }
    solution.relative_residual = std::numeric_limits<double>::quiet_NaN();
    solution.finite = solution.report.result().status != solvers::SolveStatus::non_finite;
    solution.converged = solution.report.converged();
    solution.iterations = solution.report.total_iterations();
    solution.json = report_json(solution, a, settings);
    return solution;
}

}  // namespace simrun::app

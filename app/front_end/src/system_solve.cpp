#include "front_end/system_solve.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "front_end/timing.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/methods/gmres.hpp"
#include "simrun/solvers/methods/iterative_solver.hpp"
#include "simrun/solvers/methods/solve_result.hpp"

namespace simrun::front_end {
namespace {

using framework::InputError;

// ||b - A x|| / ||b|| in long double, independent of the solver's kernels: each block's rows'
// residuals on every core, their squares summed in row order (one core's loop, to the bit).
double true_relative_residual(const solvers::CsrData<double>& a, std::span<const double> b,
                              const std::vector<double>& x) {
    constexpr std::int32_t block = 1 << 16;
    std::vector<long double> r(static_cast<std::size_t>(std::min(a.rows, block)));
    long double r2 = 0, b2 = 0;
    for (std::int32_t first = 0; first < a.rows; first += block) {
        const std::int32_t last = std::min(a.rows - first, block) + first;
#pragma omp parallel for schedule(static)
        for (std::int32_t i = first; i < last; ++i) {
            long double ax = 0;
            for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
                ax += static_cast<long double>(a.values[k]) * x[static_cast<std::size_t>(a.col[k])];
            }
            r[static_cast<std::size_t>(i - first)] = b[static_cast<std::size_t>(i)] - ax;
        }
        for (std::int32_t i = first; i < last; ++i) {
            const long double ri = r[static_cast<std::size_t>(i - first)];
            r2 += ri * ri;
            b2 += static_cast<long double>(b[static_cast<std::size_t>(i)]) *
                  b[static_cast<std::size_t>(i)];
        }
    }
    return static_cast<double>(b2 > 0 ? std::sqrt(r2 / b2) : std::sqrt(r2));
}

// Whether every entry of x is finite, on every core.
bool all_finite(const std::vector<double>& x) {
    bool finite = true;
    const auto n = static_cast<std::int64_t>(x.size());
#pragma omp parallel for schedule(static) reduction(&& : finite)
    for (std::int64_t i = 0; i < n; ++i)
        finite = finite && std::isfinite(x[static_cast<std::size_t>(i)]);
    return finite;
}

nlohmann::json report_json(const SystemSolution& s, std::int64_t rows, std::int64_t nnz,
                           const SolveSettings& settings) {
    const solvers::SolveResult& result = s.report.result();
    nlohmann::json j;
    j["rows"] = rows;
    j["nnz"] = nnz;
    j["method"] = solvers::to_string(s.report.step().method);
    j["preconditioner"] = solvers::to_string(s.report.step().preconditioner);
    j["format"] = std::string(solvers::to_string(s.plan.format));
    j["backend"] = s.backend.substr(0, s.backend.find(' '));
    j["device"] = s.backend;
    j["backend_reason"] = s.backend_reason;
    j["precision"] = solvers::name_of(settings.precision);
    j["compensated_dots"] = settings.solver.method.compensated_dots;
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

// The exponent k of the power of two 2^k by which A's rows (and b) are multiplied so that A's
// largest entry lies near 1, where it lies outside solvers::matrix_entry_exponents (the range in
// which the method's products of A with vectors stay far from underflow and overflow); 0
// otherwise. x is unchanged by it, and ||b - A x|| / ||b|| too.
int row_scale_exponent(const solvers::CsrData<double>& a, solvers::Precision precision) {
    double largest = 0;
    const auto nnz = static_cast<std::int64_t>(a.values.size());
#pragma omp parallel for schedule(static) reduction(max : largest)
    for (std::int64_t k = 0; k < nnz; ++k) {
        largest = std::max(largest, std::abs(a.values[static_cast<std::size_t>(k)]));
    }
    if (!(largest > 0) || !std::isfinite(largest)) return 0;
    return solvers::exponent_toward_one(std::ilogb(largest),
                                        precision == solvers::Precision::single_precision
                                            ? solvers::matrix_entry_exponents<float>()
                                            : solvers::matrix_entry_exponents<double>());
}

// v times 2^k (exact: a power of two).
std::vector<double> scaled(std::vector<double> v, int k) {
    if (k != 0) {
        for (double& value : v) value = std::ldexp(value, k);
    }
    return v;
}

void check_square(const solvers::CsrData<double>& a) {
    if (a.rows != a.cols) {
        throw InputError("the matrix is " + std::to_string(a.rows) + " x " +
                         std::to_string(a.cols) + "; a linear system needs a square matrix");
    }
}

constexpr const char* broken_solver =
    "SystemSolver: an update failed inside the solver; make a new solver";

}  // namespace

// The solver in the precision asked for.
using AnySolver = std::variant<std::unique_ptr<solvers::LinearSystemSolver<float>>,
                               std::unique_ptr<solvers::LinearSystemSolver<double>>>;

struct SystemSolver::Impl {
    // A as given, for the true residual (empty with device vectors): `a`, or the double
    // solver's own rows where they are A unscaled (a_in_solver: no second copy).
    solvers::CsrData<double> a;
    bool a_in_solver = false;
    const solvers::CsrData<double>& matrix() const {
        return a_in_solver ? *std::get<std::unique_ptr<solvers::LinearSystemSolver<double>>>(solver)
                                  ->csr_rows()
                           : a;
    }
    std::int64_t rows = 0, nnz = 0;
    SolveSettings settings;
    solvers::StoppingCriteria criteria;  // as asked (atol unscaled)
    int row_scale = 0;                   // A's rows and b solved times 2^row_scale
    bool device_vectors = false;
    // The hook of the solve under way (asked through the solver's criteria), or null.
    mutable const InterruptHook* interrupted = nullptr;
    SystemSolution prototype;  // what every solve's solution starts from
    std::shared_ptr<const solvers::Backend> backend;
    AnySolver solver;
    // One solve at a time: the solver's work vectors are shared (two Python threads may call
    // solve at once, the GIL released).
    mutable std::mutex solving;
    // An update failed inside the solver: which values it holds is not known.
    bool broken = false;

    // Solves in the solver's precision T with the vectors that `vectors(T{})` makes (b, and x
    // holding x0); x is left on the back-end, for `finish(solution, x)` to take.
    template <typename MakeVectors, typename Finish>
    SystemSolution solve_with(const InterruptHook& hook, MakeVectors&& vectors,
                              Finish&& finish) const {
        const std::lock_guard lock(solving);
        if (broken) throw std::logic_error(broken_solver);
        interrupted = hook ? &hook : nullptr;
        struct Forget {
            const Impl& impl;
            ~Forget() { impl.interrupted = nullptr; }
        } forget{*this};
        SystemSolution solution = prototype;
        solution.analysis_seconds = 0;  // paid at construction: the caller counts it once
        std::visit(
            [&]<typename T>(const std::unique_ptr<solvers::LinearSystemSolver<T>>& method) {
                const auto upload_start = Clock::now();
                auto [b, x] = vectors(T{});
                backend->synchronize();
                solution.setup_seconds = seconds_since(upload_start);
                const auto solve_start = Clock::now();
                solution.report = method->solve(b, x);
                unscale_norms(solution.report);
                solution.preconditioner_details = method->preconditioner_details();
                backend->synchronize();
                solution.solve_seconds = seconds_since(solve_start);
                finish(solution, x);
            },
            solver);
        solution.iterations = solution.report.total_iterations();
        confirm_true_residual(solution);
        solution.converged = solution.report.converged() && solution.finite;
        solution.json = report_json(solution, rows, nnz, settings);
        return solution;
    }

    // The norms of a system solved with its rows scaled (row_scale) as the user's system's. A
    // breakdown value stays the row-scaled system's: its power of A's scale depends on the
    // quantity (p'Ap has A once, r'Mr A^-1), unlike its power of b's (breakdown_degree).
    void unscale_norms(solvers::SolveReport& report) const {
        for (solvers::SolveAttempt& attempt : report.attempts) {
            const std::optional<double> breakdown = attempt.result.breakdown_value;
            attempt.result.scale_norms(-row_scale);
            attempt.result.breakdown_value = breakdown;
        }
    }

    // A converged verdict stands only where the true residual (long double, on the host)
    // meets the tolerance; otherwise the solve is stagnated: the method's residual, and b - A x
    // in the solve's precision, met it, b - A x exactly did not.
    void confirm_true_residual(SystemSolution& solution) const {
        solvers::confirm_true_residual(solution.report.attempts.back().result,
                                       solution.relative_residual, criteria);
    }
};

SystemSolver::SystemSolver(solvers::CsrData<double> a, const SolveSettings& settings,
                           bool device_vectors)
    : impl_(std::make_unique<Impl>()) {
    check_square(a);
    Impl& m = *impl_;
    m.rows = a.rows;
    m.nnz = a.nnz();
    m.settings = settings;
    m.device_vectors = device_vectors;
    SystemSolution& p = m.prototype;
    const auto analysis_start = Clock::now();
    p.properties = solvers::analyze(a);
    p.analysis_seconds = seconds_since(analysis_start);

    const auto setup_start = Clock::now();
    solvers::BackendDecision decision;
    if (device_vectors) {
        // `auto` takes the GPU whatever the size: the vectors are there already.
        decision = solvers::choose_backend(settings.backend == solvers::BackendChoice::automatic
                                               ? solvers::BackendChoice::cuda
                                               : settings.backend);
        if (decision.backend->kind() != solvers::BackendKind::cuda) {
            throw std::invalid_argument(
                "b and x0 are in a GPU's memory: backend must be auto or cuda, not " +
                std::string(solvers::to_string(decision.backend->kind())));
        }
    } else {
        decision = solvers::choose_backend_for_solve(settings.backend, a.rows);
    }
    m.backend = std::move(decision.backend);
    p.backend =
        std::string(solvers::to_string(m.backend->kind())) + " (" + m.backend->description() + ")";
    p.backend_reason = std::move(decision.reason);
    p.plan = solvers::plan_solver(p.properties, settings.solver.request);
    m.criteria = criteria_for(settings, a.rows);
    m.row_scale = row_scale_exponent(a, settings.precision);
    if (device_vectors && settings.precision == solvers::Precision::single_precision) {
        m.row_scale = std::clamp(m.row_scale, -126, 127);  // b is scaled in float there
    }
    // The settings' parameters, with their defaults for this size, atol scaled as the rows
    // are, and the solve's interrupt hook.
    solvers::MethodParameters parameters = settings.solver.method;
    parameters.criteria = m.criteria;
    parameters.criteria.absolute_tolerance = std::ldexp(m.criteria.absolute_tolerance, m.row_scale);
    parameters.criteria.interrupted = [&m] { return m.interrupted && (*m.interrupted)(); };
    // A's rows scaled (a copy, where the true residual needs A as given).
    const auto rows_scaled = [&](solvers::CsrData<double> matrix) {
        matrix.values = scaled(std::move(matrix.values), m.row_scale);
        return matrix;
    };
    if (settings.precision == solvers::Precision::single_precision) {
        m.solver = std::make_unique<solvers::LinearSystemSolver<float>>(
            m.backend,
            m.row_scale != 0 ? solvers::convert_values<float>(rows_scaled(a))
                             : solvers::convert_values<float>(a),
            p.plan, parameters);
    } else if (device_vectors) {  // A is not needed afterwards: no copy
        m.solver = std::make_unique<solvers::LinearSystemSolver<double>>(
            m.backend, rows_scaled(std::move(a)), p.plan, parameters);
    } else if (m.row_scale == 0) {  // the solver's rows are A as given: no copy
        m.a_in_solver = true;
        m.solver = std::make_unique<solvers::LinearSystemSolver<double>>(m.backend, std::move(a),
                                                                         p.plan, parameters);
    } else {
        m.solver = std::make_unique<solvers::LinearSystemSolver<double>>(m.backend, rows_scaled(a),
                                                                         p.plan, parameters);
    }
    m.backend->synchronize();
    p.setup_seconds = seconds_since(setup_start);
    if (!device_vectors && !m.a_in_solver) m.a = std::move(a);
}

SystemSolver::~SystemSolver() = default;

namespace {

// The properties the plan rests on for the solve to be right, where `now` (new values on the
// matrix's pattern) differs from `then`: symmetry (CG's), a positive diagonal (the smoothers'
// and Jacobi's), the constants in the null space (removed from b), the empty rows (a singular
// verdict). Empty where none differs.
std::string changed_properties(const solvers::MatrixProperties& then,
                               const solvers::MatrixProperties& now, solvers::Format format) {
    std::string changed;
    const auto differs = [&](bool before, bool after, const char* what) {
        if (before == after) return;
        changed += std::string(changed.empty() ? "" : ", ") + (before ? "" : "not ") + what +
                   " -> " + (after ? "" : "not ") + what;
    };
    differs(then.symmetric, now.symmetric, "symmetric");
    differs(then.positive_diagonal, now.positive_diagonal, "positive diagonal");
    differs(then.zero_row_sums, now.zero_row_sums, "rows summing to zero");
    differs(then.structurally_singular(), now.structurally_singular(), "structurally singular");
    if (format == solvers::Format::stencil) {
        differs(then.constant_coefficients, now.constant_coefficients,
                "constant coefficients (the stencil format's)");
    }
    return changed;
}

}  // namespace

SystemSolver::UpdateSeconds SystemSolver::update(solvers::CsrData<double> a) {
    Impl& m = *impl_;
    const std::lock_guard lock(m.solving);
    if (m.broken) throw std::logic_error(broken_solver);
    // The pattern is the solver's own rows' (kept for vectors on the device as on the host).
    const auto& pattern = std::visit(
        [](const auto& solver)
            -> std::pair<const std::vector<std::int32_t>*, const std::vector<std::int32_t>*> {
            return {&solver->csr_rows()->row_ptr, &solver->csr_rows()->col};
        },
        m.solver);
    if (a.rows != m.rows || a.nnz() != m.nnz || a.row_ptr != *pattern.first ||
        a.col != *pattern.second) {
        throw InputError("the new values are not on the matrix's pattern (" +
                         std::to_string(m.rows) + " rows, " + std::to_string(m.nnz) +
                         " entries at the same places): make a new solver for another matrix");
    }
    for (std::size_t k = 0; k < a.values.size(); ++k) {
        if (!std::isfinite(a.values[k])) {
            throw InputError("the new values have one that is not finite (entry " +
                             std::to_string(k) + ")");
        }
    }
    const auto start = Clock::now();
    if (const std::string changed = changed_properties(m.prototype.properties, solvers::analyze(a),
                                                       m.prototype.plan.format);
        !changed.empty()) {
        throw InputError("the new values change what the solver was chosen for (" + changed +
                         "): make a new solver for them");
    }
    UpdateSeconds spent;
    std::visit(
        [&]<typename T>(const std::unique_ptr<solvers::LinearSystemSolver<T>>& solver) {
            // The rows scaled as at construction (a copy where A is kept as given).
            const auto rows = [&] {
                solvers::CsrData<double> copy = a;
                copy.values = scaled(std::move(copy.values), m.row_scale);
                return copy;
            };
            solvers::CsrData<T> given;
            if constexpr (std::is_same_v<T, double>) {
                given = m.a_in_solver ? std::move(a) : rows();
            } else {
                // Scaled as the first values were, the new ones must still fit a float.
                try {
                    given = m.row_scale != 0 ? solvers::convert_values<float>(rows())
                                             : solvers::convert_values<float>(a);
                } catch (const std::exception& e) {
                    throw InputError(std::string("the new values do not fit single precision "
                                                 "at the scale of the first ones (") +
                                     e.what() + "): make a new solver for them");
                }
            }
            typename solvers::LinearSystemSolver<T>::UpdateTimes times;
            try {
                times = solver->update_values(std::move(given));
            } catch (...) {
                m.broken = true;  // its values may be the new ones or the old
                throw;
            }
            spent.operator_seconds = times.operator_seconds;
            spent.setup_seconds = times.steps_seconds;
        },
        m.solver);
    if (!m.device_vectors && !m.a_in_solver) m.a = std::move(a);
    spent.seconds = seconds_since(start);
    return spent;
}

bool SystemSolver::broken() const {
    const std::lock_guard lock(impl_->solving);
    return impl_->broken;
}
std::int64_t SystemSolver::rows() const { return impl_->rows; }
double SystemSolver::analysis_seconds() const { return impl_->prototype.analysis_seconds; }
double SystemSolver::setup_seconds() const { return impl_->prototype.setup_seconds; }

SystemSolution SystemSolver::solve(std::span<const double> b, std::span<const double> x0,
                                   const InterruptHook& interrupted) const {
    const Impl& m = *impl_;
    if (m.device_vectors) {
        throw std::logic_error("SystemSolver::solve: this solver takes vectors on the device");
    }
    const auto n = static_cast<std::size_t>(m.rows);
    if (b.size() != n || x0.size() != n) {
        throw InputError(std::string(b.size() != n ? "the right-hand side" : "the initial guess") +
                         " has " + std::to_string(b.size() != n ? b.size() : x0.size()) +
                         " entries, the matrix has " + std::to_string(m.rows) + " rows");
    }
    // 2^k b, a copy only where k is not 0.
    const std::vector<double> scaled_b =
        m.row_scale != 0 ? scaled(std::vector<double>(b.begin(), b.end()), m.row_scale)
                         : std::vector<double>();
    const std::span<const double> rhs = m.row_scale != 0 ? std::span<const double>(scaled_b) : b;
    return m.solve_with(
        interrupted,
        [&]<typename T>(T) {
            if constexpr (std::is_same_v<T, double>) {
                return std::pair{solvers::Array<T>::from_host(m.backend, rhs),
                                 solvers::Array<T>::from_host(m.backend, x0)};
            } else {
                const std::vector<T> b_t(rhs.begin(), rhs.end()), x0_t(x0.begin(), x0.end());
                return std::pair{solvers::Array<T>::from_host(m.backend, b_t),
                                 solvers::Array<T>::from_host(m.backend, x0_t)};
            }
        },
        [&]<typename T>(SystemSolution& solution, const solvers::Array<T>& x) {
            if constexpr (std::is_same_v<T, double>) {
                solution.x = x.to_host();
            } else {
                const std::vector<T> x_t = x.to_host();
                solution.x.assign(x_t.begin(), x_t.end());
            }
            solution.relative_residual = true_relative_residual(m.matrix(), b, solution.x);
            solution.finite = all_finite(solution.x);
        });
}

SystemSolution SystemSolver::solve_on_device(const void* b, void* x,
                                             const InterruptHook& interrupted) const {
    const Impl& m = *impl_;
    if (!m.device_vectors) {
        throw std::logic_error("SystemSolver::solve_on_device: this solver takes host vectors");
    }
    const auto n = static_cast<std::size_t>(m.rows);
    return m.solve_with(
        interrupted,
        [&]<typename T>(T) {
            auto rhs =
                solvers::Array<T>::borrow(m.backend, static_cast<T*>(const_cast<void*>(b)), n);
            if (m.row_scale != 0) {  // 2^k b in a buffer of its own: b is the caller's
                solvers::Array<T> factor(m.backend, n);
                solvers::fill(factor, std::ldexp(T(1), m.row_scale));
                solvers::multiply(rhs, factor, factor);
                rhs = std::move(factor);
            }
            return std::pair{std::move(rhs),
                             solvers::Array<T>::borrow(m.backend, static_cast<T*>(x), n)};
        },
        [&]<typename T>(SystemSolution& solution, const solvers::Array<T>&) {
            solution.relative_residual = std::numeric_limits<double>::quiet_NaN();
            solution.finite = solution.report.result().status != solvers::SolveStatus::non_finite;
        });
}

SystemSolution solve_system(const solvers::CsrData<double>& a, const std::vector<double>& b,
                            const std::vector<double>& x0, const SolveSettings& settings) {
    const SystemSolver solver(a, settings);
    SystemSolution solution = solver.solve(b, x0);
    solution.analysis_seconds = solver.analysis_seconds();
    solution.setup_seconds += solver.setup_seconds();
    solution.json["analysis_seconds"] = solution.analysis_seconds;
    solution.json["setup_seconds"] = solution.setup_seconds;
    return solution;
}

}  // namespace simrun::front_end

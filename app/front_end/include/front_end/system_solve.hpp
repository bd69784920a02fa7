#pragma once
// A linear system in memory solved by the solver layer on its own, as `simrun solve` and the
// Python module's simrun.solve do it: the back-end and plan chosen, the system solved, the true
// residual recomputed, and the report whose keys `simrun solve --json` prints.
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "front_end/solve_settings.hpp"
#include "simrun/solvers/matrices/csr_data.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"
#include "simrun/solvers/selection/solver_selection.hpp"

namespace simrun::front_end {

// Asked between batches of iterations; true stops the solve (status interrupted).
using InterruptHook = std::function<bool()>;

struct SystemSolution {
    std::vector<double> x;  // empty where x lies in a GPU's memory (solve_on_device)
    // The solver's verdict, x finite, and (on the host) the true residual within the
    // tolerance: a solve the solver called converged whose true residual misses it is
    // reported stagnated (the precision's rounding of b - A x hid the miss).
    bool converged = false;
    bool finite = true;
    std::int64_t iterations = 0;
    // True ||b - A x|| / ||b||, recomputed in long double; NaN where x lies in a GPU's memory
    // (the caller recomputes it there).
    double relative_residual = 0;
    solvers::MatrixProperties properties;
    solvers::SolverPlan plan;
    solvers::SolveReport report;
    std::string backend;  // "cuda (NVIDIA H100 ...)"
    std::string backend_reason;
    std::string preconditioner_details;  // the multigrid hierarchy, where there is one
    double analysis_seconds = 0;  // the matrix's properties (symmetry, dominance...), on the host
    double setup_seconds = 0;     // the back-end, the plan, the operator and preconditioner
    double solve_seconds = 0;
    // The report as `simrun solve --json` prints it, less the keys of the files read (matrix,
    // read_seconds, error_vs_ones), which the command adds.
    nlohmann::json json;
};

// A square system's matrix analysed and its solver built once, for many right-hand sides (the
// Python module's simrun.Solver; solve_system below for one). A is kept on the host for the
// true residual of solutions on the host. Solves from several threads run one at a time.
class SystemSolver {
public:
    // Analyses A (CSR) and builds the solver on the back-end the settings choose: for vectors
    // on the host as `simrun solve` does (choose_backend_for_solve); with `device_vectors`, for
    // vectors in a CUDA device's memory: CUDA, which `auto` then takes whatever the size
    // (DeviceUnavailable or NotCompiled where there is none, std::invalid_argument for a named
    // CPU back-end). Throws InputError for a matrix that is not square.
    SystemSolver(solvers::CsrData<double> a, const SolveSettings& settings,
                 bool device_vectors = false);
    ~SystemSolver();
    SystemSolver(const SystemSolver&) = delete;
    SystemSolver& operator=(const SystemSolver&) = delete;

    // Solves A x = b from x0, vectors on the host (sizes checked: InputError). Not with
    // device_vectors. The solution's analysis_seconds is 0 and its setup_seconds the vectors'
    // upload: the object's own (below) were paid once, at construction.
    // `interrupted` (may be empty) is asked between batches of iterations.
    SystemSolution solve(std::span<const double> b, std::span<const double> x0,
                         const InterruptHook& interrupted = {}) const;
    // The same with b and x in the CUDA device's memory (another library's arrays of n values
    // in settings.precision's type: double or float): b is read and x (x0 on entry) written where
    // they lie, with no copy through the host. The caller has finished its own work on them; the
    // back-end has finished when this returns. Only with device_vectors.
    SystemSolution solve_on_device(const void* b, void* x,
                                   const InterruptHook& interrupted = {}) const;

    // New values for A on the same pattern (the same size, row pointers and columns), as a time
    // step of another size gives: the plan and the rows' scaling stay; the solver takes the
    // values (LinearSystemSolver::update_values: a multigrid hierarchy made again as it was
    // decided). The new values are analysed for what the plan rests on (symmetry, a positive
    // diagonal, rows summing to zero, empty rows) and refused where that changed. Returns the
    // seconds it took: in all (the analysis among them), of which the operator's (the rows in
    // the plan's format, uploaded) and the preconditioner's and method's. Throws InputError for
    // another pattern, a value that is not finite, or one that no longer fits single precision at
    // the first values' scale (the solver unchanged); and what the solver's set-up throws, after
    // which the solver refuses every call (std::logic_error: make a new one).
    struct UpdateSeconds {
        double seconds = 0, operator_seconds = 0, setup_seconds = 0;
    };
    UpdateSeconds update(solvers::CsrData<double> a);

    // Whether an update failed inside the solver (which then refuses every call).
    bool broken() const;
    std::int64_t rows() const;
    double analysis_seconds() const;
    double setup_seconds() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Solves A x = b from x0 once (SystemSolver's analysis and set-up counted in the solution).
SystemSolution solve_system(const solvers::CsrData<double>& a, const std::vector<double>& b,
                            const std::vector<double>& x0, const SolveSettings& settings);

}  // namespace simrun::front_end

#pragma once
// `simrun solve A.mtx`: the solver layer on its own, on a Matrix Market system (SPEC §7).
#include <optional>
#include <string>

#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/precision.hpp"
#include "simrun/solvers/selection/solver_selection.hpp"

namespace simrun::app {

struct SolveOptions {
    std::string matrix;              // A.mtx
    std::string rhs;                 // b.mtx; empty: b = A * ones
    std::string initial_guess;       // x0.mtx; empty: zeros
    solvers::SolverRequest request;  // method, preconditioner, format; empty parts: auto
    solvers::Precision precision = solvers::Precision::double_precision;
    solvers::BackendChoice backend = solvers::BackendChoice::automatic;
    std::string out;             // x.mtx
    std::optional<double> rtol;  // absent: 1e-8, or 1e-6 in float (its unit roundoff is 6e-8)
    double atol = 0.0;
    std::optional<long long> max_iterations;  // absent: twice the size, within [1000, 10000]
    double omega = 1.0;
    long long restart = 30;  // GMRES's restart length
    bool compensated = false;
    bool json = false;
};

// Reads, analyses, plans, solves, recomputes the true residual and reports (text or one JSON
// object on stdout). Returns 0 when the solve converged, 1 when it did not. Throws InputError,
// solvers::MatrixMarketError or std::invalid_argument for bad input (exit code 2).
int run_solve(const SolveOptions& options);

}  // namespace simrun::app

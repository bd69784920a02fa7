#pragma once
// `simrun solve A.mtx`: the solver layer on its own, on a Matrix Market system (SPEC §7).
#include <optional>
#include <string>

#include "system_solve.hpp"

namespace simrun::app {

struct SolveOptions {
    std::string matrix;         // A.mtx
    std::string rhs;            // b.mtx; empty: b = A * ones
    std::string initial_guess;  // x0.mtx; empty: zeros
    SolveSettings settings;
    std::string out;  // x.mtx
    bool json = false;
};

// Reads, analyses, plans, solves, recomputes the true residual and reports (text or one JSON
// object on stdout). Returns 0 when the solve converged, 1 when it did not. Throws InputError,
// solvers::MatrixMarketError or std::invalid_argument for bad input (exit code 2).
int run_solve(const SolveOptions& options);

}  // namespace simrun::app

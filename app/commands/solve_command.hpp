#pragma once
// `simrun solve A.mtx`: the solver layer on its own, on a Matrix Market system (SPEC §7).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "front_end/solve_settings.hpp"

namespace simrun::app {

struct SolveOptions {
    std::string matrix;         // A.mtx
    std::string rhs;            // b.mtx; empty: b = A * ones
    std::string initial_guess;  // x0.mtx; empty: zeros
    // --solver, --precond, --format (the front end's words), --grid and --restart-length as
    // given; the rest of the settings set as parsed.
    std::string method = "auto", preconditioner = "auto", format = "auto", grid;
    std::int64_t restart = 30;
    front_end::SolveSettings settings;
    std::string out;  // x.mtx
    bool json = false;
};

// Adds the subcommand `solve` with its options.
CLI::App* add_solve_command(CLI::App& app, SolveOptions& options);

// Reads, analyses, plans, solves, recomputes the true residual and reports (text or one JSON
// object on stdout). Returns 0 when the solve converged, 1 when it did not. Throws InputError,
// solvers::MatrixMarketError or std::invalid_argument for bad input (exit code 2).
int run_solve(SolveOptions options);

}  // namespace simrun::app

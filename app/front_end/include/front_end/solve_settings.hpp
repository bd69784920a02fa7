#pragma once
// How to solve a system in memory (`simrun solve`, simrun.solve): the solver's parameters as the
// input's [solver] gives them (framework::SolverParameters: the request, with its method,
// preconditioner, format and grid, and the method's parameters: stopping criteria, omega, GMRES's
// restart length, compensated dots), which the command line's options and Python's keyword
// arguments fill and which reach the solver unchanged, and what only a solve of a system in
// memory chooses: the precision and the back-end.
#include <cstdint>
#include <string>

#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/precision.hpp"
#include "simrun/solvers/methods/solve_result.hpp"

namespace simrun::front_end {

struct SolveSettings {
    framework::SolverParameters solver;  // request (empty parts: auto) and method's parameters
    solvers::Precision precision = solvers::Precision::double_precision;
    solvers::BackendChoice backend = solvers::BackendChoice::automatic;
    // Whether the caller gave rtol and max_iterations; those not given take the solve's
    // defaults (criteria_for): rtol 1e-8, or 1e-6 in float (its unit roundoff is 6e-8); the
    // limit twice the size, within [1000, 10000].
    bool rtol_given = false;
    bool max_iterations_given = false;

    void set_rtol(double rtol);
    void set_max_iterations(std::int64_t limit);
};

// The words the caller's user writes for the settings, in messages: the command line's options
// (--rtol, --max-iters, --restart-length, --grid) or a function's keyword arguments (rtol,
// max_iterations, restart, grid).
enum class SettingNames { command_line, keywords };

// The stopping criteria for a system of `rows` rows: those given, the defaults for the others.
solvers::StoppingCriteria criteria_for(const SolveSettings& settings, std::int64_t rows);

// The box NXxNY[xNZ] the rows come from (so multigrid applies). Throws InputError naming the
// setting for text that is no box.
void set_grid(SolveSettings& settings, const std::string& text, SettingNames names);

// Checks the tolerances, the iteration limit (those not given at their defaults) and GMRES's
// restart length `restart` as the input file's [solver] is checked
// (framework::find_solver_problem), then sets the restart length. Throws framework::InputError
// naming the first setting out of range in `names`' words; before any system is read.
void check_settings(SolveSettings& settings, std::int64_t restart, SettingNames names);

// Throws framework::InputError naming the setting (--grid or grid) and both sizes where the
// request names a box whose points are not the matrix's rows, whatever method is chosen.
void check_grid(const SolveSettings& settings, std::int64_t rows, SettingNames names);

}  // namespace simrun::front_end

#pragma once
// How to solve a system in memory (`simrun solve`, simrun.solve): one struct, in the solver
// layer's own types, that the command line's options and Python's keyword arguments fill and
// that reaches the solver unchanged: the request (method, preconditioner, format, grid, as the
// input's [solver] gives it), the method's parameters (stopping criteria, omega, GMRES's restart
// length, compensated dots), the precision and the back-end.
#include <cstdint>
#include <string>

#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/precision.hpp"
#include "simrun/solvers/methods/iterative_solver.hpp"
#include "simrun/solvers/methods/solve_result.hpp"
#include "simrun/solvers/selection/solver_selection.hpp"

namespace simrun::front_end {

struct SolveSettings {
    solvers::SolverRequest request;    // empty parts: auto
    solvers::MethodParameters method;  // criteria, compensated_dots, omega, restart
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

// Throws framework::InputError naming the setting (in `names`' words) where a tolerance or the
// iteration limit is out of range; before any system is read. The same checks as the input
// file's [solver].
void check_settings(const SolveSettings& settings, SettingNames names);

// GMRES's restart length, checked as the input's [solver] restart is (InputError naming the
// setting where it is out of range), then set.
void set_restart(SolveSettings& settings, std::int64_t restart, SettingNames names);

// Throws framework::InputError naming the setting (--grid or grid) and both sizes where the
// request names a box whose points are not the matrix's rows, whatever method is chosen.
void check_grid(const SolveSettings& settings, std::int64_t rows, SettingNames names);

}  // namespace simrun::front_end

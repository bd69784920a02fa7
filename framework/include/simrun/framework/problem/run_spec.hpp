#pragma once
// A run, as the input describes it: every section parsed into plain structs and validated in
// one place, before anything is computed or written.
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/discretisation/boundary_conditions.hpp"
#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/framework/problem/problem.hpp"
#include "simrun/framework/problem/run_settings.hpp"
#include "simrun/solvers/base/precision.hpp"
#include "simrun/solvers/methods/iterative_solver.hpp"
#include "simrun/solvers/methods/solve_result.hpp"
#include "simrun/solvers/selection/solver_selection.hpp"

namespace simrun::framework {

// [time]: the scheme; for transient schemes end must be a whole number of steps of dt.
struct TimeParameters {
    TimeScheme scheme = TimeScheme::backward_euler;
    double dt = 0.0;
    double end = 0.0;
    std::int64_t steps = 0;  // 0 when steady
    double theta = 1.0;      // implicit weight: 1 backward Euler, 1/2 Crank-Nicolson
    std::string dt_place;    // where dt was given, for messages
    bool steady() const { return scheme == TimeScheme::steady; }
};

// [solver]: what the user asked the solver layer for, in its own types, passed to it as given:
// the request (method, preconditioner and format, empty parts: auto; the multigrid cycle) and
// the method's parameters (when to stop: rtol, atol, max_iterations; GMRES's restart length).
// The input file fills it, and so do `simrun solve`'s options and simrun.solve's keyword
// arguments (the front end's SolveSettings hold one).
struct SolverParameters {
    solvers::SolverRequest request;
    solvers::MethodParameters method;
};

// The first setting of a solve in `precision` that is out of range, by its [solver] key
// ("rtol", "atol", "max_iterations", "restart"), or nothing: the criteria as
// solvers::find_problem checks them, then GMRES's restart length (given wide, before it is
// narrowed into the parameters). Every entry point checks its settings with it and names the key
// in its own words.
std::optional<solvers::CriteriaProblem> find_solver_problem(
    const solvers::StoppingCriteria& criteria, std::int64_t restart, solvers::Precision precision);

// [output]: where and how often results are written.
struct OutputParameters {
    std::filesystem::path directory = "output";
    std::string basename;    // defaults to the problem type
    std::int64_t every = 1;  // write every this many steps (and always the first and last)
    bool vtk = true;
    bool hdf5 = true;
    VtkCompression compression = VtkCompression::lz4;  // of the .vti files
};

struct RunSpec {
    std::string problem_type;
    std::unique_ptr<Grid> grid;
    std::unique_ptr<Problem> problem;
    std::unique_ptr<BoundaryConditions> boundary;
    TimeParameters time;
    SolverParameters solver;
    OutputParameters output;
    std::string source_name;      // the input file's name, for messages
    std::string input_text;       // the input file as read
    std::string effective_input;  // the input after --set overrides
};

// Parses and validates every section, then rejects keys nobody read. Throws InputError naming
// the file, line, column and key of the first problem found.
RunSpec parse_run_spec(const Config& config);

Grid parse_grid(const ConfigSection& section);
// default_scheme applies when [time] names none ("steady" for Poisson).
TimeParameters parse_time(const ConfigSection& section, TimeScheme default_scheme);
SolverParameters parse_solver(const ConfigSection& section);
OutputParameters parse_output(const ConfigSection& section);

}  // namespace simrun::framework

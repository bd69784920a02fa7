#include "simrun/framework/problem/run_spec.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "simrun/framework/problem/problem_registry.hpp"
#include "simrun/solvers/matrices/format.hpp"
#include "simrun/solvers/methods/gmres.hpp"
#include "simrun/solvers/selection/solver_selection.hpp"

namespace simrun::framework {
namespace {

void require_one_of(const ConfigSection& section, std::string_view key, const std::string& value,
                    const std::vector<std::string>& allowed) {
    if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    section.fail(key, "'" + value + "' is not one of: " + list);
}

// The word at `key` (default_word when absent) as its enum value: each word is read once, from
// the enum's one list (enum_names). `automatic` is a word the key takes beside the list ("auto":
// the solver layer chooses), read as no value. Any other word fails at its place, listing them.
template <typename E>
std::optional<E> read_word(const ConfigSection& section, std::string_view key,
                           std::string_view default_word, std::string_view automatic = {}) {
    const auto word = section.get<std::string>(key, std::string(default_word));
    if (!automatic.empty() && word == automatic) return std::nullopt;
    for (const auto& entry : solvers::enum_names<E>) {
        if (entry.name == word) return entry.value;
    }
    require_one_of(section, key, word, solvers::enum_name_strings<E>(automatic));  // fails
    return std::nullopt;
}

std::array<double, 2> parse_extent(const ConfigSection& section, const char* key) {
    const auto extent = section.get<std::array<double, 2>>(key, {0.0, 1.0});
    if (!(extent[1] > extent[0]) || !std::isfinite(extent[0]) || !std::isfinite(extent[1])) {
        section.fail(key, "must be [lower, upper] with lower < upper");
    }
    return extent;
}

}  // namespace

Grid parse_grid(const ConfigSection& section) {
    const bool three_d = section.has("nz");
    std::array<std::int64_t, 3> points{1, 1, 1};
    const char* counts[3] = {"nx", "ny", "nz"};
    const char* extents[3] = {"x", "y", "z"};
    std::array<double, 3> lower{0, 0, 0};
    std::array<double, 3> upper{1, 1, 1};
    const int dimension = three_d ? 3 : 2;
    for (int a = 0; a < dimension; ++a) {
        points[a] = section.require<std::int64_t>(counts[a]);
        if (points[a] < 3) {
            section.fail(counts[a],
                         "must be >= 3 (nodes along the axis, boundaries included), got " +
                             std::to_string(points[a]));
        }
        if (points[a] > 1'000'000) {
            section.fail(counts[a], "is impossibly large (" + std::to_string(points[a]) + ")");
        }
        const auto extent = parse_extent(section, extents[a]);
        lower[a] = extent[0];
        upper[a] = extent[1];
    }
    if (!three_d && section.has("z")) section.fail("z", "a 2D grid (no nz) takes no z extent");
    try {
        return Grid(dimension, points, lower, upper);
    } catch (const std::invalid_argument& error) {
        section.fail(counts[0], error.what());
    }
}

TimeParameters parse_time(const ConfigSection& section, TimeScheme default_scheme) {
    TimeParameters t;
    t.scheme = *read_word<TimeScheme>(section, "scheme", solvers::name_of(default_scheme));
    t.theta = t.scheme == TimeScheme::crank_nicolson ? 0.5 : 1.0;
    if (t.steady()) {
        for (const char* key : {"dt", "end"}) {
            if (section.has(key)) section.fail(key, "a steady problem takes no time step or end");
        }
        return t;
    }
    t.dt = section.require<double>("dt");
    t.dt_place = section.place("dt");
    if (!(t.dt > 0.0) || !std::isfinite(t.dt)) {
        section.fail("dt", "must be a positive time step, got " + std::to_string(t.dt));
    }
    t.end = section.require<double>("end");
    if (!(t.end > 0.0) || !std::isfinite(t.end)) {
        section.fail("end", "must be a positive end time, got " + std::to_string(t.end));
    }
    const double steps = t.end / t.dt;
    if (steps > 1e9) section.fail("end", "end / dt asks for more than 10^9 steps");
    t.steps = std::llround(steps);
    if (t.steps < 1 || std::abs(steps - static_cast<double>(t.steps)) > 1e-9 * steps) {
        section.fail("end", "end = " + std::to_string(t.end) +
                                " is not a whole number of steps of dt = " + std::to_string(t.dt));
    }
    return t;
}

std::optional<solvers::CriteriaProblem> find_solver_problem(
    const solvers::StoppingCriteria& criteria, std::int64_t restart, solvers::Precision precision) {
    if (auto problem = solvers::find_problem(criteria, precision)) return problem;
    if (auto problem = solvers::find_restart_problem(restart)) {
        return solvers::CriteriaProblem{"restart", std::move(*problem)};
    }
    return std::nullopt;
}

SolverParameters parse_solver(const ConfigSection& section) {
    SolverParameters s;
    // Each word read once and checked against its list, then read as every entry point reads
    // them (SolverRequest::parse): cg with no preconditioner unless one is named, pcg with the
    // one named or chosen.
    const auto word = [&](std::string_view key, const std::vector<std::string>& allowed) {
        const auto value = section.get<std::string>(key, "auto");
        require_one_of(section, key, value, allowed);
        return value;
    };
    const auto method = word("method", solvers::method_words());
    const auto preconditioner =
        word("preconditioner", solvers::enum_name_strings<solvers::PreconditionerKind>("auto"));
    const auto format = word("format", solvers::enum_name_strings<solvers::Format>("auto"));
    try {
        s.request = solvers::SolverRequest::parse(method, preconditioner, format);
    } catch (const std::invalid_argument& error) {
        section.fail("preconditioner", error.what());  // pcg with none
    }
    // [solver.multigrid]: the cycle, for multigrid chosen or named.
    const ConfigSection multigrid = section.subsection("multigrid");
    solvers::MultigridParameters& m = s.request.multigrid;
    m.cycle = *read_word<solvers::MultigridCycle>(multigrid, "cycle", "auto");
    m.smoother =
        *read_word<solvers::MultigridSmoother>(multigrid, "smoother", "red_black_gauss_seidel");
    // Read wide, so that an out-of-range value is reported rather than narrowed.
    const auto sweeps = [&](const char* key, int value) {
        const auto wide = multigrid.get<std::int64_t>(key, value);
        return static_cast<int>(std::clamp<std::int64_t>(wide, -1, 1000));
    };
    m.pre_sweeps = sweeps("pre_sweeps", m.pre_sweeps);
    m.post_sweeps = sweeps("post_sweeps", m.post_sweeps);
    m.coarsest_size = multigrid.get<std::int64_t>("coarsest_size", m.coarsest_size);
    if (multigrid.has("gather_size")) m.gather_size = multigrid.get<std::int64_t>("gather_size", 0);
    m.precision = read_word<solvers::Precision>(multigrid, "precision", "auto", "auto");
    if (const auto problem = m.problem()) multigrid.fail(problem->key, problem->message);
    solvers::StoppingCriteria& c = s.method.criteria;
    c.relative_tolerance = section.get<double>("rtol", c.relative_tolerance);
    c.absolute_tolerance = section.get<double>("atol", c.absolute_tolerance);
    c.max_iterations = section.get<std::int64_t>("max_iterations", c.max_iterations);
    const auto restart = section.get<std::int64_t>("restart", s.method.restart);
    // The framework solves in double.
    if (const auto problem =
            find_solver_problem(c, restart, solvers::Precision::double_precision)) {
        section.fail(problem->key, (problem->key == "restart" ? "GMRES's restart length " : "") +
                                       problem->message);
    }
    s.method.restart = static_cast<int>(restart);
    return s;
}

OutputParameters parse_output(const ConfigSection& section) {
    OutputParameters o;
    o.directory = section.path("directory", o.directory.string());
    o.basename = section.get<std::string>("basename", "");
    if (o.basename.find('/') != std::string::npos) {
        section.fail("basename", "must be a file name, not a path");
    }
    // The name goes into file names and into the .pvd and .xmf that list them: a control
    // character (a newline, a NUL) would break those lists or cut the name short.
    if (const auto problem = control_character_problem(o.basename, false)) {
        section.fail("basename", "must be a plain file name: it " + *problem);
    }
    if (o.basename.starts_with(".")) {
        section.fail("basename", "must not start with '.' (hidden; the run's temporaries are)");
    }
    if (o.basename.size() > 200) section.fail("basename", "must be at most 200 characters");
    o.every = section.get<std::int64_t>("every", o.every);
    if (o.every < 1) section.fail("every", "must be >= 1, got " + std::to_string(o.every));
    o.vtk = section.get<bool>("vtk", o.vtk);
    o.hdf5 = section.get<bool>("hdf5", o.hdf5);
    o.compression = *read_word<VtkCompression>(section, "compression", "lz4");
    return o;
}

RunSpec parse_run_spec(const Config& config) {
    RunSpec spec;
    const ConfigSection problem = config.section("problem");
    spec.problem_type = problem.require<std::string>("type");
    const ProblemFactory* factory = ProblemRegistry::instance().find(spec.problem_type);
    if (factory == nullptr) {
        std::string known;
        for (const auto& name : ProblemRegistry::instance().names()) {
            known += (known.empty() ? "" : ", ") + name;
        }
        problem.fail("type",
                     "unknown problem type '" + spec.problem_type + "' (known: " + known + ")");
    }
    spec.grid = std::make_unique<Grid>(parse_grid(config.section("grid")));
    spec.problem = (*factory)(problem, *spec.grid);
    spec.boundary = std::make_unique<BoundaryConditions>(
        BoundaryConditions::from_config(config.section("boundary"), *spec.grid));
    const ConfigSection time = config.section("time");
    spec.time = parse_time(
        time, spec.problem->allows_transient() ? TimeScheme::backward_euler : TimeScheme::steady);
    if (spec.time.steady() && !spec.problem->allows_steady()) {
        time.fail("scheme", "problem type '" + spec.problem_type +
                                "' is time-dependent; use "
                                "backward_euler, crank_nicolson or explicit_euler");
    }
    if (!spec.time.steady() && !spec.problem->allows_transient()) {
        time.fail("scheme", "problem type '" + spec.problem_type +
                                "' is steady; use scheme = "
                                "\"steady\" (or leave [time] out)");
    }
    spec.solver = parse_solver(config.section("solver"));
    spec.output = parse_output(config.section("output"));
    if (spec.output.basename.empty()) spec.output.basename = spec.problem_type;
    config.check_all_used();
    spec.source_name = config.source_name();
    spec.input_text = config.text();
    spec.effective_input = config.effective_toml();
    return spec;
}

}  // namespace simrun::framework

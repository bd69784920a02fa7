#include "command_line.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_command.hpp"
#include "simrun/framework/config/config.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/distributed/agreement.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/framework/run/simulation.hpp"
#include "simrun/framework/run/stop_signals.hpp"
#include "simrun/framework/run/verification.hpp"
#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/base/errors.hpp"
#include "simrun/solvers/system/host_threads.hpp"
#include "simrun/solvers/base/precision.hpp"
#include "simrun/solvers/matrices/format.hpp"
#include "simrun/solvers/matrices/matrix_market.hpp"
#include "simrun/solvers/selection/solver_selection.hpp"
#include "solve_command.hpp"
#include "version_report.hpp"

namespace simrun::app {
namespace {

using namespace simrun::framework;

constexpr int exit_success = 0;
constexpr int exit_failure = 1;
constexpr int exit_usage = 2;

struct Arguments {
    std::shared_ptr<const solvers::Communicator> ranks = solvers::single_process();
    std::string file;
    solvers::BackendChoice backend = solvers::BackendChoice::automatic;
    std::vector<std::string> overrides;
    std::string output;
    std::string restart;
    std::string process_grid;
    bool quiet = false;
};

// "2x2" or "2x1x2": the parts of a process grid along x, y (and z); nullopt for other text.
std::optional<std::array<std::int64_t, 3>> parse_process_grid(const std::string& text) {
    std::array<std::int64_t, 3> parts{1, 1, 1};
    std::size_t axis = 0, at = 0;
    for (;;) {
        const std::size_t end = std::min(text.find('x', at), text.size());
        const std::string number = text.substr(at, end - at);
        if (axis == 3 || number.empty() || number.size() > 6 ||
            number.find_first_not_of("0123456789") != std::string::npos || std::stoll(number) < 1) {
            return std::nullopt;
        }
        parts[axis++] = std::stoll(number);
        if (end == text.size()) break;
        at = end + 1;
    }
    if (axis < 2) return std::nullopt;
    return parts;
}

// --process-grid PxQ[xR], checked as it is parsed.
void add_process_grid_option(CLI::App& app, std::string& process_grid) {
    app.add_option("--process-grid", process_grid,
                   "Under MPI, split the grid into PxQ (2D) or PxQxR (3D) boxes, one per rank "
                   "(default: slabs across the slowest axis, which multigrid over ranks needs)")
        ->option_text("PxQ[xR]")
        ->check([](const std::string& text) {
            return parse_process_grid(text) ? std::string()
                                            : "expected PxQ or PxQxR, positive whole numbers "
                                              "(e.g. 2x2), not '" +
                                                  text + "'";
        });
}

// A path given on the command line: a control character in it (a pasted newline) is a mistake.
std::string plain_path(const std::string& text) {
    const auto problem = control_character_problem(text, false);
    return problem ? "the path " + *problem : std::string();
}

Config load(const Arguments& arguments) {
    Config config = Config::from_file(arguments.file);
    for (const auto& assignment : arguments.overrides) config.apply_override(assignment);
    return config;
}

void print_header(const Simulation& simulation, const std::string* restart, double setup_seconds,
                  double input_seconds) {
    const Grid& grid = simulation.grid();
    const RunSpec& spec = simulation.spec();
    std::string size = std::to_string(grid.points(0)) + " x " + std::to_string(grid.points(1));
    if (grid.dimension() == 3) size += " x " + std::to_string(grid.points(2));
    std::printf("simrun: %s\n", spec.problem->description().c_str());
    std::printf("  grid     %s nodes (%lld unknowns), h = %.4g\n", size.c_str(),
                static_cast<long long>(grid.num_points()), grid.spacing(0));
    std::printf("  boundary %s\n", spec.boundary->describe().c_str());
    if (spec.time.steady()) {
        std::printf("  time     steady\n");
    } else {
        std::printf("  time     %s, dt = %.4g, %lld steps to t = %.4g\n",
                    std::string(solvers::name_of(spec.time.scheme)).c_str(), spec.time.dt,
                    static_cast<long long>(spec.time.steps), spec.time.end);
    }
    std::printf("  backend  %s (%s; %s)\n",
                std::string(solvers::to_string(simulation.backend().kind())).c_str(),
                simulation.backend().description().c_str(), simulation.backend_reason().c_str());
    if (simulation.decomposition().distributed()) {
        std::printf("  ranks    %s\n",
                    describe_ranks(grid, simulation.decomposition(), simulation.backend()).c_str());
    }
    if (const solvers::SolverPlan* plan = simulation.integrator().plan()) {
        std::printf("  solver   %s\n", plan->first.reason.c_str());
        std::printf("  format   %s\n", plan->format_reason.c_str());
        const std::string details = simulation.integrator().preconditioner_details();
        if (!details.empty()) {
            const bool multigrid =
                plan->first.preconditioner == solvers::PreconditionerKind::multigrid;
            std::printf("  %-8s %s\n", multigrid ? "cycle" : "precond", details.c_str());
        }
    } else {
        std::printf("  solver   none: explicit scheme\n");
    }
    if (const std::string data = simulation.integrator().data_details(); !data.empty()) {
        std::printf("  data     %s\n", data.c_str());
    }
    for (const auto& note : spec.problem->notes(grid)) std::printf("  note     %s\n", note.c_str());
    const SetupTimes times = simulation.integrator().setup_times();
    std::printf(
        "  set-up   %.3f s: input %.3f s, assembly %.3f s, matrix analysis %.3f s, solver "
        "set-up %.3f s\n",
        setup_seconds, input_seconds, times.assembly, times.analysis, times.solver);
    if (restart) {
        std::printf("  restart  from step %lld (t = %.6g) of %s\n",
                    static_cast<long long>(simulation.integrator().step()), simulation.time(),
                    restart->c_str());
    }
    std::fflush(stdout);
}

// Over several ranks every rank runs the same input (each its box); rank 0 alone prints, and
// every failure is agreed (distributed/agreement.hpp), so that each rank ends alike.
int run_simulation(const Arguments& arguments) {
    const solvers::Communicator& ranks = *arguments.ranks;
    RunOptions options;
    options.backend = arguments.backend;
    if (!arguments.output.empty()) options.output_directory = arguments.output;
    options.quiet = arguments.quiet;
    if (!arguments.restart.empty()) options.restart_file = arguments.restart;
    options.ranks = arguments.ranks;
    if (!arguments.process_grid.empty()) {
        options.process_grid = parse_process_grid(arguments.process_grid);
    }
    options.stop_on_signals = true;
    const bool quiet = arguments.quiet || ranks.rank() != 0;
    const auto start = std::chrono::steady_clock::now();
    RunSpec spec = agreeing(ranks, [&] { return parse_run_spec(load(arguments)); });
    const double input_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Simulation simulation(std::move(spec), options);
    const double setup_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!quiet) {
        print_header(simulation, arguments.restart.empty() ? nullptr : &arguments.restart,
                     setup_seconds, input_seconds);
    }
    const RunSummary summary = agreeing(ranks, [&] { return simulation.run(); });
    // Over several ranks, what the solver spent communicating, each kind's on its slowest rank
    // (collective: every rank takes part before rank 0 prints).
    std::string communication;
    if (ranks.size() > 1) {
        const solvers::CommunicationTimes& spent = summary.solver_communication;
        const double solver_seconds = ranks.max(summary.solver_seconds);
        // Every collective in one order on every rank (named, not inside an expression).
        const auto kind = [&](const char* name, const solvers::CommunicationCost& cost) {
            const double seconds = ranks.max(cost.seconds);
            const double count = ranks.max(static_cast<double>(cost.count));
            char text[160];
            std::snprintf(text, sizeof text, "%s %lld in %.3f s (%.1f%%)", name,
                          static_cast<long long>(count), seconds,
                          solver_seconds > 0 ? 100 * seconds / solver_seconds : 0.0);
            return std::string(text);
        };
        const std::string halo = kind("halo exchanges", spent.halo);
        const std::string sums = kind("sums", spent.reductions);
        const std::string gathers = kind("gathers", spent.gathers);
        // The ranks' own work (the solve less its communication): a spread between the ranks
        // is time the others wait in their sums.
        const double working = summary.solver_seconds - spent.seconds();
        const double least = ranks.min(working), most = ranks.max(working);
        char solver[160];
        std::snprintf(solver, sizeof solver, "%.3f s; working %.3f-%.3f s over the ranks",
                      solver_seconds, least, most);
        communication = "ranks: the solver's communication, each kind on its slowest rank (of " +
                        std::string(solver) + "): " + halo + ", " + sums + ", " + gathers;
    }
    if (!quiet) {
        if (summary.stopped_by != 0) {
            std::printf(
                "stopped: %s after step %lld of %lld (t = %.6g), written; solver iterations %lld "
                "total; %.3f s\n",
                signal_name(summary.stopped_by).c_str(),
                static_cast<long long>(simulation.integrator().step()),
                static_cast<long long>(simulation.spec().time.steps), simulation.time(),
                static_cast<long long>(summary.total_iterations), summary.seconds);
        } else if (simulation.spec().time.steady()) {
            std::printf("done: steady solve; %lld solver iterations; %.3f s (solver %.3f s)\n",
                        static_cast<long long>(summary.total_iterations), summary.seconds,
                        summary.solver_seconds);
        } else {
            std::printf(
                "done: %lld steps to t = %.6g; solver iterations %lld total, %.1f mean, %lld "
                "max; %.3f s (%.3g ms per step, solver %.3g ms, data %.3g ms)\n",
                static_cast<long long>(summary.steps), simulation.time(),
                static_cast<long long>(summary.total_iterations), summary.mean_iterations(),
                static_cast<long long>(summary.max_iterations), summary.seconds,
                1e3 * summary.seconds_per_step(), 1e3 * summary.per_step(summary.solver_seconds),
                1e3 * summary.per_step(summary.data_seconds));
        }
        if (!communication.empty()) std::printf("%s\n", communication.c_str());
        if (summary.removed_constant) {
            std::printf(
                "note: Neumann conditions on every side fix u only up to a constant: the "
                "solution of zero mean is written");
            if (*summary.removed_constant > 1e-8) {
                std::printf(
                    "; %.3g of the right-hand side was removed: the source and the "
                    "boundary fluxes do not balance (their weighted sum is not zero)",
                    *summary.removed_constant);
            }
            std::printf("\n");
        }
        if (!simulation.pvd_path().empty()) {
            std::printf("output: %s\n", simulation.pvd_path().string().c_str());
        }
        if (!simulation.h5_path().empty()) {
            std::printf("output: %s (+ %s)\n", simulation.h5_path().string().c_str(),
                        simulation.h5_path().replace_extension(".xmf").string().c_str());
        }
    }
    if (summary.stopped_by != 0) {
        // Said on stderr too, where a batch system's log keeps it; the shell's code for a
        // process ended by the signal.
        if (ranks.rank() == 0) {
            const std::string restart =
                simulation.h5_path().empty()
                    ? std::string()
                    : "; continue with --restart " + simulation.h5_path().string();
            std::fprintf(stderr, "simrun: stopped by %s after step %lld: the outputs end on it%s\n",
                         signal_name(summary.stopped_by).c_str(),
                         static_cast<long long>(simulation.integrator().step()), restart.c_str());
        }
        return 128 + summary.stopped_by;
    }
    return exit_success;
}

// The words of an option, for its help: "auto|cpu|cuda".
std::string joined(const std::vector<std::string>& words) {
    std::string text;
    for (const auto& word : words) text += (text.empty() ? "" : "|") + word;
    return text;
}

// An option taking one of the enum's words (its one list, enum_names), stored as the value.
template <typename E>
CLI::Option* add_word_option(CLI::App& app, const std::string& name, E& value,
                             const std::string& help) {
    const std::vector<std::string> words = solvers::enum_name_strings<E>();
    return app
        .add_option_function<std::string>(
            name,
            [&value, name](const std::string& word) { value = solvers::parse_enum<E>(word, name); },
            help)
        ->check(CLI::IsMember(words))
        ->option_text(joined(words));
}

// `simrun solve`'s method words: the input's (enum_names<Method>, "auto") and "pcg", CG with a
// preconditioner (auto picks it); "cg" alone is plain CG unless a preconditioner is named.
// Every validation the run makes, up to its first step's data: the input, the memory the grid
// needs, the operator, its analysis and explicit stability limit, the solver's plan, the
// initial condition (check_simulation). The problem is never allocated whole, whatever the
// grid; nothing is written.
int run_check(const Arguments& arguments) {
    const RunSpec spec = parse_run_spec(load(arguments));
    const IntegratorCheck check = check_simulation(spec);
    std::printf(
        "%s: OK (%s, %s)\n", arguments.file.c_str(), spec.problem->description().c_str(),
        spec.time.steady() ? "steady" : (std::to_string(spec.time.steps) + " steps").c_str());
    if (check.plan) {
        std::printf("solver: %s\nformat: %s\n", check.plan->first.reason.c_str(),
                    check.plan->format_reason.c_str());
    }
    if (check.explicit_limit) {
        std::printf("explicit_euler: dt = %.6g, the largest step proved stable %.6g\n",
                    spec.time.dt, *check.explicit_limit);
    }
    return exit_success;
}

// Prints what ended the command and gives its exit code: 2 for what the input or the options
// ask for, 1 for a failure while running. `who` names the rank where it is one rank's alone.
int report(std::exception_ptr error, const std::string& who) {
    const char* name = who.c_str();
    try {
        std::rethrow_exception(error);
    } catch (const InputError& e) {
        std::fprintf(stderr, "%s: input error: %s\n", name, e.what());
        return exit_usage;
    } catch (const solvers::MatrixMarketError& e) {
        std::fprintf(stderr, "%s: input error: %s\n", name, e.what());
        return exit_usage;
    } catch (const solvers::NotCompiled& e) {
        std::fprintf(stderr, "%s: usage error: %s\n", name, e.what());
        return exit_usage;
    } catch (const solvers::DeviceUnavailable& e) {
        std::fprintf(stderr, "%s: usage error: %s\n", name, e.what());
        return exit_usage;
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "%s: input error: %s\n", name, e.what());
        return exit_usage;
    } catch (const SolveFailure& e) {
        std::fprintf(stderr, "\n%s: solve failed: %s\n", name, e.what());
        return exit_failure;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "\n%s: error: %s\n", name, e.what());
        return exit_failure;
    } catch (...) {
        std::fprintf(stderr, "\n%s: error: an unknown exception\n", name);
        return exit_failure;
    }
}

// Over several ranks: a failure the ranks agreed on is printed once, by rank 0, and every
// rank exits with its code; a failure of this rank alone (met where the others cannot learn
// of it) is printed naming the rank, and ends every rank's process (MPI_Abort) with code 1
// rather than leaving them waiting.
int report_failure(std::exception_ptr error, const solvers::Communicator& ranks) {
    if (ranks.size() == 1) return report(error, "simrun");
    try {
        std::rethrow_exception(error);
    } catch (const AgreedFailure& agreed) {
        // An input error names its place (a node, a key); a failure of some ranks, the first.
        const bool usage = agreed.kind() != AgreedFailure::Kind::failure;
        const std::string who = agreed.every_rank() || usage
                                    ? std::string("simrun")
                                    : "simrun: rank " + std::to_string(agreed.rank()) + " of " +
                                          std::to_string(ranks.size());
        if (ranks.rank() == 0) {
            const char* what = agreed.kind() == AgreedFailure::Kind::input   ? "input error"
                               : agreed.kind() == AgreedFailure::Kind::usage ? "usage error"
                                                                             : "error";
            std::fprintf(stderr, "%s: %s: %s\n", who.c_str(), what, agreed.what());
        }
        return usage ? exit_usage : exit_failure;
    } catch (...) {
    }
    report(error,
           "simrun: rank " + std::to_string(ranks.rank()) + " of " + std::to_string(ranks.size()));
    std::fflush(stderr);
    ranks.abort(exit_failure);
    return exit_failure;  // not reached: abort() ends the process
}

}  // namespace

int run_command_line(int argc, char** argv) {
    // MPI, where an MPI launcher started simrun (before the options: MPI may take its own).
    const std::shared_ptr<const solvers::Communicator> ranks =
        solvers::launched_processes(argc, argv);
    // Ranks that share a host share its cores (before any parallel loop).
    solvers::share_host_cores(*ranks);
    CLI::App app{"simrun: finite-difference PDE simulations with a GPU sparse solver"};
    app.require_subcommand(0, 1);
    Arguments arguments;
    arguments.ranks = ranks;
    app.add_option("file", arguments.file, "Input file (TOML) to run")->check(plain_path);
    add_word_option(app, "--backend", arguments.backend,
                    "Back-end: auto (CUDA when a GPU is present), cpu, cuda");
    app.add_option("--set", arguments.overrides,
                   "Override an input key: --set grid.nx=256 (value parsed as TOML; repeatable)")
        ->allow_extra_args(false);
    app.add_option("--output", arguments.output, "Output directory (overrides [output] directory)")
        ->check(plain_path);
    app.add_option("--restart", arguments.restart,
                   "Continue from the last step stored in RUN.h5 (same grid and dt; appends when "
                   "RUN.h5 is this run's own output)")
        ->option_text("RUN.h5")
        ->check(plain_path);
    add_process_grid_option(app, arguments.process_grid);
    app.add_flag("--quiet", arguments.quiet, "Print nothing but errors");
    app.set_version_flag(
        "--version",
        [] {
            std::string report = version_report();
            if (!report.empty() && report.back() == '\n') report.pop_back();
            return report;
        },
        "Print the version, commit, CUDA architectures and dependency versions, and exit");

    Arguments check_arguments;
    CLI::App* check = app.add_subcommand("check", "Validate an input file without running it");
    check->add_option("file", check_arguments.file, "Input file (TOML)")
        ->required()
        ->check(plain_path);
    check->add_option("--set", check_arguments.overrides, "Override an input key (repeatable)")
        ->allow_extra_args(false);

    Arguments verify_arguments;
    int verify_levels = 3;
    bool verify_json = false;
    CLI::App* verify_command = app.add_subcommand(
        "verify", "Convergence study against the problem's exact solution (observed orders)");
    verify_command->add_option("file", verify_arguments.file, "Input file (TOML) with `exact`")
        ->required()
        ->check(plain_path);
    verify_command->add_option("--levels", verify_levels, "Number of grid levels (>= 2; 3)");
    verify_command->add_flag("--json", verify_json, "Print one JSON object");
    add_word_option(*verify_command, "--backend", verify_arguments.backend, "Back-end");
    add_process_grid_option(*verify_command, verify_arguments.process_grid);
    verify_command->add_option("--set", verify_arguments.overrides, "Override an input key")
        ->allow_extra_args(false);

    BenchOptions bench_options;
    CLI::App* bench = app.add_subcommand(
        "bench",
        "Performance harness: time per iteration, GB/s and the floor ratio per case, "
        "against a cuSPARSE/cuBLAS CG baseline on CUDA");
    add_word_option(*bench, "--backend", bench_options.backend, "Back-end");
    bench->add_flag("--quick", bench_options.quick, "A small subset (under a minute on 2 cores)");
    bench->add_option("--sizes", bench_options.sizes, "Edge lengths m of the m x m 2D grids");
    bench->add_option("--matrices", bench_options.matrices,
                      "Directory of Matrix Market files to time (tests/data/matrices)");
    bench->add_option("--json", bench_options.json, "Write the results as JSON to this file");
    bench->add_option("--report", bench_options.report, "Write a markdown report to this file");

    SolveOptions solve_options;
    CLI::App* solve = app.add_subcommand(
        "solve", "Solve A x = b from Matrix Market files with the solver layer on its own");
    solve->add_option("matrix", solve_options.matrix, "A.mtx (square)")->required();
    solve->add_option("--rhs", solve_options.rhs, "b.mtx (default: b = A * ones)");
    solve->add_option("--x0", solve_options.initial_guess, "Initial guess x0.mtx (default: 0)");
    // pcg: the command line's word for CG with a preconditioner (auto picks it).
    std::vector<std::string> methods = solvers::enum_name_strings<solvers::Method>("auto");
    methods.insert(std::find(methods.begin(), methods.end(), "cg") + 1, "pcg");
    const std::vector<std::string> preconditioners =
        solvers::enum_name_strings<solvers::PreconditionerKind>("auto");
    const std::vector<std::string> formats = solvers::enum_name_strings<solvers::Format>("auto");
    std::string solve_method = "auto", solve_preconditioner = "auto", solve_format = "auto";
    solve->add_option("--solver", solve_method, joined(methods))->check(CLI::IsMember(methods));
    solve->add_option("--precond", solve_preconditioner, joined(preconditioners))
        ->check(CLI::IsMember(preconditioners));
    solve->add_option("--format", solve_format, joined(formats))->check(CLI::IsMember(formats));
    solve->add_option("--rtol", solve_options.settings.rtol,
                      "Relative tolerance ||r||/||b|| (1e-8; 1e-6 in float)");
    solve->add_option("--atol", solve_options.settings.atol, "Absolute tolerance ||r|| (0)");
    solve->add_option("--max-iters", solve_options.settings.max_iterations,
                      "Iteration limit (default: 2 n within [1000, 10000])");
    solve->add_option("--omega", solve_options.settings.omega,
                      "Relaxation weight for jacobi/sor/ssor (1)");
    solve->add_option("--restart-length", solve_options.settings.restart,
                      "GMRES's restart length m: basis vectors per cycle (30; at most 128)");
    add_word_option(*solve, "--precision", solve_options.settings.precision, "Floating-point type");
    add_word_option(*solve, "--backend", solve_options.settings.backend, "Back-end");
    std::string solve_grid;
    solve
        ->add_option("--grid", solve_grid,
                     "The rows are the points of this box, x fastest (so multigrid applies)")
        ->option_text("NXxNY[xNZ]");
    solve->add_option("--out", solve_options.out, "Write the solution to x.mtx");
    solve->add_flag("--compensated", solve_options.settings.compensated,
                    "Compensated (Kahan/Neumaier) dot products");
    solve->add_flag("--json", solve_options.json, "Print one JSON object");

    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {  // --help, --help-all, --version: printed, exit 0
        // Every rank parses the same arguments alike: rank 0 alone prints.
        return ranks->rank() == 0 ? app.exit(e) : exit_success;
    } catch (const CLI::ParseError& e) {
        if (ranks->rank() == 0) {
            std::fprintf(stderr, "simrun: usage error: %s\nRun 'simrun --help' for the options.\n",
                         e.what());
        }
        return exit_usage;
    }

    try {
        if (ranks->size() > 1 && (check->parsed() || solve->parsed() || bench->parsed())) {
            // Every rank knows this alike: reported once, exit 2 everywhere.
            throw AgreedFailure(AgreedFailure::Kind::usage, 0, true,
                                "only a run (simrun FILE.toml) and verify are split over several "
                                "ranks; start check, solve and bench without mpirun");
        }
        if (check->parsed()) return run_check(check_arguments);
        if (solve->parsed()) {
            solve_options.settings.request =
                parse_solve_request(solve_method, solve_preconditioner, solve_format);
            if (!solve_grid.empty()) {
                try {
                    solve_options.settings.request.grid = solvers::parse_grid_box(solve_grid);
                } catch (const std::invalid_argument& e) {
                    throw InputError(std::string("--grid: ") + e.what());
                }
            }
            return run_solve(solve_options);
        }
        if (bench->parsed()) return run_bench(bench_options);
        if (verify_command->parsed()) {
            // Over several ranks each level runs split over them; rank 0 prints the report.
            const VerificationReport report = agreeing(*ranks, [&] {
                return verify([&] { return load(verify_arguments); }, verify_levels,
                              verify_arguments.backend, ranks,
                              verify_arguments.process_grid.empty()
                                  ? std::nullopt
                                  : parse_process_grid(verify_arguments.process_grid));
            });
            if (ranks->rank() != 0) return exit_success;
            std::printf("%s", verify_json ? (format_json(report) + "\n").c_str()
                                          : format_table(report).c_str());
            return exit_success;
        }
        if (arguments.file.empty()) {
            std::fprintf(stderr, "simrun: usage error: no input file given\n%s",
                         app.help().c_str());
            return exit_usage;
        }
        return run_simulation(arguments);
    } catch (...) {
        return report_failure(std::current_exception(), *arguments.ranks);
    }
}

}  // namespace simrun::app

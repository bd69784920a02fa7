#include "run_command.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "simrun/framework/distributed/agreement.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/framework/run/setup_phases.hpp"
#include "simrun/framework/run/simulation.hpp"
#include "simrun/framework/run/stop_signals.hpp"
#include "simrun/solvers/base/backend_preparation.hpp"
#include "simrun/solvers/selection/solver_selection.hpp"
#include "simrun/solvers/system/host_threads.hpp"

namespace simrun::app {
namespace {

using namespace simrun::framework;

// The header's solver, format, cycle or preconditioner and data lines.
void print_solver_lines(const Simulation& simulation) {
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
}

void print_header(const Simulation& simulation, const std::string* restart) {
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
        std::printf("  threads  %s\n",
                    solvers::describe_host_threads(solvers::host_share()).c_str());
    }
    print_solver_lines(simulation);
    for (const auto& note : spec.problem->notes(grid)) std::printf("  note     %s\n", note.c_str());
    std::printf("  set-up   %s\n", describe_setup(simulation.setup_phases()).c_str());
    if (restart) {
        std::printf("  restart  from step %lld (t = %.6g) of %s\n",
                    static_cast<long long>(simulation.integrator().step()), simulation.time(),
                    restart->c_str());
    }
    std::fflush(stdout);
}

// Over several ranks, what the solver spent communicating, each kind's on its slowest rank
// (collective: every rank takes part before rank 0 prints); empty on one process.
std::string communication_summary(const solvers::Communicator& ranks, const RunSummary& summary) {
    if (ranks.size() == 1) return {};
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
    // The ranks' own work (the solve less its communication): a spread between the ranks is
    // time the others wait in their sums.
    const double working = summary.solver_seconds - spent.seconds();
    const double least = ranks.min(working), most = ranks.max(working);
    char solver[160];
    std::snprintf(solver, sizeof solver, "%.3f s; working %.3f-%.3f s over the ranks",
                  solver_seconds, least, most);
    return "ranks: the solver's communication, each kind on its slowest rank (of " +
           std::string(solver) + "): " + halo + ", " + sums + ", " + gathers;
}

// The summary's "stopped:" or "done:" line.
void print_done(const Simulation& simulation, const RunSummary& summary) {
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
}

void print_summary(const Simulation& simulation, const RunSummary& summary,
                   const std::string& communication) {
    print_done(simulation, summary);
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

// A run stopped by a signal between two steps: said on stderr too, where a batch system's log
// keeps it; the shell's code for a process ended by the signal.
int stopped(const Simulation& simulation, const RunSummary& summary,
            const solvers::Communicator& ranks) {
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

RunOptions run_options(const InputArguments& arguments) {
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
    return options;
}

}  // namespace

void add_run_options(CLI::App& app, InputArguments& arguments) {
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
}

// Over several ranks every rank runs the same input (each its box); rank 0 alone prints, and
// every failure is agreed (distributed/agreement.hpp), so that each rank ends alike.
int run_simulation(const InputArguments& arguments) {
    const solvers::Communicator& ranks = *arguments.ranks;
    RunOptions options = run_options(arguments);
    const bool quiet = arguments.quiet || ranks.rank() != 0;
    // The CUDA context is made on a thread of its own while the input is read and checked.
    options.setup_start = std::chrono::steady_clock::now();
    options.backend_preparation =
        std::make_shared<solvers::BackendPreparation>(options.backend, ranks.host_rank());
    RunSpec spec = agreeing(ranks, [&] { return parse_run_spec(load(arguments)); });
    Simulation simulation(std::move(spec), options);
    if (!quiet) {
        print_header(simulation, arguments.restart.empty() ? nullptr : &arguments.restart);
    }
    const RunSummary summary = agreeing(ranks, [&] { return simulation.run(); });
    const std::string communication = communication_summary(ranks, summary);
    if (!quiet) print_summary(simulation, summary, communication);
    if (summary.stopped_by != 0) return stopped(simulation, summary, ranks);
    return 0;
}

}  // namespace simrun::app

#include "command_line.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <memory>

#include "bench_command_line.hpp"
#include "check_command.hpp"
#include "command_options.hpp"
#include "failure_report.hpp"
#include "run_command.hpp"
#include "simrun/framework/distributed/agreement.hpp"
#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/system/host_threads.hpp"
#include "solve_command.hpp"
#include "verify_command.hpp"
#include "version_report.hpp"

namespace simrun::app {
namespace {

// Every command's options, filled by CLI11 as it parses.
struct Commands {
    InputArguments run, check;
    VerifyArguments verify;
    BenchOptions bench;
    SolveOptions solve;
    CLI::App* check_command = nullptr;
    CLI::App* verify_command = nullptr;
    CLI::App* bench_command = nullptr;
    CLI::App* solve_command = nullptr;
};

void add_commands(CLI::App& app, Commands& c) {
    app.require_subcommand(0, 1);
    add_run_options(app, c.run);
    add_version_flag(app);
    c.check_command = add_check_command(app, c.check);
    c.verify_command = add_verify_command(app, c.verify);
    c.bench_command = add_bench_command(app, c.bench);
    c.solve_command = add_solve_command(app, c.solve);
}

// Runs the command parsed (the run where no subcommand was named).
int dispatch(const CLI::App& app, Commands& c, const solvers::Communicator& ranks) {
    const bool alone =
        c.check_command->parsed() || c.solve_command->parsed() || c.bench_command->parsed();
    if (ranks.size() > 1 && alone) {
        // Every rank knows this alike: reported once, exit 2 everywhere.
        throw framework::AgreedFailure(
            framework::FailureKind::usage, 0, true,
            "only a run (simrun FILE.toml) and verify are split over several ranks; start "
            "check, solve and bench without mpirun");
    }
    if (c.check_command->parsed()) return run_check(c.check);
    if (c.solve_command->parsed()) return run_solve(c.solve);
    if (c.bench_command->parsed()) return run_bench(c.bench);
    if (c.verify_command->parsed()) return run_verify(c.verify);
    if (c.run.file.empty()) {
        std::fprintf(stderr, "simrun: usage error: no input file given\n%s", app.help().c_str());
        return exit_usage;
    }
    return run_simulation(c.run);
}

}  // namespace

int run_command_line(int argc, char** argv) {
    // MPI, where an MPI launcher started simrun (before the options: MPI may take its own).
    const std::shared_ptr<const solvers::Communicator> ranks =
        solvers::launched_processes(argc, argv);
    // Ranks that share a host share its cores (before any parallel loop).
    solvers::share_host_cores(*ranks);
    CLI::App app{"simrun: finite-difference PDE simulations with a GPU sparse solver"};
    Commands commands;
    commands.run.ranks = commands.verify.input.ranks = ranks;
    add_commands(app, commands);
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
        return dispatch(app, commands, *ranks);
    } catch (...) {
        return report_failure(std::current_exception(), *ranks);
    }
}

}  // namespace simrun::app

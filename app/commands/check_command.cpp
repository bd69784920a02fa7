#include "check_command.hpp"

#include <cstdio>
#include <string>

#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/framework/run/simulation.hpp"

namespace simrun::app {

CLI::App* add_check_command(CLI::App& app, InputArguments& arguments) {
    CLI::App* check = app.add_subcommand("check", "Validate an input file without running it");
    check->add_option("file", arguments.file, "Input file (TOML)")->required()->check(plain_path);
    check->add_option("--set", arguments.overrides, "Override an input key (repeatable)")
        ->allow_extra_args(false);
    return check;
}

int run_check(const InputArguments& arguments) {
    using namespace simrun::framework;
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
    return 0;
}

}  // namespace simrun::app

#pragma once
// `simrun check FILE.toml [--set key=value]...`: every validation the run makes, up to its
// first step's data, without running it.
#include <CLI/CLI.hpp>

#include "command_options.hpp"

namespace simrun::app {

// Adds the subcommand `check` with its options.
CLI::App* add_check_command(CLI::App& app, InputArguments& arguments);

// The input, the memory the grid needs, the operator, its analysis and explicit stability
// limit, the solver's plan, the initial condition (check_simulation). The problem is never
// allocated whole, whatever the grid; nothing is written. Returns 0; throws InputError.
int run_check(const InputArguments& arguments);

}  // namespace simrun::app

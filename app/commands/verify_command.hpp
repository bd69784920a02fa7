#pragma once
// `simrun verify FILE.toml [--levels K] [--json] [--backend B] [--process-grid PxQ[xR]]
// [--set key=value]...`: a convergence study against the problem's exact solution (SPEC §7).
#include <CLI/CLI.hpp>

#include "command_options.hpp"

namespace simrun::app {

struct VerifyArguments {
    InputArguments input;
    int levels = 3;
    bool json = false;
};

// Adds the subcommand `verify` with its options.
CLI::App* add_verify_command(CLI::App& app, VerifyArguments& arguments);

// Runs the study (over several ranks each level split over them, failures agreed) and prints
// its table or JSON on rank 0. Returns 0.
int run_verify(const VerifyArguments& arguments);

}  // namespace simrun::app

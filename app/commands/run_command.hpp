#pragma once
// `simrun FILE.toml [--backend B] [--set key=value]... [--output DIR] [--restart RUN.h5]
// [--process-grid PxQ[xR]] [--quiet]`: a run from its input to its outputs (SPEC §7).
#include <CLI/CLI.hpp>

#include "command_options.hpp"

namespace simrun::app {

// The run's options, on the command line's top level.
void add_run_options(CLI::App& app, InputArguments& arguments);

// Runs the input, printing its header and summary (rank 0 alone over several ranks). Returns 0,
// or 128 + the signal that stopped it between two steps. Throws what the run throws, agreed
// over the ranks (distributed/agreement.hpp).
int run_simulation(const InputArguments& arguments);

}  // namespace simrun::app

#pragma once
// `simrun bench [--backend B] [--quick] [--sizes M...] [--matrices DIR] [--json FILE]
// [--report FILE]`: the benchmark harness's options (the harness is app/bench/).
#include <CLI/CLI.hpp>

#include "bench/bench_command.hpp"

namespace simrun::app {

// Adds the subcommand `bench` with its options; run_bench runs it.
CLI::App* add_bench_command(CLI::App& app, BenchOptions& options);

}  // namespace simrun::app

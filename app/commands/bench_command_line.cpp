#include "bench_command_line.hpp"

#include "command_options.hpp"

namespace simrun::app {

CLI::App* add_bench_command(CLI::App& app, BenchOptions& options) {
    CLI::App* bench = app.add_subcommand(
        "bench",
        "Performance harness: time per iteration, GB/s and the floor ratio per case, "
        "against a cuSPARSE/cuBLAS CG baseline on CUDA");
    add_word_option(*bench, "--backend", options.backend, "Back-end");
    bench->add_flag("--quick", options.quick, "A small subset (under a minute on 2 cores)");
    bench->add_option("--sizes", options.sizes, "Edge lengths m of the m x m 2D grids");
    bench->add_option("--matrices", options.matrices,
                      "Directory of Matrix Market files to time (tests/data/matrices)");
    bench
        ->add_option("--baseline", options.baseline,
                     "The cuSPARSE/cuBLAS baseline: auto (on CUDA where its module loads), on "
                     "(required), off. Its module, libsimrun_bench_baseline.so, is looked for "
                     "beside the executable and in <libdir>/simrun, or where "
                     "$SIMRUN_BENCH_BASELINE names it")
        ->check(CLI::IsMember({"auto", "on", "off"}));
    bench->add_option("--json", options.json, "Write the results as JSON to this file");
    bench->add_option("--report", options.report, "Write a markdown report to this file");
    return bench;
}

}  // namespace simrun::app

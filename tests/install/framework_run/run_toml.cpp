// run_toml FILE.toml OUTPUT_DIR: runs the input on the CPU back-end as `simrun` would and prints
// the steps and solver iterations; exit 0 when the run completes.
#include <cstdio>
#include <exception>
#include <simrun/framework/config/config.hpp>
#include <simrun/framework/problem/run_spec.hpp>
#include <simrun/framework/run/simulation.hpp>

int main(int argc, char** argv) {
    namespace f = simrun::framework;
    if (argc != 3) {
        std::fprintf(stderr, "usage: run_toml FILE.toml OUTPUT_DIR\n");
        return 2;
    }
    try {
        f::RunOptions options;
        options.backend = simrun::solvers::BackendChoice::cpu;
        options.output_directory = argv[2];
        options.quiet = true;
        f::Simulation simulation(f::parse_run_spec(f::Config::from_file(argv[1])), options);
        const f::RunSummary summary = simulation.run();
        std::printf("%lld steps, %lld solver iterations, output %s\n",
                    static_cast<long long>(summary.steps),
                    static_cast<long long>(summary.total_iterations),
                    simulation.h5_path().string().c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "run_toml: %s\n", e.what());
        return 1;
    }
}

// Every file in inputs/ runs (on a small grid and a few steps) and produces a finite,
// non-constant field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/framework/run/simulation.hpp"
#include "support/run_simrun.hpp"

namespace simrun {
namespace {

// A run on the CPU that prints and writes nothing.
framework::RunOptions quiet_cpu_run() {
    framework::RunOptions options;
    options.backend = solvers::BackendChoice::cpu;
    options.quiet = true;
    options.write_output = false;
    return options;
}

TEST(Inputs, EveryInputFileRunsSmall) {
    int count = 0;
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(SIMRUN_SOURCE_DIR "/inputs")) {
        if (entry.path().extension() != ".toml") continue;
        SCOPED_TRACE(entry.path().string());
        ++count;
        framework::Config config = framework::Config::from_file(entry.path());
        // At most 17 nodes per axis (never more than the file has: explicit steps stay stable).
        const framework::ConfigSection grid = config.section("grid");
        for (const char* axis : {"nx", "ny", "nz"}) {
            if (grid.has(axis) && grid.require<std::int64_t>(axis) > 17) {
                config.apply_override(std::string("grid.") + axis + "=17");
            }
        }
        const framework::ConfigSection time = config.section("time");
        const bool steady = time.get<std::string>("scheme", "") == "steady" || !time.has("dt");
        if (!steady) {
            config.apply_override("time.end=" + std::to_string(3 * time.require<double>("dt")));
        }
        framework::Simulation simulation(framework::parse_run_spec(config), quiet_cpu_run());
        const auto summary = simulation.run();
        EXPECT_EQ(summary.steps, steady ? 1 : 3);
        const auto u = simulation.field();
        EXPECT_TRUE(std::all_of(u.begin(), u.end(), [](double v) { return std::isfinite(v); }));
        const auto [low, high] = std::minmax_element(u.begin(), u.end());
        EXPECT_LT(*low, *high) << "constant field";
    }
    EXPECT_GE(count, 1);
}

// heat.toml, 20 steps written every 5th: 5 steps in each series, and the loop's hand-overs and
// the final wait for the writers are measured parts of the run's time.
TEST(Inputs, OutputTimesArePartsOfTheRunTime) {
    framework::Config config = framework::Config::from_file(SIMRUN_SOURCE_DIR "/inputs/heat.toml");
    for (const char* setting : {"grid.nx=17", "grid.ny=17", "output.every=5"}) {
        config.apply_override(setting);
    }
    const double dt = config.section("time").require<double>("dt");
    config.apply_override("time.end=" + std::to_string(20 * dt));
    const testing::TemporaryDirectory directory;
    framework::RunOptions options;
    options.backend = solvers::BackendChoice::cpu;
    options.quiet = true;
    options.output_directory = directory.path();
    framework::Simulation simulation(framework::parse_run_spec(config), options);
    const auto summary = simulation.run();
    ASSERT_EQ(summary.steps, 20);
    EXPECT_GT(summary.output_handover_seconds, 0.0);
    EXPECT_GE(summary.output_wait_seconds, 0.0);
    EXPECT_LE(summary.output_handover_seconds + summary.output_wait_seconds, summary.seconds);
    std::ifstream pvd(simulation.pvd_path());
    const std::string text{std::istreambuf_iterator<char>(pvd), std::istreambuf_iterator<char>()};
    std::size_t listed = 0;
    for (std::size_t at = text.find("<DataSet"); at != std::string::npos;
         at = text.find("<DataSet", at + 1)) {
        ++listed;
    }
    EXPECT_EQ(listed, 20u / 5u + 1u);
}

// heat.toml's source depends on time, so every step forms its data term again: that time and
// the solves' are measured, disjoint parts of the run's time.
TEST(Inputs, DataTermAndSolverTimesArePartsOfTheRunTime) {
    framework::Config config = framework::Config::from_file(SIMRUN_SOURCE_DIR "/inputs/heat.toml");
    for (const char* setting : {"grid.nx=33", "grid.ny=33"}) config.apply_override(setting);
    const double dt = config.section("time").require<double>("dt");
    config.apply_override("time.end=" + std::to_string(10 * dt));
    framework::Simulation simulation(framework::parse_run_spec(config), quiet_cpu_run());
    const auto summary = simulation.run();
    ASSERT_EQ(summary.steps, 10);
    EXPECT_GT(summary.data_seconds, 0.0);
    EXPECT_GT(summary.solver_seconds, 0.0);
    EXPECT_LE(summary.data_seconds + summary.solver_seconds, summary.seconds);
    EXPECT_DOUBLE_EQ(summary.per_step(summary.data_seconds), summary.data_seconds / 10);
}

}  // namespace
}  // namespace simrun

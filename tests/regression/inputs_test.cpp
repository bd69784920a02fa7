// Every file in inputs/ runs (on a small grid and a few steps) and produces a finite,
// non-constant field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "simrun/framework/config.hpp"
#include "simrun/framework/run_spec.hpp"
#include "simrun/framework/simulation.hpp"

namespace simrun {
namespace {

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
        framework::RunOptions options;
        options.backend = solvers::BackendChoice::cpu;
        options.quiet = true;
        options.write_output = false;
        framework::Simulation simulation(framework::parse_run_spec(config), options);
        const auto summary = simulation.run();
        EXPECT_EQ(summary.steps, steady ? 1 : 3);
        const auto u = simulation.field();
        EXPECT_TRUE(std::all_of(u.begin(), u.end(), [](double v) { return std::isfinite(v); }));
        const auto [low, high] = std::minmax_element(u.begin(), u.end());
        EXPECT_LT(*low, *high) << "constant field";
    }
    EXPECT_GE(count, 1);
}

}  // namespace
}  // namespace simrun

// A whole run on the CUDA back-end against the same run on the CPU back-end: the final fields
// agree far below the discretisation error. Skips where no GPU exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/framework/run/simulation.hpp"
#include "simrun/solvers/base/backend.hpp"

namespace simrun {
namespace {

TEST(CudaHeatSimulation, FinalFieldMatchesCpu) {
    if (solvers::cuda_device_count() == 0) {
        GTEST_SKIP() << "no CUDA GPU here (or a CPU-only build): nothing to compare";
    }
    const char* input = R"toml(
[problem]
type = "heat"
alpha = 0.05
initial = "exp(-50*((x-0.4)^2 + (y-0.5)^2))"
source = "sin(2*pi*t)*x*y"
[grid]
nx = 129
ny = 97
y = [0.0, 0.75]
[boundary]
left = "0.3*sin(pi*y/0.75)"
all = "0"
[time]
scheme = "crank_nicolson"
dt = 0.005
end = 0.25
[solver]
rtol = 1e-12
)toml";
    auto run = [&](solvers::BackendChoice choice) {
        framework::RunOptions options;
        options.backend = choice;
        options.quiet = true;
        options.write_output = false;
        framework::Simulation simulation(
            framework::parse_run_spec(framework::Config::from_string(input, "heat-test")), options);
        simulation.run();
        return simulation.field();
    };
    const auto on_cpu = run(solvers::BackendChoice::cpu);
    const auto on_gpu = run(solvers::BackendChoice::cuda);
    double largest = 0, difference = 0;
    for (std::size_t i = 0; i < on_cpu.size(); ++i) {
        largest = std::max(largest, std::abs(on_cpu[i]));
        difference = std::max(difference, std::abs(on_cpu[i] - on_gpu[i]));
    }
    std::cout << "heat 129x97 CN, 50 steps: max |u_gpu - u_cpu| / max |u| = "
              << difference / largest << "\n";
    // Each step's solve is accurate to rtol 1e-12 times cond(M) ~ 1e2: the fields agree far
    // below the discretisation error.
    EXPECT_LE(difference / largest, 1e-9);
}

}  // namespace
}  // namespace simrun

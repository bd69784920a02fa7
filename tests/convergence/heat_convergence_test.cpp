// Observed orders of the heat problem against its exact solution
// u = exp(-2 pi^2 alpha t) sin(pi x) sin(pi y) (zero boundaries, no source).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "simrun/framework/config.hpp"
#include "simrun/framework/grid_sampling.hpp"
#include "simrun/framework/run_spec.hpp"
#include "simrun/framework/simulation.hpp"

namespace simrun::framework {
namespace {

struct Errors {
    double l2;
    double max;
};

Errors heat_error(std::int64_t nx, double dt, const std::string& scheme) {
    const std::string input = R"toml(
[problem]
type = "heat"
alpha = 1.0
initial = "sin(pi*x)*sin(pi*y)"
exact = "exp(-2*pi^2*t)*sin(pi*x)*sin(pi*y)"
[grid]
nx = )toml" + std::to_string(nx) +
                              "\nny = " + std::to_string(nx) + R"toml(
[boundary]
all = "0"
[time]
end = 0.1
dt = )toml" + std::to_string(dt) +
                              "\nscheme = \"" + scheme + R"toml("
[solver]
rtol = 1e-13
max_iterations = 5000
)toml";
    RunOptions options;
    options.backend = solvers::BackendChoice::cpu;
    options.quiet = true;
    options.write_output = false;
    Simulation simulation(parse_run_spec(Config::from_string(input, "convergence")), options);
    simulation.run();
    const std::vector<double> u = simulation.field();
    std::vector<double> exact(u.size());
    sample(simulation.grid(), *simulation.spec().problem->exact_solution(), simulation.time(),
           exact);
    Errors e{0.0, 0.0};
    for (std::size_t i = 0; i < u.size(); ++i) {
        const double d = std::abs(u[i] - exact[i]);
        e.l2 += d * d;
        e.max = std::max(e.max, d);
    }
    e.l2 = std::sqrt(e.l2 * simulation.grid().spacing(0) * simulation.grid().spacing(1));
    return e;
}

// Observed orders log(e_k / e_{k+1}) / log(ratio) between successive levels.
std::vector<double> orders(const std::vector<double>& errors, double ratio) {
    std::vector<double> p;
    for (std::size_t k = 0; k + 1 < errors.size(); ++k) {
        p.push_back(std::log(errors[k] / errors[k + 1]) / std::log(ratio));
    }
    return p;
}

TEST(HeatConvergence, BackwardEulerIsSecondOrderInSpace) {
    // dt refined with h^2 (dt / h^2 = 0.64 fixed), so the O(dt) error shrinks like h^2 too and
    // the whole error is O(h^2).
    std::vector<double> l2, max;
    for (int level = 0; level < 3; ++level) {
        const std::int64_t intervals = 8 << level;
        const Errors e = heat_error(intervals + 1, 0.01 / std::pow(4.0, level), "backward_euler");
        l2.push_back(e.l2);
        max.push_back(e.max);
    }
    for (double p : orders(l2, 2.0)) EXPECT_GE(p, 1.9) << "L2 order in h";
    for (double p : orders(max, 2.0)) EXPECT_GE(p, 1.9) << "max order in h";
}

TEST(HeatConvergence, BackwardEulerIsFirstOrderInTime) {
    // h = 1/64: the spatial error (~1e-4 relative) is far below the temporal one.
    std::vector<double> l2;
    for (double dt : {0.01, 0.005, 0.0025}) l2.push_back(heat_error(65, dt, "backward_euler").l2);
    for (double p : orders(l2, 2.0)) {
        EXPECT_GE(p, 0.9) << "L2 order in dt";
        EXPECT_LE(p, 1.1) << "L2 order in dt";
    }
}

TEST(HeatConvergence, CrankNicolsonIsSecondOrderInTime) {
    std::vector<double> l2;
    for (double dt : {0.02, 0.01, 0.005}) l2.push_back(heat_error(257, dt, "crank_nicolson").l2);
    for (double p : orders(l2, 2.0)) EXPECT_GE(p, 1.9) << "L2 order in dt";
}

}  // namespace
}  // namespace simrun::framework

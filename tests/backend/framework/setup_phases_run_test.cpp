// A run's set-up phases (Simulation::setup_phases) on the CPU: timed from RunOptions::
// setup_start, no context or compilation, adding up to the total, and written to the run
// file's solver_decisions as the header says them; a context prepared for the run is joined.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/framework/run/setup_phases.hpp"
#include "simrun/framework/run/simulation.hpp"
#include "simrun/solvers/base/backend_preparation.hpp"
#include "support/run_file.hpp"
#include "support/run_simrun.hpp"

namespace simrun::framework {
namespace {

RunSpec small_heat() {
    return parse_run_spec(Config::from_string(
        "[problem]\ntype = \"heat\"\nalpha = 0.1\ninitial = \"sin(pi*x)*sin(pi*y)\"\n"
        "[grid]\nnx = 17\nny = 17\n[boundary]\nall = \"0\"\n[time]\ndt = 0.01\nend = 0.03\n"
        "[output]\nvtk = false\nhdf5 = true\nbasename = \"phases\"\n",
        "test.toml"));
}

double sum_of_phases(const SetupPhases& p) {
    return p.input + p.context + p.coefficients + p.compilation + p.assembly + p.analysis +
           p.solver + p.data_term + p.initial_state + p.first_step_data + p.other();
}

// A Poisson solve on `nodes`^2 nodes with a varying k (a coefficient to check at every node).
RunSpec poisson(int nodes) {
    const std::string n = std::to_string(nodes);
    return parse_run_spec(Config::from_string(
        "[problem]\ntype = \"poisson\"\nk = \"1 + x*y\"\nsource = \"sin(pi*x)*y\"\n"
        "[grid]\nnx = " +
            n + "\nny = " + n + "\n[boundary]\nall = \"0\"\n[solver]\nrtol = 1e-8\n",
        "poisson.toml"));
}

TEST(SetupPhasesRun, CpuPhasesAreTimedFromTheInputAndAddUp) {
    RunOptions options;
    options.backend = solvers::BackendChoice::cpu;
    options.quiet = true;
    options.write_output = false;
    options.setup_start = std::chrono::steady_clock::now() - std::chrono::milliseconds(50);
    const Simulation simulation(small_heat(), options);
    const SetupPhases& phases = simulation.setup_phases();
    EXPECT_GE(phases.input, 0.05);
    EXPECT_EQ(phases.context, 0.0);
    EXPECT_EQ(phases.compilation, 0.0);
    EXPECT_FALSE(phases.compilation_cached);
    for (const double seconds :
         {phases.coefficients, phases.assembly, phases.analysis, phases.solver, phases.data_term,
          phases.initial_state, phases.first_step_data, phases.other()}) {
        EXPECT_GE(seconds, 0.0);
    }
    // The initial condition and the first step's data are sampled at every node.
    EXPECT_GT(phases.initial_state, 0.0);
    EXPECT_GT(phases.first_step_data, 0.0);
    EXPECT_GE(phases.total, phases.input);
    EXPECT_NEAR(sum_of_phases(phases), phases.total, 1e-9);
    const std::string line = describe_setup(phases);
    EXPECT_EQ(line.find("context"), std::string::npos) << line;
    EXPECT_EQ(line.find("compilation"), std::string::npos) << line;
    EXPECT_NE(line.find("matrix analysis"), std::string::npos) << line;
}

// The phases named hold the set-up's work: what is left (the decomposition, the memory check,
// the CPU back-end made) is a small part of a solve's set-up on 513^2 nodes, where the
// coefficient check, the right-hand side (the first step's data) and the state are timed.
TEST(SetupPhasesRun, ThePhasesNamedHoldTheWork) {
    RunOptions options;
    options.backend = solvers::BackendChoice::cpu;
    options.quiet = true;
    options.write_output = false;
    options.setup_start = std::chrono::steady_clock::now();
    const Simulation simulation(poisson(513), options);
    const SetupPhases& phases = simulation.setup_phases();
    EXPECT_GT(phases.coefficients, 0.0);
    EXPECT_GT(phases.initial_state, 0.0);
    EXPECT_GT(phases.first_step_data, 0.0);
    EXPECT_GT(phases.assembly, 0.0);
    EXPECT_NEAR(sum_of_phases(phases), phases.total, 1e-9);
    // Not a timing bound on a loaded machine: the rest is below any one O(n) phase's share.
    EXPECT_LT(phases.other(), 0.05 * phases.total + 0.005) << describe_setup(phases);
}

// Without setup_start the phases start with the constructor: no input time.
TEST(SetupPhasesRun, WithoutAStartTheInputTakesNoTime) {
    RunOptions options;
    options.backend = solvers::BackendChoice::cpu;
    options.quiet = true;
    options.write_output = false;
    const Simulation simulation(small_heat(), options);
    EXPECT_EQ(simulation.setup_phases().input, 0.0);
    EXPECT_GT(simulation.setup_phases().total, 0.0);
}

// A preparation for the back-end, started before the input is parsed as `simrun FILE` does,
// is joined by the constructor; with the CPU named it starts nothing; a CUDA back-end's making
// is the context phase, a CPU back-end has none.
TEST(SetupPhasesRun, APreparedContextIsJoined) {
    for (const auto choice : {solvers::BackendChoice::cpu, solvers::BackendChoice::automatic}) {
        RunOptions options;
        options.backend = choice;
        options.quiet = true;
        options.write_output = false;
        options.setup_start = std::chrono::steady_clock::now();
        options.backend_preparation = std::make_shared<solvers::BackendPreparation>(choice, 0);
        EXPECT_EQ(options.backend_preparation->started(),
                  choice != solvers::BackendChoice::cpu && solvers::cuda_compiled());
        const Simulation simulation(small_heat(), options);
        const SetupPhases& phases = simulation.setup_phases();
        if (simulation.backend().kind() == solvers::BackendKind::cuda) {
            EXPECT_GT(phases.context, 0.0);
        } else {
            EXPECT_EQ(phases.context, 0.0);
        }
        EXPECT_NEAR(sum_of_phases(phases), phases.total, 1e-9);
        EXPECT_GE(options.backend_preparation->join(), 0.0);  // joined already: no wait
    }
}

// The run file's solver_decisions carry every phase: not negative, adding up to the total (to
// the microseconds they are written in), the values the Simulation holds.
TEST(SetupPhasesRun, TheRunFileCarriesThePhases) {
    const testing::TemporaryDirectory directory;
    RunOptions options;
    options.backend = solvers::BackendChoice::cpu;
    options.quiet = true;
    options.output_directory = directory.path();
    options.setup_start = std::chrono::steady_clock::now();
    Simulation simulation(small_heat(), options);
    simulation.run();
    const testing::RunFile file(directory.path() / "phases.h5");
    ASSERT_TRUE(file.is_open());
    std::map<std::string, std::string> keys;
    std::istringstream lines(file.text("/solver_decisions"));
    for (std::string line; std::getline(lines, line);) {
        const auto equals = line.find(" = ");
        if (line.rfind("setup.", 0) == 0 && equals != std::string::npos) {
            keys[line.substr(6, equals - 6)] = line.substr(equals + 3);
        }
    }
    ASSERT_EQ(keys.size(), 13u);
    EXPECT_EQ(keys.at("compilation_cached"), "false");
    const SetupPhases& phases = simulation.setup_phases();
    double sum = 0.0;
    for (const char* key :
         {"input", "context", "coefficients", "compilation", "assembly", "analysis", "solver",
          "data_term", "initial_state", "first_step_data", "other"}) {
        const double value = std::stod(keys.at(key));
        EXPECT_GE(value, 0.0) << key;
        sum += value;
    }
    const double total = std::stod(keys.at("total"));
    EXPECT_NEAR(sum, total, 1e-5);
    EXPECT_NEAR(total, phases.total, 1e-6);
    EXPECT_NEAR(std::stod(keys.at("assembly")), phases.assembly, 1e-6);
    EXPECT_EQ(std::stod(keys.at("context")), 0.0);
    EXPECT_NEAR(std::stod(keys.at("first_step_data")), phases.first_step_data, 1e-6);
    EXPECT_NEAR(std::stod(keys.at("initial_state")), phases.initial_state, 1e-6);
}

}  // namespace
}  // namespace simrun::framework

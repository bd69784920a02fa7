// The set-up's phases as the header's line and the run file's solver_decisions say them
// (run/setup_phases.hpp).
#include "simrun/framework/run/setup_phases.hpp"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

namespace simrun::framework {
namespace {

// The setup.* keys of solver_decisions text and their values.
std::map<std::string, std::string> setup_keys(const std::string& text) {
    std::map<std::string, std::string> keys;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        const auto equals = line.find(" = ");
        if (line.rfind("setup.", 0) == 0 && equals != std::string::npos) {
            keys[line.substr(6, equals - 6)] = line.substr(equals + 3);
        }
    }
    return keys;
}

TEST(SetupPhases, ACpuRunNamesNeitherContextNorCompilation) {
    const SetupPhases cpu{.input = 0.0012,
                          .assembly = 0.143,
                          .analysis = 0.070,
                          .solver = 0.817,
                          .total = 0.0012 + 0.143 + 0.070 + 0.817};
    EXPECT_EQ(describe_setup(cpu),
              "1.031 s: input 0.001 s, assembly 0.143 s, matrix analysis 0.070 s, solver "
              "set-up 0.817 s");
}

TEST(SetupPhases, AGpuRunNamesContextCompilationAndTheRest) {
    SetupPhases gpu{.input = 0.001,
                    .context = 0.212,
                    .compilation = 0.004,
                    .compilation_cached = true,
                    .assembly = 0.1,
                    .analysis = 0.05,
                    .solver = 0.6,
                    .total = 0.98};
    EXPECT_NEAR(gpu.other(), 0.013, 1e-12);
    EXPECT_EQ(describe_setup(gpu),
              "0.980 s: input 0.001 s, context 0.212 s, compilation 0.004 s (cached), assembly "
              "0.100 s, matrix analysis 0.050 s, solver set-up 0.600 s, other 0.013 s");
    gpu.compilation_cached = false;
    gpu.compilation = 0.2;
    gpu.total = 1.176;
    EXPECT_EQ(describe_setup(gpu),
              "1.176 s: input 0.001 s, context 0.212 s, compilation 0.200 s, assembly 0.100 s, "
              "matrix analysis 0.050 s, solver set-up 0.600 s, other 0.013 s");
}

// Phases measured apart may add up to a hair more than the total: the rest is never negative.
TEST(SetupPhases, TheRestIsNeverNegative) {
    const SetupPhases phases{.assembly = 0.5, .total = 0.4};
    EXPECT_EQ(phases.other(), 0.0);
    EXPECT_EQ(describe_setup(phases).find("other"), std::string::npos);
}

// Every phase written, zero or not, the rest included (its sum with the others checked on a
// whole run: setup_phases_run_test.cpp).
TEST(SetupPhases, DecisionsHoldEveryPhase) {
    SetupPhases phases{.input = 0.0011,
                       .context = 0.3,
                       .compilation = 0.09,
                       .assembly = 0.2,
                       .analysis = 0.07,
                       .solver = 0.5,
                       .total = 1.2};
    const auto keys = setup_keys(setup_decisions(phases));
    EXPECT_EQ(keys, (std::map<std::string, std::string>{{"total", "1.200000"},
                                                        {"input", "0.001100"},
                                                        {"context", "0.300000"},
                                                        {"compilation", "0.090000"},
                                                        {"compilation_cached", "false"},
                                                        {"assembly", "0.200000"},
                                                        {"analysis", "0.070000"},
                                                        {"solver", "0.500000"},
                                                        {"other", "0.038900"}}));
    phases.compilation_cached = true;
    EXPECT_EQ(setup_keys(setup_decisions(phases)).at("compilation_cached"), "true");
}

}  // namespace
}  // namespace simrun::framework

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

// Every phase of a GPU run not zero, 3 ms of them the rest.
SetupPhases every_phase() {
    return {.input = 0.001,
            .context = 0.2,
            .coefficients = 0.031,
            .compilation = 0.004,
            .assembly = 0.1,
            .analysis = 0.05,
            .solver = 0.6,
            .data_term = 0.002,
            .initial_state = 0.021,
            .first_step_data = 0.04,
            .total = 1.052};
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

// The phases after the context: the coefficients checked, the data term, the initial state and
// the first step's data, each named where not zero, in the order the line keeps; the rest is
// what none of them holds.
TEST(SetupPhases, TheCoefficientsTheDataAndTheStateAreNamedApart) {
    SetupPhases phases = every_phase();
    EXPECT_NEAR(phases.other(), 0.003, 1e-12);
    EXPECT_EQ(describe_setup(phases),
              "1.052 s: input 0.001 s, context 0.200 s, coefficient check 0.031 s, compilation "
              "0.004 s, assembly 0.100 s, matrix analysis 0.050 s, solver set-up 0.600 s, data "
              "term 0.002 s, initial state 0.021 s, first step's data 0.040 s, other 0.003 s");
    phases.coefficients = 0.0004;  // not shown at the printed precision, still counted
    phases.data_term = 0.0;
    phases.total = 1.0214;
    EXPECT_EQ(describe_setup(phases),
              "1.021 s: input 0.001 s, context 0.200 s, compilation 0.004 s, assembly 0.100 s, "
              "matrix analysis 0.050 s, solver set-up 0.600 s, initial state 0.021 s, first "
              "step's data 0.040 s, other 0.005 s");
    EXPECT_NEAR(phases.other(), 0.005, 1e-12);
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
    SetupPhases phases = every_phase();
    phases.input = 0.0011;
    const auto keys = setup_keys(setup_decisions(phases));
    EXPECT_EQ(keys, (std::map<std::string, std::string>{{"total", "1.052000"},
                                                        {"input", "0.001100"},
                                                        {"context", "0.200000"},
                                                        {"coefficients", "0.031000"},
                                                        {"compilation", "0.004000"},
                                                        {"compilation_cached", "false"},
                                                        {"assembly", "0.100000"},
                                                        {"analysis", "0.050000"},
                                                        {"solver", "0.600000"},
                                                        {"data_term", "0.002000"},
                                                        {"initial_state", "0.021000"},
                                                        {"first_step_data", "0.040000"},
                                                        {"other", "0.002900"}}));
    phases.compilation_cached = true;
    EXPECT_EQ(setup_keys(setup_decisions(phases)).at("compilation_cached"), "true");
}

}  // namespace
}  // namespace simrun::framework

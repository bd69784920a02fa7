// Observed orders of every problem in 2D and 3D (the files in inputs/verify): central
// differences 2, upwind 1; backward and explicit Euler 1, Crank-Nicolson 2 — each at least the
// expected order minus 0.1, measured by `simrun verify`'s own machinery over 3 levels.
#include "simrun/framework/run/verification.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "simrun/framework/config/config.hpp"

namespace simrun::framework {
namespace {

std::vector<std::string> verification_inputs() {
    std::vector<std::string> names;
    for (const auto& entry :
         std::filesystem::directory_iterator(SIMRUN_SOURCE_DIR "/inputs/verify")) {
        if (entry.path().extension() == ".toml") names.push_back(entry.path().stem().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

class ObservedOrder : public ::testing::TestWithParam<std::string> {};

TEST_P(ObservedOrder, MatchesTheScheme) {
    const std::string path = SIMRUN_SOURCE_DIR "/inputs/verify/" + GetParam() + ".toml";
    const VerificationReport report =
        verify([&] { return Config::from_file(path); }, 3, solvers::BackendChoice::cpu);
    ASSERT_EQ(report.levels.size(), 3u);
    const std::map<std::string, double> space = {{"central", 2.0}, {"upwind", 1.0}};
    const std::map<std::string, double> time = {
        {"backward_euler", 1.0}, {"explicit_euler", 1.0}, {"crank_nicolson", 2.0}};
    const double expected_space = space.at(report.scheme_space);
    EXPECT_GE(report.observed_order_space, expected_space - 0.1) << format_table(report);
    if (report.scheme_time == "steady") {
        EXPECT_FALSE(report.observed_order_time.has_value());
    } else {
        ASSERT_TRUE(report.observed_order_time.has_value());
        // With dt refined at the scheme's rate the error falls like dt^p_t; for upwind the
        // spatial error (order 1, dt ratio 2) bounds what the time order can show.
        const double expected_time =
            report.scheme_space == "upwind" ? 1.0 : time.at(report.scheme_time);
        EXPECT_GE(*report.observed_order_time, expected_time - 0.1) << format_table(report);
    }
    for (std::size_t k = 1; k < report.levels.size(); ++k) {
        EXPECT_LT(report.levels[k].error_l2, report.levels[k - 1].error_l2);
    }
}

INSTANTIATE_TEST_SUITE_P(Inputs, ObservedOrder, ::testing::ValuesIn(verification_inputs()));

}  // namespace
}  // namespace simrun::framework

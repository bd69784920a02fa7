// The run's typed settings: each word of [time] scheme and of [solver] method, preconditioner
// and format is read into its enum (the words are the enums' one list), and a wrong word is an
// input error naming the key and the accepted words.
#include <gtest/gtest.h>

#include <string>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/problem/run_spec.hpp"

namespace simrun::framework {
namespace {

TEST(RunSettings, EverySchemeWordIsReadIntoItsScheme) {
    for (const auto& entry : solvers::enum_names<TimeScheme>) {
        const bool steady = entry.value == TimeScheme::steady;
        const std::string text = "[time]\nscheme = \"" + std::string(entry.name) + "\"\n" +
                                 (steady ? "" : "dt = 0.1\nend = 1.0\n");
        const Config config = Config::from_string(text, "run.toml");
        const TimeParameters time = parse_time(config.section("time"), TimeScheme::steady);
        EXPECT_EQ(time.scheme, entry.value) << entry.name;
        EXPECT_EQ(time.theta, entry.value == TimeScheme::crank_nicolson ? 0.5 : 1.0);
        EXPECT_EQ(time.steady(), steady);
        EXPECT_EQ(time.steps, steady ? 0 : 10);
    }
    const Config none = Config::from_string("[time]\n", "run.toml");
    EXPECT_EQ(parse_time(none.section("time"), TimeScheme::steady).scheme, TimeScheme::steady);
}

TEST(RunSettings, AWrongSchemeNamesTheKeyAndEveryScheme) {
    const Config config = Config::from_string("[time]\nscheme = \"leapfrog\"\n", "run.toml");
    try {
        parse_time(config.section("time"), TimeScheme::backward_euler);
        ADD_FAILURE() << "leapfrog was accepted";
    } catch (const InputError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("time.scheme"), std::string::npos) << message;
        for (const auto& entry : solvers::enum_names<TimeScheme>) {
            EXPECT_NE(message.find(entry.name), std::string::npos) << message;
        }
    }
}

TEST(RunSettings, SolverWordsAreReadIntoTheRequestAndTheCriteria) {
    for (const auto& method : solvers::enum_names<solvers::Method>) {
        const Config config =
            Config::from_string("[solver]\nmethod = \"" + std::string(method.name) +
                                    "\"\nformat = \"ell\"\nrtol = 1e-6\nmax_iterations = 77\n",
                                "run.toml");
        const SolverParameters solver = parse_solver(config.section("solver"));
        ASSERT_TRUE(solver.request.method.has_value());
        EXPECT_EQ(*solver.request.method, method.value);
        if (method.value == solvers::Method::cg) {
            // cg means CG with no preconditioner unless one is named, at every entry point.
            EXPECT_EQ(solver.request.preconditioner, solvers::PreconditionerKind::none);
        } else {
            EXPECT_FALSE(solver.request.preconditioner.has_value());  // auto
        }
        EXPECT_EQ(solver.request.format, solvers::Format::ell);
        EXPECT_EQ(solver.method.criteria.relative_tolerance, 1e-6);
        EXPECT_EQ(solver.method.criteria.absolute_tolerance, 0.0);
        EXPECT_EQ(solver.method.criteria.max_iterations, 77);
    }
    // pcg: CG with the preconditioner named or, as here, chosen; refused with none.
    const SolverParameters pcg = parse_solver(
        Config::from_string("[solver]\nmethod = \"pcg\"\n", "run.toml").section("solver"));
    EXPECT_EQ(pcg.request.method, solvers::Method::cg);
    EXPECT_FALSE(pcg.request.preconditioner.has_value());
    EXPECT_THROW(
        parse_solver(Config::from_string("[solver]\nmethod = \"pcg\"\npreconditioner = \"none\"\n",
                                         "run.toml")
                         .section("solver")),
        InputError);
    const SolverParameters defaults =
        parse_solver(Config::from_string("[solver]\n", "run.toml").section("solver"));
    EXPECT_FALSE(defaults.request.method || defaults.request.preconditioner ||
                 defaults.request.format);
    EXPECT_EQ(defaults.method.criteria.relative_tolerance,
              solvers::StoppingCriteria{}.relative_tolerance);
    EXPECT_THROW(
        parse_solver(Config::from_string("[solver]\npreconditioner = \"ilu\"\n", "run.toml")
                         .section("solver")),
        InputError);
}

TEST(RunSettings, AToleranceThatNoSolveCanReachIsRefusedAtItsPlace) {
    try {
        parse_solver(
            Config::from_string("[solver]\nrtol = 1e-300\n", "run.toml").section("solver"));
        ADD_FAILURE() << "rtol = 1e-300 was accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("run.toml:2:8: key 'solver.rtol': 1e-300 is below "
                                              "the unit roundoff of double",
                                              0),
                  0u)
            << e.what();
    }
    // The smallest reachable tolerance and an absolute one alone are accepted.
    EXPECT_NO_THROW(parse_solver(
        Config::from_string("[solver]\nrtol = 2.3e-16\n", "run.toml").section("solver")));
    EXPECT_NO_THROW(parse_solver(
        Config::from_string("[solver]\nrtol = 0\natol = 1e-300\n", "run.toml").section("solver")));
    EXPECT_THROW(
        parse_solver(Config::from_string("[solver]\natol = inf\n", "run.toml").section("solver")),
        InputError);
}

TEST(RunSettings, CompressionWordsAreReadIntoTheirEnum) {
    for (const auto& entry : solvers::enum_names<VtkCompression>) {
        const Config config = Config::from_string(
            "[output]\ncompression = \"" + std::string(entry.name) + "\"\n", "run.toml");
        EXPECT_EQ(parse_output(config.section("output")).compression, entry.value);
    }
    EXPECT_EQ(parse_output(Config::from_string("", "run.toml").section("output")).compression,
              VtkCompression::lz4);
    try {
        parse_output(Config::from_string("[output]\ncompression = \"gzip\"\n", "run.toml")
                         .section("output"));
        ADD_FAILURE() << "gzip was accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "run.toml:2:15: key 'output.compression': 'gzip' is not one of: lz4, zlib, none");
    }
}

}  // namespace
}  // namespace simrun::framework

// How a run ends where its data stop being finite, on one process and over ranks (threads as
// ranks: support/thread_ranks.hpp), as the command line's exit codes tell it: before anything
// is written an input error (exit 2) that every rank raises alike; once steps are written a
// failure of the computation (exit 1), agreed by every rank too, though one rank's box alone
// holds the node.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/distributed/agreement.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/framework/run/simulation.hpp"
#include "support/thread_ranks.hpp"

namespace simrun::framework {
namespace {

// A 9 x 9 heat run of 5 steps of 0.01 with `top` the top side's Dirichlet value (the top plane
// lies in the last rank's slab).
RunSpec heat_with_top(const std::string& top) {
    const Config config = Config::from_string(
        "[problem]\ntype = \"heat\"\nalpha = 0.1\ninitial = \"sin(pi*x)*sin(pi*y)\"\n[grid]\n"
        "nx = 9\nny = 9\n[boundary]\ntop = \"" +
            top + "\"\nall = \"0\"\n[time]\ndt = 0.01\nend = 0.05\n",
        "test.toml");
    return parse_run_spec(config);
}

RunOptions quiet_cpu_options(std::shared_ptr<const solvers::Communicator> ranks) {
    RunOptions options;
    options.backend = solvers::BackendChoice::cpu;
    options.quiet = true;
    options.write_output = false;
    options.ranks = std::move(ranks);
    return options;
}

// What each of `count` thread ranks raised while constructing and running a Simulation of
// heat_with_top(top): the agreed failure, or none.
std::vector<std::optional<AgreedFailure>> failures_over_ranks(int count, const std::string& top) {
    std::vector<std::optional<AgreedFailure>> failures(static_cast<std::size_t>(count));
    testing::ThreadRanks ranks(count);
    ranks.run([&](std::shared_ptr<const solvers::Communicator> rank) {
        const auto r = static_cast<std::size_t>(rank->rank());
        try {
            Simulation simulation(heat_with_top(top), quiet_cpu_options(rank));
            simulation.run();
        } catch (const AgreedFailure& failure) {
            failures[r] = failure;
        }
    });
    return failures;
}

// Infinite from t = 0.035 on: the step whose data are at t = 0.04 (the fourth) stops the run.
constexpr const char* mid_run = "t > 0.035 ? 1/0 : 0";
constexpr const char* mid_run_message =
    "test.toml: key 'boundary': a Dirichlet boundary value is inf at (0, 1) at t = 0.04: no step "
    "is computed from it; outputs up to the previous written step are complete";

TEST(RunFailure, DataNotFiniteMidRunIsAFailureNotAnInputError) {
    Simulation simulation(heat_with_top(mid_run), quiet_cpu_options(solvers::single_process()));
    try {
        simulation.run();
        ADD_FAILURE() << "the run went on";
    } catch (const InputError& e) {
        ADD_FAILURE() << "an input error (exit 2): " << e.what();
    } catch (const DataNotFinite& e) {
        EXPECT_EQ(std::string(e.what()), mid_run_message);
    }
    EXPECT_EQ(simulation.integrator().step(), 3);
}

TEST(RunFailure, DataNotFiniteMidRunIsAFailureOnEveryRank) {
    for (int count : {2, 3}) {
        SCOPED_TRACE(count);
        for (const auto& failure : failures_over_ranks(count, mid_run)) {
            ASSERT_TRUE(failure.has_value());
            EXPECT_EQ(failure->kind(), AgreedFailure::Kind::failure);
            EXPECT_EQ(failure->rank(), count - 1);  // the top plane's
            EXPECT_EQ(std::string(failure->what()), mid_run_message);
        }
    }
}

// At t = 0 the value goes into step 0 itself: refused while the run is set up, an input error on
// every rank, with the one-process message.
TEST(RunFailure, DirichletValueNotFiniteAtTimeZeroIsAnInputErrorOnEveryRank) {
    const std::string top = "log(-t)";
    try {
        Simulation simulation(heat_with_top(top), quiet_cpu_options(solvers::single_process()));
        ADD_FAILURE() << "set up";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "test.toml: key 'boundary': a Dirichlet boundary value is -inf at (0, 1) at t = "
                  "0: no step is computed from it");
        for (const auto& failure : failures_over_ranks(3, top)) {
            ASSERT_TRUE(failure.has_value());
            EXPECT_EQ(failure->kind(), AgreedFailure::Kind::input);
            EXPECT_EQ(std::string(failure->what()), e.what());
        }
    }
}

}  // namespace
}  // namespace simrun::framework

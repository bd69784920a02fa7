// How a run ends where its data stop being finite, on one process and over ranks (threads as
// ranks: support/thread_ranks.hpp), as the command line's exit codes tell it: before anything
// is written an input error (exit 2) that every rank raises alike; once steps are written a
// failure of the computation (exit 1), agreed by every rank too, though one rank's box alone
// holds the node.
#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/distributed/agreement.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/framework/run/simulation.hpp"
#include "simrun/framework/time/time_integrator.hpp"
#include "support/thread_ranks.hpp"

namespace simrun::framework {
namespace {

// A 9 x 9 heat run of 5 steps of 0.01 of `scheme` with `top` the top side's Dirichlet value
// (the top plane lies in the last rank's slab) and `source`.
RunSpec heat_with_top(const std::string& top, const std::string& source = "0",
                      const std::string& scheme = "backward_euler") {
    const Config config = Config::from_string(
        "[problem]\ntype = \"heat\"\nalpha = 0.1\ninitial = \"sin(pi*x)*sin(pi*y)\"\nsource = \"" +
            source + "\"\n[grid]\nnx = 9\nny = 9\n[boundary]\ntop = \"" + top +
            "\"\nall = \"0\"\n[time]\nscheme = \"" + scheme + "\"\ndt = 0.01\nend = 0.05\n",
        "test.toml");
    return parse_run_spec(config);
}

constexpr const char* time_schemes[] = {"explicit_euler", "backward_euler", "crank_nicolson"};

RunOptions quiet_cpu_options(std::shared_ptr<const solvers::Communicator> ranks) {
    RunOptions options;
    options.backend = solvers::BackendChoice::cpu;
    options.quiet = true;
    options.write_output = false;
    options.ranks = std::move(ranks);
    return options;
}

// What each of `count` thread ranks raised while constructing and running a Simulation of
// `make()` (heat_with_top(top) by default): the agreed failure, or none.
std::vector<std::optional<AgreedFailure>> failures_over_ranks(
    int count, const std::string& top, const std::function<RunSpec()>& make = nullptr) {
    std::vector<std::optional<AgreedFailure>> failures(static_cast<std::size_t>(count));
    testing::ThreadRanks ranks(count);
    ranks.run([&](std::shared_ptr<const solvers::Communicator> rank) {
        const auto r = static_cast<std::size_t>(rank->rank());
        try {
            Simulation simulation(make ? make() : heat_with_top(top), quiet_cpu_options(rank));
            simulation.run();
        } catch (const AgreedFailure& failure) {
            failures[r] = failure;
        }
    });
    return failures;
}

// The message of the InputError that refuses `spec` while its run is set up with `options`
// ("set up" where none does).
std::string setup_refusal(RunSpec spec, const RunOptions& options) {
    try {
        Simulation simulation(std::move(spec), options);
    } catch (const InputError& e) {
        return e.what();
    }
    return "set up";
}

// The message of the first step's data error `check` (check_time_integrator, over blocks of
// about `block_nodes` nodes) finds for `spec` ("none" where it finds none).
std::string check_refusal(const RunSpec& spec, std::int64_t block_nodes = std::int64_t{1} << 20) {
    const IntegratorCheck check = check_time_integrator(*spec.grid, *spec.problem, *spec.boundary,
                                                        spec.time, spec.solver, block_nodes);
    if (!check.first_step_error) return "none";
    try {
        std::rethrow_exception(check.first_step_error);
    } catch (const StepDataError& e) {
        return e.what();
    }
}

// Infinite from t = 0.035 on: the step whose data are at t = 0.04 (the fourth) stops the run,
// which writes no output (quiet_cpu_options): the message says so, and claims no output.
constexpr const char* mid_run = "t > 0.035 ? 1/0 : 0";
constexpr const char* mid_run_message =
    "test.toml: key 'boundary': a Dirichlet boundary value is inf at (0, 1) at t = 0.04: no step "
    "is computed from it; nothing was written (output is off)";

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

// Heat's problem, whose source() throws an InputError that is not about the data's values
// from t = `from` on (as a solver's set-up failing in a step would): the step fails with it.
class ProblemFailingFrom : public Problem {
public:
    ProblemFailingFrom(std::unique_ptr<Problem> heat, double from)
        : heat_(std::move(heat)), from_(from) {}
    std::string description() const override { return heat_->description(); }
    StencilCoefficients stencil(const Grid& grid, std::int64_t i, std::int64_t j,
                                std::int64_t k) const override {
        return heat_->stencil(grid, i, j, k);
    }
    void initial_condition(const Grid& grid, const Box& box, std::span<double> u) const override {
        heat_->initial_condition(grid, box, u);
    }
    void source(const Grid& grid, const Box& box, double t, std::span<double> f) const override {
        if (t > from_) throw InputError("key 'solver': a set-up that failed during a step");
        heat_->source(grid, box, t, f);
    }
    bool source_depends_on_time() const override { return true; }

private:
    std::unique_ptr<Problem> heat_;
    double from_;
};

RunSpec heat_failing_from(double from) {
    RunSpec spec = heat_with_top("0");
    spec.problem = std::make_unique<ProblemFailingFrom>(std::move(spec.problem), from);
    return spec;
}

// Only the data's values turning non-finite become a failure of the computation (exit 1): any
// other input error met in a step passes as it is (it is no statement about the data), on one
// process and agreed over ranks.
TEST(RunFailure, AnInputErrorInAStepOtherThanTheDatasStaysAnInputError) {
    Simulation simulation(heat_failing_from(0.025), quiet_cpu_options(solvers::single_process()));
    try {
        simulation.run();
        ADD_FAILURE() << "the run went on";
    } catch (const DataNotFinite& e) {
        ADD_FAILURE() << "turned into data not finite: " << e.what();
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "test.toml: key 'solver': a set-up that failed during a step");
    }
    EXPECT_EQ(simulation.integrator().step(), 2);  // the third step's data are at t = 0.03
    for (const auto& failure :
         failures_over_ranks(2, "", [] { return heat_failing_from(0.025); })) {
        ASSERT_TRUE(failure.has_value());
        EXPECT_EQ(failure->kind(), AgreedFailure::Kind::input);
        EXPECT_EQ(std::string(failure->what()),
                  "test.toml: key 'solver': a set-up that failed during a step");
    }
}

// Every time the first step evaluates its data is checked before step 0 is written: the
// source infinite from t = 0.005 on is met by Crank-Nicolson's and explicit Euler's first step
// (at t = 0 and at t = dt = 0.01) as by backward Euler's (at dt): refused while the run is set
// up, an input error naming t = dt, where Crank-Nicolson and explicit Euler checked t = 0 only
// and failed in the first step; `check` (check_time_integrator) finds the same error.
TEST(RunFailure, DataNotFiniteAtAnyTimeOfTheFirstStepIsRefusedBeforeStepZero) {
    const std::string source = "t > 0.005 ? 1/0 : 0";
    const std::string message =
        "key 'problem.source': the source is inf at (0.125, 0.125) at t = 0.01: no step is "
        "computed from it";
    for (const char* scheme : time_schemes) {
        SCOPED_TRACE(scheme);
        EXPECT_EQ(setup_refusal(heat_with_top("0", source, scheme),
                                quiet_cpu_options(solvers::single_process())),
                  "test.toml: " + message);
        EXPECT_EQ(check_refusal(heat_with_top("0", source, scheme)), message);
    }
}

// Crank-Nicolson's first step evaluates its data at t = 0, then at t = dt, over the whole grid:
// a source infinite at t = 0 at the top rows and at t = dt at the bottom rows fails at t = 0.
// `check`, block by block (a plane each), finds that same error, though its first block meets
// only the one at t = dt.
TEST(RunFailure, CheckFindsTheFirstStepsEarliestDataErrorAcrossBlocks) {
    const std::string source = "(t < 0.005 && y > 0.8) || (t > 0.005 && y < 0.3) ? 1/0 : 0";
    const std::string ran = setup_refusal(heat_with_top("0", source, "crank_nicolson"),
                                          quiet_cpu_options(solvers::single_process()));
    EXPECT_EQ(ran,
              "test.toml: key 'problem.source': the source is inf at (0.125, 0.875) at t = 0: no "
              "step is computed from it");
    for (const std::int64_t block_nodes : {std::int64_t{1}, std::int64_t{1} << 20}) {
        EXPECT_EQ("test.toml: " +
                      check_refusal(heat_with_top("0", source, "crank_nicolson"), block_nodes),
                  ran);
    }
}

// The device's own check of the first step's data (a run whose back-end forms each step's data
// from the compiled expressions): the same refusal as on the host, for every scheme. Skipped
// without a CUDA device, or where the data are formed on the host.
TEST(RunFailure, TheDeviceChecksTheDataOfTheFirstStepItForms) {
    RunOptions options = quiet_cpu_options(solvers::single_process());
    options.backend = solvers::BackendChoice::cuda;
    for (const char* scheme : time_schemes) {
        SCOPED_TRACE(scheme);
        std::string details;
        try {
            Simulation fine(heat_with_top("0", "t > 1 ? 1/0 : x", scheme), options);
            details = fine.integrator().data_details();
        } catch (const std::exception& e) {
            GTEST_SKIP() << "no CUDA back-end: " << e.what();
        }
        if (!details.starts_with("on the device")) GTEST_SKIP() << "data " << details;
        try {
            Simulation simulation(heat_with_top("0", "t > 0.005 ? 1/0 : x", scheme), options);
            ADD_FAILURE() << "set up";
        } catch (const InputError& e) {
            EXPECT_EQ(std::string(e.what()),
                      "test.toml: key 'problem.source': the source is inf at (0.125, 0.125) at t "
                      "= 0.01: no step is computed from it");
        }
    }
}

// A steady Poisson run (data at t = 0 alone) on `grid` with `source` and `boundary`.
RunSpec steady_poisson(const std::string& source, const std::string& boundary,
                       const std::string& grid = "nx = 9\nny = 9\n") {
    return parse_run_spec(Config::from_string("[problem]\ntype = \"poisson\"\nsource = \"" +
                                                  source + "\"\n[grid]\n" + grid + "[boundary]\n" +
                                                  boundary + "all = \"0\"\n",
                                              "test.toml"));
}

// The steady solve's data not finite (source, Dirichlet, Neumann) refuse the run while it is
// set up, on the CPU and on the device that forms them (where there is one), as `check` does.
TEST(RunFailure, TheSteadyRunRefusesDataNotFiniteWhereverItFormsThem) {
    const std::pair<std::pair<const char*, const char*>, const char*> cases[] = {
        {{"1/(x - 0.5)", ""},
         "key 'problem.source': the source is inf at (0.5, 0.125) at t = 0: no step is computed "
         "from it"},
        {{"1", "top = \"1/(x - 0.5)\"\n"},
         "key 'boundary': a Dirichlet boundary value is inf at (0.5, 1) at t = 0: no step is "
         "computed from it"},
        {{"1", "top = { type = \"neumann\", value = \"1/(x - 0.5)\" }\n"},
         "key 'boundary': a Neumann or Robin boundary value is inf at (0.5, 1) at t = 0: no step "
         "is computed from it"},
    };
    for (const auto& [input, message] : cases) {
        SCOPED_TRACE(message);
        const auto spec = [&input] { return steady_poisson(input.first, input.second); };
        EXPECT_EQ(setup_refusal(spec(), quiet_cpu_options(solvers::single_process())),
                  std::string("test.toml: ") + message);
        EXPECT_EQ(check_refusal(spec()), message);
        if (solvers::cuda_compiled() && solvers::cuda_device_count() > 0) {
            RunOptions on_device = quiet_cpu_options(solvers::single_process());
            on_device.backend = solvers::BackendChoice::cuda;
            EXPECT_EQ(setup_refusal(spec(), on_device), std::string("test.toml: ") + message);
        }
    }
}

// The Dirichlet values a run starts from are found on the grid's sides alone: in 3D, on one
// process, over ranks (each its slab) and by `check` plane by plane, the lowest node whose value
// is not finite is named, a node on two sides taking the later side's value (bottom over left).
TEST(RunFailure, TheLowestDirichletNodeNotFiniteIsNamedOnEveryBox) {
    const auto spec = [] {
        return steady_poisson("1", "left = \"z > 0.6 ? 1/0 : 0\"\n", "nx = 9\nny = 9\nnz = 9\n");
    };
    const std::string message =
        "key 'boundary': a Dirichlet boundary value is inf at (0, 0.125, 0.625) at t = 0: no "
        "step is computed from it";
    EXPECT_EQ(setup_refusal(spec(), quiet_cpu_options(solvers::single_process())),
              "test.toml: " + message);
    for (const auto& failure : failures_over_ranks(3, "", spec)) {
        ASSERT_TRUE(failure.has_value());
        EXPECT_EQ(std::string(failure->what()), "test.toml: " + message);
    }
    for (const std::int64_t block_nodes : {std::int64_t{1}, std::int64_t{1} << 20}) {
        EXPECT_EQ(check_refusal(spec(), block_nodes), message);
    }
}

}  // namespace
}  // namespace simrun::framework

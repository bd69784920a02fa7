// The command line end to end: a run writes readable outputs equal to the computed field, and
// each kind of bad input exits with code 2, a message naming the place, and no output.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>
#include <string>
#include <vector>

#include "simrun/framework/config.hpp"
#include "simrun/framework/run_spec.hpp"
#include "simrun/framework/simulation.hpp"
#include "simrun/solvers/backend.hpp"
#include "support/run_simrun.hpp"

namespace simrun {
namespace {

using testing::run_simrun;
using testing::TemporaryDirectory;

const std::string good_input = R"toml([problem]
type = "heat"
alpha = 0.1
initial = "exp(-40*((x-0.5)^2 + (y-0.4)^2))"
source = "x*y*t"

[grid]
nx = 33
ny = 25

[boundary]
left = "0.2*y"
all = "0"

[time]
dt = 0.01
end = 0.05

[output]
directory = "out"
every = 2
)toml";

std::vector<double> read_h5_field(const std::filesystem::path& file, const std::string& dataset,
                                  double* time) {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    EXPECT_GE(f, 0);
    const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
    const hid_t space = H5Dget_space(d);
    std::vector<double> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    const std::string group = dataset.substr(0, dataset.rfind('/'));
    const hid_t attribute = H5Aopen_by_name(f, group.c_str(), "time", H5P_DEFAULT, H5P_DEFAULT);
    H5Aread(attribute, H5T_NATIVE_DOUBLE, time);
    H5Aclose(attribute);
    H5Sclose(space);
    H5Dclose(d);
    H5Fclose(f);
    return values;
}

TEST(CommandLine, RunWritesSeriesWhoseLastStepEqualsTheComputedField) {
    TemporaryDirectory dir;
    const auto input = dir.write("run.toml", good_input);
    const auto result = run_simrun("run.toml --backend cpu", dir.path());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("5 steps"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("cg + jacobi"), std::string::npos) << result.out;
    for (const char* name : {"heat.pvd", "heat.h5", "heat.xmf", "heat_000000.vti",
                             "heat_000002.vti", "heat_000004.vti", "heat_000005.vti"}) {
        EXPECT_TRUE(std::filesystem::exists(dir.path() / "out" / name)) << name;
    }
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "out" / "heat_000001.vti"));

    // The same run in this process gives the field the file holds (same code, same CPU).
    framework::RunOptions options;
    options.backend = solvers::BackendChoice::cpu;
    options.quiet = true;
    options.write_output = false;
    framework::Simulation simulation(framework::parse_run_spec(framework::Config::from_file(input)),
                                     options);
    simulation.run();
    double time = -1;
    const auto stored = read_h5_field(dir.path() / "out" / "heat.h5", "/steps/000005/u", &time);
    EXPECT_DOUBLE_EQ(time, 0.05);
    EXPECT_EQ(stored, simulation.field());
}

TEST(CommandLine, SetOverridesAndOutputDirectory) {
    TemporaryDirectory dir;
    dir.write("run.toml", good_input);
    const auto result = run_simrun(
        "run.toml --backend cpu --quiet --set time.end=0.02 --set 'output.basename=\"h\"' "
        "--output elsewhere",
        dir.path());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(result.out.empty()) << "--quiet printed: " << result.out;
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "elsewhere" / "h_000002.vti"));
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "elsewhere" / "h_000003.vti"));
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));
}

TEST(CommandLine, CheckValidatesWithoutWriting) {
    TemporaryDirectory dir;
    dir.write("run.toml", good_input);
    const auto good = run_simrun("check run.toml", dir.path());
    EXPECT_EQ(good.exit_code, 0) << good.err;
    EXPECT_NE(good.out.find("OK"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));
    const auto bad = run_simrun("check run.toml --set grid.nx=2", dir.path());
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("grid.nx"), std::string::npos) << bad.err;
}

// Bad input: the exit code is 2, stderr names the place, and nothing is written.
struct BadInput {
    std::string name;
    std::string arguments;             // after the input file name
    std::string replace;               // text of good_input to replace ...
    std::string with;                  // ... with this
    std::vector<std::string> message;  // each must appear in stderr
};

void PrintTo(const BadInput& c, std::ostream* os) { *os << c.name; }

class BadInputs : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputs, ExitTwoWithMessageAndNoOutput) {
    const BadInput& c = GetParam();
    TemporaryDirectory dir;
    std::string text = good_input;
    if (!c.replace.empty()) {
        const auto at = text.find(c.replace);
        ASSERT_NE(at, std::string::npos) << c.replace;
        text.replace(at, c.replace.size(), c.with);
    }
    dir.write("run.toml", text);
    const auto result = run_simrun("run.toml --backend cpu " + c.arguments, dir.path());
    EXPECT_EQ(result.exit_code, 2) << result.err;
    for (const auto& part : c.message) {
        EXPECT_NE(result.err.find(part), std::string::npos) << "stderr lacks '" << part << "':\n"
                                                            << result.err;
    }
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "out")) << "output written on bad input";
}

INSTANTIATE_TEST_SUITE_P(
    CommandLine, BadInputs,
    ::testing::Values(
        BadInput{"SyntaxError", "", "nx = 33", "nx = = 33", {"run.toml:8:", "syntax"}},
        BadInput{"UnknownKey",
                 "",
                 "ny = 25",
                 "ny = 25\nnxx = 3",
                 {"run.toml:10:", "grid.nxx", "did you mean"}},
        BadInput{
            "WrongType", "", "nx = 33", "nx = \"many\"", {"run.toml:8:", "grid.nx", "integer"}},
        BadInput{"TooFewNodes", "", "nx = 33", "nx = 0", {"run.toml:8:", "grid.nx", ">= 3"}},
        BadInput{"NegativeTimeStep",
                 "",
                 "dt = 0.01",
                 "dt = -0.01",
                 {"run.toml:16:", "time.dt", "positive"}},
        BadInput{"EndNotWholeSteps", "", "end = 0.05", "end = 0.055", {"time.end", "whole number"}},
        BadInput{"UnknownProblem",
                 "",
                 "type = \"heat\"",
                 "type = \"cooling\"",
                 {"run.toml:2:", "problem.type", "cooling", "heat"}},
        BadInput{"UnknownMethod",
                 "",
                 "[output]",
                 "[solver]\nmethod = \"gmres\"\n[output]",
                 {"solver.method", "gmres"}},
        BadInput{"MalformedExpression",
                 "",
                 "source = \"x*y*t\"",
                 "source = \"x*(y*t\"",
                 {"run.toml:5:", "problem.source", "position"}},
        BadInput{"UnknownVariable",
                 "",
                 "source = \"x*y*t\"",
                 "source = \"x*w\"",
                 {"problem.source", "'w'"}},
        BadInput{
            "MissingBoundary", "", "all = \"0\"", "", {"run.toml:11:", "boundary.right", "all ="}},
        BadInput{"SetWithoutEquals", "--set grid.nx", "", "", {"--set", "key=value"}},
        BadInput{"SetBadValue", "--set grid.ny=1", "", "", {"--set grid.ny=1", ">= 3"}},
        BadInput{"UnknownOption", "--colour", "", "", {"--colour"}},
        BadInput{"BadBackend", "--backend tpu", "", "", {"tpu"}},
        BadInput{"UnstableExplicitStep",
                 "--set time.scheme=explicit_euler",
                 "",
                 "",
                 {"run.toml:16:", "time.dt", "unstable", "largest stable step is 0.00"}},
        BadInput{"UnknownBoundaryType",
                 "",
                 "all = \"0\"",
                 "all = { type = \"periodic\", value = \"0\" }",
                 {"boundary.all.type", "periodic"}},
        BadInput{"SteadyHeat", "--set time.scheme=steady --set time.dt=1", "", "", {"time"}},
        BadInput{"MissingImage",
                 "",
                 "initial = \"exp(-40*((x-0.5)^2 + (y-0.4)^2))\"",
                 "initial_image = \"nowhere.png\"",
                 {"problem.initial_image", "nowhere.png"}}),
    [](const ::testing::TestParamInfo<BadInput>& param) { return param.param.name; });

TEST(CommandLine, MissingInputFile) {
    TemporaryDirectory dir;
    const auto result = run_simrun("nowhere.toml", dir.path());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("nowhere.toml"), std::string::npos) << result.err;
}

TEST(CommandLine, CudaBackendWithoutGpuIsAUsageError) {
    if (solvers::cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present: nothing to refuse";
    TemporaryDirectory dir;
    dir.write("run.toml", good_input);
    const auto result = run_simrun("run.toml --backend cuda", dir.path());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("CUDA"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("--backend cpu"), std::string::npos) << result.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));
}

TEST(CommandLine, NonConvergenceExitsOneAndKeepsEarlierSteps) {
    TemporaryDirectory dir;
    std::string text = good_input;
    text.replace(text.find("[output]"), 8, "[solver]\nmax_iterations = 1\nrtol = 1e-14\n[output]");
    dir.write("run.toml", text);
    const auto result = run_simrun("run.toml --backend cpu", dir.path());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_NE(result.err.find("did not converge"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("max_iterations"), std::string::npos) << result.err;
    // The initial step was written and is complete; no step after the failure exists.
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "out" / "heat_000000.vti"));
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "out" / "heat_000002.vti"));
}

}  // namespace
}  // namespace simrun

// The command line end to end: a run writes readable outputs equal to the computed field, and
// each kind of bad input exits with code 2, a message naming the place, and no output. A run
// continued with --restart ends with the same bits as the uninterrupted run, and a run killed
// at any moment leaves every step it reported readable.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/wait.h>
#include <vtkDataArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkXMLImageDataReader.h>

#include <csignal>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/framework/run/simulation.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "support/run_file.hpp"
#include "support/run_simrun.hpp"
#include "support/stopped_run.hpp"

namespace simrun {
namespace {

using testing::run_simrun;
using testing::RunFile;
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

std::string step_group(std::int64_t step) {
    char name[32];
    std::snprintf(name, sizeof name, "/steps/%06lld", static_cast<long long>(step));
    return name;
}

struct ListedStep {
    double time;
    std::string file;  // the .vti (.pvd) or the "FILE.h5:/steps/NNNNNN/u" item (.xmf)
};

// The (time, file) entries of a .pvd, in order.
std::vector<ListedStep> pvd_entries(const std::filesystem::path& pvd) {
    const std::string text = testing::read_text(pvd);
    const std::regex dataset(R"re(<DataSet timestep="([^"]+)"[^>]*file="([^"]+)")re");
    std::vector<ListedStep> entries;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), dataset);
         it != std::sregex_iterator(); ++it) {
        entries.push_back({std::stod((*it)[1].str()), (*it)[2].str()});
    }
    return entries;
}

// The (time, HDF5 item) of each step of an .xmf, in order (one field per step here).
std::vector<ListedStep> xdmf_entries(const std::filesystem::path& xmf) {
    const std::string text = testing::read_text(xmf);
    const std::regex step(R"re(<Time Value="([^"]+)"/>[\s\S]*?Format="HDF">([^<]+)<)re");
    std::vector<ListedStep> entries;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), step);
         it != std::sregex_iterator(); ++it) {
        entries.push_back({std::stod((*it)[1].str()), (*it)[2].str()});
    }
    return entries;
}

// The step index in a file or item name ending in "NNNNNN.vti" or "NNNNNN/u".
std::int64_t step_of(const std::string& name) {
    std::smatch match;
    EXPECT_TRUE(std::regex_search(name, match, std::regex(R"re(([0-9]{6,})(\.vti|/u)$)re")))
        << name;
    return match.empty() ? -1 : std::stoll(match[1].str());
}

TEST(CommandLine, RunWritesSeriesWhoseLastStepEqualsTheComputedField) {
    TemporaryDirectory dir;
    const auto input = dir.write("run.toml", good_input);
    const auto result = run_simrun("run.toml --backend cpu", dir.path());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("5 steps"), std::string::npos) << result.out;
    std::smatch per_step;
    ASSERT_TRUE(std::regex_search(
        result.out, per_step,
        std::regex("\\(([0-9.e+-]+) ms per step, solver ([0-9.e+-]+) ms, data ([0-9.e+-]+) ms\\)")))
        << result.out;
    // The solve and the data term are disjoint parts of a step.
    EXPECT_LE(std::stod(per_step[2]) + std::stod(per_step[3]), std::stod(per_step[1]));
    // Dirichlet sides are identity rows, which keep the constant-coefficient heat operator in
    // the stencil format with no Jacobi pass.
    EXPECT_NE(result.out.find("cg + none"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("stencil: constant coefficients"), std::string::npos) << result.out;
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
                 "[solver]\nmethod = \"minres\"\n[output]",
                 {"solver.method", "minres"}},
        BadInput{"RestartLengthOutOfRange",
                 "",
                 "[output]",
                 "[solver]\nmethod = \"gmres\"\nrestart = 0\n[output]",
                 {"solver.restart", "[1, 128]", "got 0"}},
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
                 {"run.toml:16:", "time.dt", "unstable", "largest step proved stable is 0.00"}},
        BadInput{"UnknownBoundaryType",
                 "",
                 "all = \"0\"",
                 "all = { type = \"periodic\", value = \"0\" }",
                 {"boundary.all.type", "periodic"}},
        BadInput{"SteadyHeat", "--set time.scheme=steady --set time.dt=1", "", "", {"time"}},
        BadInput{"MultigridSweepsOutOfRange",
                 "",
                 "[output]",
                 "[solver.multigrid]\npre_sweeps = -1\n[output]",
                 {"solver.multigrid.pre_sweeps", "[0, 100]"}},
        BadInput{"MultigridGatherSizeOutOfRange",
                 "",
                 "[output]",
                 "[solver.multigrid]\ngather_size = -1\n[output]",
                 {"solver.multigrid.gather_size", "[0, 16777216]"}},
        BadInput{"UnknownMultigridCycle",
                 "",
                 "[output]",
                 "[solver.multigrid]\ncycle = \"k\"\n[output]",
                 {"solver.multigrid.cycle", "v, w, f"}},
        BadInput{"UnknownMultigridPrecision",
                 "",
                 "[output]",
                 "[solver.multigrid]\nprecision = \"half\"\n[output]",
                 {"solver.multigrid.precision", "double, float"}},
        BadInput{"MissingImage",
                 "",
                 "initial = \"exp(-40*((x-0.5)^2 + (y-0.4)^2))\"",
                 "initial_image = \"nowhere.png\"",
                 {"problem.initial_image", "nowhere.png"}}),
    [](const ::testing::TestParamInfo<BadInput>& param) { return param.param.name; });

// Neumann conditions on every side of a steady problem fix u only up to a constant: Poisson
// (symmetric) is solved for the solution of zero mean and the user told how much of the data
// did not balance (all of it for a constant source with no flux out); convection-diffusion
// (nonsymmetric, whose range the constants do not describe) is refused.
TEST(CommandLine, PureNeumannPoissonIsSolvedForZeroMeanAndConvectionRefused) {
    TemporaryDirectory dir;
    dir.write("neumann.toml",
              "[problem]\ntype = \"poisson\"\nsource = \"1\"\n[grid]\nnx = 17\nny = 17\n"
              "[boundary]\nall = { type = \"neumann\", value = \"0\" }\n"
              "[output]\ndirectory = \"out\"\n");
    auto result = run_simrun("neumann.toml --backend cpu", dir.path());
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("the solution of zero mean is written; 1 of the right-hand side "
                              "was removed"),
              std::string::npos)
        << result.out;
    dir.write("convection.toml",
              "[problem]\ntype = \"convection_diffusion\"\nvelocity = [1.0, 0.5]\n"
              "epsilon = 0.1\n[time]\nscheme = \"steady\"\n[grid]\nnx = 17\nny = 17\n"
              "[boundary]\nall = { type = \"neumann\", value = \"0\" }\n"
              "[output]\ndirectory = \"out2\"\n");
    result = run_simrun("convection.toml --backend cpu", dir.path());
    EXPECT_EQ(result.exit_code, 2) << result.out;
    EXPECT_NE(result.err.find("convection and Neumann conditions on every side is singular"),
              std::string::npos)
        << result.err;
}

// The multigrid cycle computes in float by default inside a double CG, and in double on
// request: the run says which, and both reach the input's tolerance in b - A x within one
// iteration of each other.
TEST(CommandLine, MultigridCycleInEitherPrecisionReachesTheTolerance) {
    TemporaryDirectory dir;
    std::map<std::string, int> iterations;
    for (const std::string precision : {"float", "double"}) {
        const auto result = run_simrun(std::string(SIMRUN_SOURCE_DIR) +
                                           "/inputs/poisson.toml --backend cpu --set grid.nx=257 "
                                           "--set grid.ny=257 --set solver.rtol=1e-9 "
                                           "--set output.vtk=false --set output.hdf5=false "
                                           "--set solver.multigrid.precision=\"" +
                                           precision + "\"",
                                       dir.path());
        ASSERT_EQ(result.exit_code, 0) << precision << ": " << result.err;
        EXPECT_EQ(result.out.find("symmetric red-black Gauss-Seidel in float") != std::string::npos,
                  precision == "float")
            << result.out;
        std::smatch match;
        ASSERT_TRUE(std::regex_search(
            result.out, match,
            std::regex("; ([0-9]+) solver iterations; ([0-9.]+) s \\(solver ([0-9.]+) s\\)")))
            << result.out;
        iterations[precision] = std::stoi(match[1]);
        // The solver's share of the wait is part of it.
        EXPECT_GT(std::stod(match[3]), 0.0);
        EXPECT_LE(std::stod(match[3]), std::stod(match[2]));
    }
    EXPECT_LE(std::abs(iterations["float"] - iterations["double"]), 1);
    EXPECT_LE(iterations["float"], 12);
}

TEST(CommandLine, MissingInputFile) {
    TemporaryDirectory dir;
    const auto result = run_simrun("nowhere.toml", dir.path());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("nowhere.toml"), std::string::npos) << result.err;
}

// The first line of a command's standard output, or "" when it fails.
std::string first_output_line(const std::string& command) {
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return "";
    char line[256] = {};
    const bool read = std::fgets(line, sizeof line, pipe) != nullptr;
    const int status = pclose(pipe);
    if (!read || status != 0) return "";
    std::string text = line;
    if (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
}

// OpenMP threads sleep at barriers unless the user asks otherwise, so that a second busy
// process on the machine does not turn each barrier into a wait for a preempted spinner.
TEST(CommandLine, OpenMpWaitsPassivelyUnlessTheUserSetsAPolicy) {
    TemporaryDirectory dir;
    const char* before = std::getenv("OMP_WAIT_POLICY");
    const std::string saved = before != nullptr ? before : "";
    unsetenv("OMP_WAIT_POLICY");
    const auto by_default = run_simrun("--version", dir.path());
    setenv("OMP_WAIT_POLICY", "active", 1);
    const auto asked = run_simrun("--version", dir.path());
    if (before != nullptr) {
        setenv("OMP_WAIT_POLICY", saved.c_str(), 1);
    } else {
        unsetenv("OMP_WAIT_POLICY");
    }
    EXPECT_NE(by_default.out.find("waiting threads passive (OMP_WAIT_POLICY)"), std::string::npos)
        << by_default.out;
    EXPECT_NE(asked.out.find("waiting threads active (OMP_WAIT_POLICY)"), std::string::npos)
        << asked.out;
}

TEST(CommandLine, VersionNamesTheReleaseTheCommitAndTheBuild) {
    TemporaryDirectory dir;
    const auto result = run_simrun("--version", dir.path());
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    // The version CMakeLists.txt declares.
    std::smatch declared;
    const std::string cmake_lists = testing::read_text(SIMRUN_SOURCE_DIR "/CMakeLists.txt");
    ASSERT_TRUE(std::regex_search(cmake_lists, declared,
                                  std::regex(R"(project\(simrun VERSION ([0-9.]+))")));
    EXPECT_EQ(result.out.substr(0, result.out.find('\n')), "simrun " + declared[1].str());
    // A commit of this checkout (HEAD, or an earlier one for a build older than the last
    // commit), or "unknown" where there is no git or no checkout.
    std::smatch commit;
    ASSERT_TRUE(std::regex_search(result.out, commit,
                                  std::regex("\n  commit +([0-9a-f]{12}|unknown)( |\n)")))
        << result.out;
    const std::string git = "git -C '" SIMRUN_SOURCE_DIR "' ";
    if (first_output_line(git + "rev-parse --short=12 HEAD 2>/dev/null").empty()) {
        EXPECT_EQ(commit[1], "unknown");
    } else {
        const std::string ancestor = git + "merge-base --is-ancestor " + commit[1].str() + " HEAD";
        EXPECT_EQ(std::system(ancestor.c_str()), 0) << commit[1] << " is not in this checkout";
    }
    if (solvers::cuda_compiled()) {
        EXPECT_TRUE(
            std::regex_search(result.out, std::regex("\n  CUDA back-end +built for .*sm_[0-9]+")))
            << result.out;
    } else {
        EXPECT_NE(result.out.find("\n  CUDA back-end  not built"), std::string::npos) << result.out;
    }
    for (const char* item : {"MPI", "OpenMP", "compiler", "toml++ 3.", "HDF5 1.", "muParser 2.",
                             "CLI11 2.", "nlohmann_json 3."}) {
        EXPECT_NE(result.out.find(item), std::string::npos) << item << " in\n" << result.out;
    }
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

TEST(CommandLine, StepsRecordTheMethodAndTheResidualHistory) {
    TemporaryDirectory dir;
    dir.write("run.toml", good_input);
    const auto implicit = run_simrun("run.toml --backend cpu --quiet", dir.path());
    ASSERT_EQ(implicit.exit_code, 0) << implicit.err;
    {
        RunFile file(dir.path() / "out" / "heat.h5");
        ASSERT_TRUE(file.is_open());
        EXPECT_EQ(file.string_attribute("/steps/000000", "method"), "none");
        EXPECT_EQ(file.string_attribute("/steps/000000", "status"), "initial");
        EXPECT_FALSE(file.exists("/steps/000000/residual_history"));
        for (const char* group : {"/steps/000002", "/steps/000005"}) {
            EXPECT_EQ(file.string_attribute(group, "method"), "cg + none");
            const auto iterations =
                file.attribute<std::int64_t>(group, "solver_iterations", H5T_NATIVE_INT64);
            const auto history = file.doubles(std::string(group) + "/residual_history");
            // One attempt: ||r_k|| for k = 0 .. iterations, decreasing overall by the tolerance.
            ASSERT_EQ(static_cast<std::int64_t>(history.size()), iterations + 1) << group;
            for (const double r : history) EXPECT_TRUE(std::isfinite(r) && r >= 0.0) << group;
            EXPECT_LT(history.back(), 1e-6 * history.front()) << group;
        }
    }
    const auto explicit_run = run_simrun(
        "run.toml --backend cpu --quiet --set time.scheme=explicit_euler --set time.dt=1e-4 "
        "--set time.end=2e-4 --output explicit",
        dir.path());
    ASSERT_EQ(explicit_run.exit_code, 0) << explicit_run.err;
    RunFile file(dir.path() / "explicit" / "heat.h5");
    ASSERT_TRUE(file.is_open());
    EXPECT_EQ(file.string_attribute("/steps/000002", "method"), "none");
    EXPECT_EQ(file.string_attribute("/steps/000002", "status"), "explicit");
    EXPECT_FALSE(file.exists("/steps/000002/residual_history"));
}

// A run to step 6, and the same run stopped at step 3 and continued with --restart, both into
// its own directory (appending) and into another (fresh outputs from step 3), end with the
// same bits; the appended files list every step of the uninterrupted run, identical.
class Restart : public ::testing::TestWithParam<std::string> {};

TEST_P(Restart, ContinuesBitForBitAppendingOrIntoAnotherDirectory) {
    TemporaryDirectory dir;
    dir.write("run.toml", good_input);
    const std::string common =
        "run.toml --backend cpu --quiet --set time.scheme=" + GetParam() + " --set output.every=1 ";
    const auto full = run_simrun(common + "--set time.end=0.06 --output full", dir.path());
    ASSERT_EQ(full.exit_code, 0) << full.err;
    const auto part = run_simrun(common + "--set time.end=0.03 --output part", dir.path());
    ASSERT_EQ(part.exit_code, 0) << part.err;
    const auto other = run_simrun(
        common + "--set time.end=0.06 --output other --restart part/heat.h5", dir.path());
    ASSERT_EQ(other.exit_code, 0) << other.err;
    const auto append =
        run_simrun(common + "--set time.end=0.06 --output part --restart part/heat.h5", dir.path());
    ASSERT_EQ(append.exit_code, 0) << append.err;

    const RunFile reference(dir.path() / "full" / "heat.h5");
    ASSERT_TRUE(reference.is_open());
    const std::vector<std::int64_t> all_steps{0, 1, 2, 3, 4, 5, 6};
    ASSERT_EQ(reference.steps(), all_steps);
    const std::vector<std::pair<std::string, std::int64_t>> continued{{"part", 0}, {"other", 3}};
    for (const auto& [name, first] : continued) {
        SCOPED_TRACE(name);
        const auto out = dir.path() / name;
        const RunFile run(out / "heat.h5");
        ASSERT_TRUE(run.is_open());
        const std::vector<std::int64_t> expected(all_steps.begin() + first, all_steps.end());
        EXPECT_EQ(run.steps(), expected);
        for (const std::int64_t step : expected) {
            const std::string group = step_group(step);
            EXPECT_EQ(run.doubles(group + "/u"), reference.doubles(group + "/u")) << group;
            EXPECT_EQ(run.attribute<double>(group, "time", H5T_NATIVE_DOUBLE),
                      reference.attribute<double>(group, "time", H5T_NATIVE_DOUBLE))
                << group;
            if (step > 0) {
                // The same solves: warm-started from the same bits, the same residuals.
                EXPECT_EQ(run.doubles(group + "/residual_history"),
                          reference.doubles(group + "/residual_history"))
                    << group;
            }
        }
        // The .pvd and .xmf list the same steps, each with the time the .h5 holds.
        const auto pvd = pvd_entries(out / "heat.pvd");
        const auto xmf = xdmf_entries(out / "heat.xmf");
        ASSERT_EQ(pvd.size(), expected.size());
        ASSERT_EQ(xmf.size(), expected.size());
        for (std::size_t n = 0; n < expected.size(); ++n) {
            const std::string group = step_group(expected[n]);
            const double time = reference.attribute<double>(group, "time", H5T_NATIVE_DOUBLE);
            EXPECT_EQ(step_of(pvd[n].file), expected[n]);
            EXPECT_EQ(pvd[n].time, time) << pvd[n].file;
            EXPECT_EQ(xmf[n].file, "heat.h5:" + group + "/u");
            EXPECT_EQ(xmf[n].time, time) << xmf[n].file;
            if (n > 0) {
                EXPECT_GT(pvd[n].time, pvd[n - 1].time);
            }
            EXPECT_TRUE(std::filesystem::exists(out / pvd[n].file)) << pvd[n].file;
        }
    }
    // The appended file records the continuation's input.
    const RunFile appended(dir.path() / "part" / "heat.h5");
    EXPECT_EQ(appended.attribute<std::int64_t>("/restarts/0", "step", H5T_NATIVE_INT64), 3);
}

INSTANTIATE_TEST_SUITE_P(CommandLine, Restart,
                         ::testing::Values("backward_euler", "crank_nicolson"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                             return param.param;
                         });

std::string file_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A restart that does not fit the input exits 2 naming what differs, and changes nothing.
TEST(CommandLine, RestartThatDoesNotFitIsAnInputError) {
    TemporaryDirectory dir;
    dir.write("run.toml", good_input);
    const auto first = run_simrun("run.toml --backend cpu --quiet", dir.path());
    ASSERT_EQ(first.exit_code, 0) << first.err;
    const auto h5 = dir.path() / "out" / "heat.h5";
    const std::string before = file_bytes(h5);
    dir.write("poisson.toml",
              "[problem]\ntype = \"poisson\"\nsource = \"1\"\n[grid]\nnx = 33\nny = 25\n"
              "[boundary]\nall = \"0\"\n");
    dir.write("garbage.h5", "not an HDF5 file");
    const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
        {"run.toml --set time.dt=0.005 --set time.end=0.1",
         {"time.dt", "was written with dt = 0.01", "the input has dt = 0.005"}},
        {"run.toml --set grid.nx=17 --set time.end=0.1", {"grid", "33 x 25", "17 x 25"}},
        {"run.toml --set 'grid.x=[0.0, 2.0]' --set time.end=0.1",
         {"grid", "spacing (0.03125, 0.041666666666666664), the input has (0.0625, "}},
        {"run.toml --set 'grid.x=[1.0, 2.0]' --set time.end=0.1",
         {"grid", "origin at (0, 0), the input has (1, 0)"}},
        {"run.toml", {"time.end", "ends at step 5", "nothing is left to run"}},
        {"poisson.toml", {"steady"}},
    };
    for (const auto& [arguments, parts] : cases) {
        const auto result =
            run_simrun(arguments + " --backend cpu --restart out/heat.h5", dir.path());
        EXPECT_EQ(result.exit_code, 2) << arguments << "\n" << result.err;
        for (const auto& part : parts) {
            EXPECT_NE(result.err.find(part), std::string::npos)
                << arguments << ": stderr lacks '" << part << "':\n"
                << result.err;
        }
    }
    for (const char* file : {"missing.h5", "garbage.h5"}) {
        const auto result = run_simrun(
            std::string("run.toml --backend cpu --set time.end=0.1 --restart ") + file, dir.path());
        EXPECT_EQ(result.exit_code, 2) << result.err;
        EXPECT_NE(result.err.find(file), std::string::npos) << result.err;
    }
    EXPECT_EQ(file_bytes(h5), before);
}

// A file the writer thread cannot write ends the run with exit code 1 and the file named;
// the steps before it stay complete and nothing after it is written.
TEST(CommandLine, OutputFailureInTheWriterExitsOne) {
    TemporaryDirectory dir;
    dir.write("run.toml", good_input);
    // A non-empty directory where step 2's .vti goes: renaming onto it fails.
    std::filesystem::create_directories(dir.path() / "out" / "heat_000002.vti" / "blocker");
    const auto result = run_simrun("run.toml --backend cpu", dir.path());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_NE(result.err.find("heat_000002.vti"), std::string::npos) << result.err;
    const auto out = dir.path() / "out";
    ASSERT_EQ(pvd_entries(out / "heat.pvd").size(), 1u);
    ASSERT_EQ(xdmf_entries(out / "heat.xmf").size(), 1u);
    EXPECT_FALSE(std::filesystem::exists(out / "heat_000004.vti"));
    const RunFile file(out / "heat.h5");
    ASSERT_TRUE(file.is_open());
    EXPECT_EQ(file.steps(), (std::vector<std::int64_t>{0}));
}

// A heat run large enough to take a few seconds with output every step, killed with SIGKILL
// at several moments: whatever the .pvd and .xmf list reads back whole.
TEST(CommandLine, KilledRunLeavesEveryReportedStepReadable) {
    TemporaryDirectory dir;
    dir.write("run.toml", good_input);
    const std::string arguments =
        "run.toml --backend cpu --quiet --set grid.nx=257 --set grid.ny=257 "
        "--set time.end=0.6 --set output.every=1";
    const std::int64_t points = 257 * 257;
    int killed_with_steps = 0;
    bool resumed_once = false;
    for (const char* seconds : {"0.6", "1.2", "1.8"}) {
        SCOPED_TRACE(std::string("killed after ") + seconds + " s");
        // --foreground: timeout kills simrun alone and waits for it, so its file locks are gone.
        const std::string out = std::string("out") + seconds;
        const std::string command =
            "cd '" + dir.path().string() + "' && timeout --foreground -s KILL " + seconds +
            " '" SIMRUN_EXECUTABLE "' " + arguments + " --output " + out + " > /dev/null 2>&1";
        const int status = std::system(command.c_str());
        ASSERT_TRUE(WIFEXITED(status));
        const int code = WEXITSTATUS(status);
        // 137: killed; 0: done before the deadline; 124: timeout's own report when the deadline
        // and the run's end meet (it may have finished or been killed).
        ASSERT_TRUE(code == 0 || code == 137 || code == 124) << "exit code " << code;
        const auto directory = dir.path() / out;

        std::vector<ListedStep> pvd, xmf;
        if (std::filesystem::exists(directory / "heat.pvd"))
            pvd = pvd_entries(directory / "heat.pvd");
        if (std::filesystem::exists(directory / "heat.xmf"))
            xmf = xdmf_entries(directory / "heat.xmf");
        if (code == 137 && !xmf.empty()) ++killed_with_steps;
        // Reported steps are a prefix of the run's steps 0, 1, 2, ... at t = step dt.
        for (const auto* listed : {&pvd, &xmf}) {
            for (std::size_t n = 0; n < listed->size(); ++n) {
                EXPECT_EQ(step_of((*listed)[n].file), static_cast<std::int64_t>(n));
                EXPECT_EQ((*listed)[n].time, static_cast<double>(n) * 0.01);
            }
        }
        for (const auto& entry : pvd) {
            vtkNew<vtkXMLImageDataReader> reader;
            const auto path = directory / entry.file;
            ASSERT_TRUE(std::filesystem::exists(path)) << entry.file;
            reader->SetFileName(path.c_str());
            reader->Update();
            ASSERT_EQ(reader->GetErrorCode(), 0u) << entry.file;
            vtkDataArray* u = reader->GetOutput()->GetPointData()->GetArray("u");
            ASSERT_NE(u, nullptr) << entry.file;
            ASSERT_EQ(u->GetNumberOfTuples(), points) << entry.file;
            for (vtkIdType i = 0; i < points; ++i) {
                ASSERT_TRUE(std::isfinite(u->GetTuple1(i))) << entry.file << " node " << i;
            }
        }
        // The .h5 exists under its name only once it opens; every item the .xmf names reads.
        if (!std::filesystem::exists(directory / "heat.h5")) {
            EXPECT_TRUE(xmf.empty());
            continue;
        }
        std::int64_t last_step = -1;
        {
            const RunFile file(directory / "heat.h5");
            ASSERT_TRUE(file.is_open());
            for (const auto& entry : xmf) {
                ASSERT_EQ(entry.file.substr(0, 8), "heat.h5:");
                std::vector<hsize_t> extent;
                const auto values = file.doubles(entry.file.substr(8), &extent);
                EXPECT_EQ(extent, (std::vector<hsize_t>{257, 257})) << entry.file;
                ASSERT_EQ(static_cast<std::int64_t>(values.size()), points) << entry.file;
                for (const double v : values) ASSERT_TRUE(std::isfinite(v)) << entry.file;
            }
            const auto stored = file.steps();
            if (!stored.empty()) last_step = stored.back();
        }
        // The first killed run continues from its file (for one step past it, to keep the
        // test short).
        if (code == 137 && last_step >= 0 && !resumed_once) {
            resumed_once = true;
            const std::string end = std::to_string(0.01 * static_cast<double>(last_step + 1));
            const auto resumed = run_simrun(arguments + " --output " + out + " --restart " + out +
                                                "/heat.h5 --set time.end=" + end,
                                            dir.path());
            EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
            EXPECT_EQ(xdmf_entries(directory / "heat.xmf").size(),
                      static_cast<std::size_t>(last_step + 2));
        }
    }
    EXPECT_GT(killed_with_steps, 0) << "no kill landed after a step was written";
}

// A run signalled once it has written two output steps (output every 7 steps, so that the step
// it stops on is seldom one of them) ends after the step in progress with the shell's code for
// the signal: that step is written and the outputs end on it (the run file, the .xmf and the
// .pvd list the same steps, each whole), and --restart continues from it to the bits of an
// uninterrupted run. Job control (set -m) keeps SIGINT for a background job, which a plain
// shell starts ignoring it.
class StoppedBySignal : public ::testing::TestWithParam<int> {};

TEST_P(StoppedBySignal, EndsOnAWrittenStepThatRestartContinues) {
    const int signal = GetParam();
    const std::string name = signal == SIGINT ? "SIGINT" : "SIGTERM";
    TemporaryDirectory dir;
    dir.write("run.toml", good_input);
    const std::string arguments =
        "run.toml --backend cpu --quiet --set grid.nx=257 --set grid.ny=257 --set output.every=7 ";
    const std::int64_t points = 257 * 257;
    const auto stopped = testing::run_stop_script(
        dir, "set -m\n'" SIMRUN_EXECUTABLE "' " + arguments +
                 "--set time.end=10 --output out 2> err.txt &\npid=$!\n" +
                 testing::wait_until_xmf_lists(2) + "kill -" + name.substr(3) +
                 " $pid\nwait $pid\n");
    // Every 7th step and the last; the three lists alike, every step whole and finite.
    const std::vector<std::int64_t> expected =
        testing::steps_of_stopped_run(stopped, signal, 7, 1000);
    ASSERT_FALSE(expected.empty());
    const std::int64_t last = expected.back();
    const auto out = dir.path() / "out";
    {
        const RunFile file(out / "heat.h5");
        ASSERT_TRUE(file.is_open());
        EXPECT_EQ(file.steps(), expected);
        for (const std::int64_t step : expected) {
            const auto u = file.doubles(step_group(step) + "/u");
            ASSERT_EQ(static_cast<std::int64_t>(u.size()), points) << step;
            for (const double value : u) ASSERT_TRUE(std::isfinite(value)) << step;
        }
    }
    const auto pvd = pvd_entries(out / "heat.pvd");
    const auto xmf = xdmf_entries(out / "heat.xmf");
    ASSERT_EQ(pvd.size(), expected.size());
    ASSERT_EQ(xmf.size(), expected.size());
    for (std::size_t n = 0; n < expected.size(); ++n) {
        EXPECT_EQ(step_of(pvd[n].file), expected[n]);
        EXPECT_EQ(xmf[n].file, "heat.h5:" + step_group(expected[n]) + "/u");
    }

    // Three steps more from the last one, against a run of all the steps.
    const std::string end = "--set time.end=" + std::to_string(0.01 * static_cast<double>(last + 3));
    const auto continued =
        run_simrun(arguments + end + " --output out --restart out/heat.h5", dir.path());
    ASSERT_EQ(continued.exit_code, 0) << continued.err;
    const auto whole = run_simrun(arguments + end + " --output whole", dir.path());
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    const std::string final_group = step_group(last + 3);
    EXPECT_EQ(RunFile(out / "heat.h5").doubles(final_group + "/u"),
              RunFile(dir.path() / "whole" / "heat.h5").doubles(final_group + "/u"));
}

INSTANTIATE_TEST_SUITE_P(CommandLine, StoppedBySignal, ::testing::Values(SIGTERM, SIGINT),
                         [](const auto& test) { return test.param == SIGINT ? "SIGINT" : "SIGTERM"; });

}  // namespace
}  // namespace simrun

// Hostile input end to end (issue 12): data that turns non-finite, explicit steps at the limit
// simrun prints, and the other ways a run could report success over a wrong or lost result.
// Each case is an input made for the purpose; the expected outcome follows from the case (the
// exit code, the key named, no stored value that is not finite).
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "simrun/framework/output/output_lock.hpp"
#include "support/run_file.hpp"
#include "support/run_simrun.hpp"

namespace simrun {
namespace {

using testing::run_simrun;
using testing::RunFile;
using testing::TemporaryDirectory;

// A small heat run with `problem_extra` added to [problem] and the given boundary and time.
std::string heat_input(const std::string& problem_extra, const std::string& boundary,
                       const std::string& time) {
    return "[problem]\ntype = \"heat\"\nalpha = 0.1\ninitial = \"sin(pi*x)*sin(pi*y)\"\n" +
           problem_extra + "\n[grid]\nnx = 17\nny = 17\n[boundary]\n" + boundary + "\n[time]\n" +
           time + "\n[output]\ndirectory = \"out\"\n";
}

const std::string explicit_time = "scheme = \"explicit_euler\"\ndt = 1e-3\nend = 0.1";
const std::string implicit_time = "scheme = \"backward_euler\"\ndt = 1e-2\nend = 0.1";
const std::string crank_nicolson_time = "scheme = \"crank_nicolson\"\ndt = 1e-2\nend = 0.1";

// Every step stored in out/heat.h5 holds finite values only; returns how many steps it holds.
std::size_t expect_only_finite_steps(const std::filesystem::path& h5) {
    const RunFile file(h5);
    EXPECT_TRUE(file.is_open()) << h5;
    if (!file.is_open()) return 0;
    const auto steps = file.steps();
    for (const std::int64_t step : steps) {
        char group[32];
        std::snprintf(group, sizeof group, "/steps/%06lld/u", static_cast<long long>(step));
        for (const double v : file.doubles(group)) {
            EXPECT_TRUE(std::isfinite(v)) << group;
            if (!std::isfinite(v)) break;
        }
    }
    return steps.size();
}

struct NonFiniteCase {
    const char* name;
    std::string problem_extra;
    std::string boundary;
    const char* key;  // the key the message names
    bool from_start;  // not finite where the first step evaluates its data
};

// The message's "the outputs are complete up to step N" and the steps a run file holds agree:
// N is its last step.
void expect_complete_up_to_last_step(const std::string& err, const std::filesystem::path& h5) {
    std::smatch held;
    ASSERT_TRUE(std::regex_search(err, held,
                                  std::regex("the outputs are complete up to step "
                                             "([0-9]+) \\(t = [0-9.e-]+\\)")))
        << err;
    const RunFile file(h5);
    ASSERT_TRUE(file.is_open()) << h5;
    ASSERT_FALSE(file.steps().empty());
    EXPECT_EQ(std::stoll(held[1].str()), file.steps().back()) << err;
}

// Data that is not finite at some nodes, from t = 0, from just after it or from some time on,
// in the source, a Dirichlet value or a Neumann value: every scheme stops before a step uses
// it, with the key and the time. Where the first step evaluates it (at t = 0, or at t = dt: the
// end of the first step of each scheme, which Crank-Nicolson and explicit Euler also evaluate
// at t = 0) it is an input error (exit 2) found before anything is written, as `simrun check`
// finds it; later, the steps written before stay and are finite, and the computation failed
// (exit 1), saying up to which step the outputs are complete.
TEST(HostileInput, NonFiniteDataStopsTheRunBeforeAStepUsesIt) {
    const NonFiniteCase cases[] = {
        {"source log of a negative number on part of the grid",
         "source = \"y > 0.6 ? log(x - 2) : 0\"", "all = \"0\"", "key 'problem.source'", true},
        {"source infinite from just after t = 0 (before the first step's end)",
         "source = \"t > 0.0005 ? 1/0 : 0\"", "all = \"0\"", "key 'problem.source'", true},
        {"Neumann value infinite from just after t = 0", "",
         "left = { type = \"neumann\", value = \"t > 0.0005 ? 1/0 : 0\" }\nall = \"0\"",
         "key 'boundary'", true},
        {"source dividing by zero from t = 0.05 on", "source = \"t > 0.05 ? 1/(x - x) : 1\"",
         "all = \"0\"", "key 'problem.source'", false},
        {"source overflowing from t = 0.05 on", "source = \"t > 0.05 ? exp(1000) : 1\"",
         "all = \"0\"", "key 'problem.source'", false},
        {"Dirichlet value turning NaN", "", "all = \"t > 0.02 ? sqrt(-1 - x) : 0\"",
         "key 'boundary'", false},
        {"Neumann value turning Inf", "",
         "left = { type = \"neumann\", value = \"t > 0.03 ? 1/(y - y) : 0\" }\nall = \"0\"",
         "key 'boundary'", false},
    };
    for (const auto& c : cases) {
        for (const std::string& time : {explicit_time, implicit_time, crank_nicolson_time}) {
            SCOPED_TRACE(std::string(c.name) + ", " + time.substr(0, time.find('\n')));
            TemporaryDirectory dir;
            dir.write("run.toml", heat_input(c.problem_extra, c.boundary, time));
            const auto result = run_simrun("run.toml --backend cpu --quiet", dir.path());
            EXPECT_EQ(result.exit_code, c.from_start ? 2 : 1) << result.err;
            EXPECT_NE(result.err.find(c.key), std::string::npos) << result.err;
            // The node and the time.
            EXPECT_TRUE(
                std::regex_search(result.err, std::regex(" at \\([0-9., ]+\\) at t = [0-9.]+")))
                << result.err;
            if (c.from_start) {
                EXPECT_FALSE(std::filesystem::exists(dir.path() / "out")) << "written";
                const auto checked = run_simrun("check run.toml", dir.path());
                EXPECT_EQ(checked.exit_code, 2);
                EXPECT_EQ(checked.err, result.err);
            } else {
                EXPECT_GE(expect_only_finite_steps(dir.path() / "out" / "heat.h5"), 1u);
                expect_complete_up_to_last_step(result.err, dir.path() / "out" / "heat.h5");
            }
        }
    }
}

// The time schemes, and a [time] section of each.
constexpr const char* time_schemes[] = {"explicit_euler", "backward_euler", "crank_nicolson"};
std::string time_section(const char* scheme, const char* dt, const char* end) {
    return std::string("scheme = \"") + scheme + "\"\ndt = " + dt + "\nend = " + end;
}

// The steps a run wrote into out/heat.h5.
std::vector<std::int64_t> written_steps(const TemporaryDirectory& dir) {
    const RunFile file(dir.path() / "out" / "heat.h5");
    return file.is_open() ? file.steps() : std::vector<std::int64_t>{};
}

// A Dirichlet value that is not finite at t = 0 (log(-t) at t = 0 is -inf; NaN after) goes into
// the state a run starts from: every scheme refuses it before writing step 0, naming the key, the
// node and t = 0, where backward Euler used to write step 0 and blame its solver (the first
// data it evaluates are at t = dt); `simrun check` says the same.
TEST(HostileInput, ADirichletValueNotFiniteAtTimeZeroIsRefusedBeforeStepZeroIsWritten) {
    for (const char* scheme : time_schemes) {
        SCOPED_TRACE(scheme);
        TemporaryDirectory dir;
        dir.write("run.toml", heat_input("", "left = \"log(-t)\"\nall = \"0\"",
                                         time_section(scheme, "1e-3", "0.01")));
        const auto run = run_simrun("run.toml --backend cpu --quiet", dir.path());
        EXPECT_EQ(run.exit_code, 2) << run.err;
        EXPECT_NE(run.err.find("run.toml: key 'boundary': a Dirichlet boundary value is -inf at "
                               "(0, 0.0625) at t = 0: no step is computed from it"),
                  std::string::npos)
            << run.err;
        EXPECT_EQ(run.err.find("solve"), std::string::npos) << run.err;
        EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));
        const auto checked = run_simrun("check run.toml", dir.path());
        EXPECT_EQ(checked.exit_code, 2);
        EXPECT_EQ(checked.err, run.err);
    }
}

// Data turning non-finite mid-run (a top value infinite from t = 0.035 on): each scheme stops
// before the step whose data are at t = 0.04, exit 1 (the computation failed; 2 would mean
// nothing was written), naming the key and t; the steps written before it (0 to 3 every step,
// 0 and 2 every other) are finite, and the message says the outputs are complete up to the
// last of them.
TEST(HostileInput, DataTurningNonFiniteMidRunExitsOneWithTheStepsBeforeIt) {
    for (const char* scheme : time_schemes) {
        for (const std::int64_t every : {1, 2}) {
            SCOPED_TRACE(std::string(scheme) + ", every " + std::to_string(every));
            TemporaryDirectory dir;
            std::string input = heat_input("", "top = \"t > 0.035 ? 1/0 : 0\"\nall = \"0\"",
                                           time_section(scheme, "0.01", "0.05"));
            input.replace(input.find("nx = 17\nny = 17"), 15, "nx = 5\nny = 5");
            dir.write("run.toml", input + "every = " + std::to_string(every) + "\n");
            const auto run = run_simrun("run.toml --backend cpu --quiet", dir.path());
            EXPECT_EQ(run.exit_code, 1) << run.err;
            const std::int64_t last = 3 / every * every;  // the last step written before step 4
            EXPECT_NE(run.err.find("simrun: error: run.toml: key 'boundary': a Dirichlet boundary "
                                   "value is inf at (0, 1) at t = 0.04: no step is computed from "
                                   "it; the outputs are complete up to step " +
                                   std::to_string(last) + " (t = 0.0" + std::to_string(last) + ")"),
                      std::string::npos)
                << run.err;
            std::vector<std::int64_t> written;
            for (std::int64_t step = 0; step <= 3; step += every) written.push_back(step);
            EXPECT_EQ(written_steps(dir), written);
            expect_only_finite_steps(dir.path() / "out" / "heat.h5");
            EXPECT_EQ(run_simrun("check run.toml", dir.path()).exit_code,
                      0);  // t = 0 and dt are fine
        }
    }
}

// A field that overflows under a stable step (a huge initial condition): the explicit run stops
// at the first step whose field is not finite, exit 1, and what was written is finite.
TEST(HostileInput, ExplicitFieldThatOverflowsStopsTheRun) {
    TemporaryDirectory dir;
    std::string input = heat_input("", "all = \"0\"", explicit_time);
    input.replace(input.find("sin(pi*x)*sin(pi*y)"), 19, "1.5e308*(x > 0.5)");
    dir.write("run.toml", input);
    const auto result = run_simrun("run.toml --backend cpu --quiet", dir.path());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_NE(result.err.find("step 1 (t = 0.001): the field is no longer finite"),
              std::string::npos)
        << result.err;
    EXPECT_EQ(expect_only_finite_steps(dir.path() / "out" / "heat.h5"), 1u);  // step 0 only
}

// Central convection at cell Peclet 5 (not diagonally dominant: complex eigenvalues): a dt
// above the limit is refused with the limit; that printed limit, given back, is accepted and
// the run stays bounded: ||u_k||_2 <= 2 ||u_0||_2 (the power bound of a numerical radius <= 1;
// the row scale is 1 with Dirichlet walls), where the old bound on the row sums let it grow
// without limit.
TEST(HostileInput, ThePrintedExplicitLimitIsAcceptedAndStable) {
    TemporaryDirectory dir;
    dir.write("run.toml",
              "[problem]\ntype = \"convection_diffusion\"\nepsilon = 0.01\nvelocity = [3.2, 0.0]\n"
              "convection = \"central\"\ninitial = \"sin(pi*x)*sin(2*pi*y)\"\n[grid]\nnx = 33\n"
              "ny = 33\n[boundary]\nall = \"0\"\n[time]\nscheme = \"explicit_euler\"\ndt = 0.01\n"
              "end = 1.0\n[output]\ndirectory = \"out\"\nvtk = false\nevery = 50\n");
    const auto refused = run_simrun("run.toml --backend cpu --quiet", dir.path());
    EXPECT_EQ(refused.exit_code, 2);
    std::smatch match;
    const std::regex limit("largest step proved stable is ([0-9.e+-]+)");
    ASSERT_TRUE(std::regex_search(refused.err, match, limit)) << refused.err;
    const double dt = std::stod(match[1].str());
    char end[64];
    std::snprintf(end, sizeof end, "%.17g", 1000 * dt);
    const auto result = run_simrun(
        "run.toml --backend cpu --quiet --set time.dt=" + match[1].str() + " --set time.end=" + end,
        dir.path());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const RunFile file(dir.path() / "out" / "convection_diffusion.h5");
    ASSERT_TRUE(file.is_open());
    const auto norm = [&](std::int64_t step) {
        char group[32];
        std::snprintf(group, sizeof group, "/steps/%06lld/u", static_cast<long long>(step));
        double sum = 0;
        for (const double v : file.doubles(group)) sum += v * v;
        return std::sqrt(sum);
    };
    const auto steps = file.steps();
    ASSERT_EQ(steps.size(), 21u);
    const double initial = norm(0);
    for (const std::int64_t step : steps) EXPECT_LE(norm(step), 2 * initial) << step;
}

// Links planted in a shared output directory under the temporary names earlier versions used
// (fixed: ".NAME.tmp"), pointing at a file outside the run, are neither followed nor
// overwritten: every output and the solution file are written, the victim is untouched.
TEST(HostileInput, PlantedLinksInTheOutputDirectoryAreNotFollowed) {
    TemporaryDirectory dir;
    dir.write("victim.txt", "precious");
    std::filesystem::create_directories(dir.path() / "out");
    for (const char* name : {".heat.pvd.tmp", ".heat.h5.tmp", ".heat.xmf.tmp",
                             ".heat_000000.vti.tmp", ".heat_000010.vti.tmp", ".x.mtx.tmp"}) {
        std::filesystem::create_symlink(dir.path() / "victim.txt", dir.path() / "out" / name);
    }
    dir.write("run.toml", heat_input("", "all = \"0\"", implicit_time));
    const auto run = run_simrun("run.toml --backend cpu --quiet", dir.path());
    EXPECT_EQ(run.exit_code, 0) << run.err;
    const auto solve = run_simrun("solve " SIMRUN_SOURCE_DIR
                                  "/tests/data/matrices/nos3.mtx --backend cpu --out out/x.mtx",
                                  dir.path());
    EXPECT_EQ(solve.exit_code, 0) << solve.err;
    EXPECT_EQ(testing::read_text(dir.path() / "victim.txt"), "precious");
    EXPECT_EQ(expect_only_finite_steps(dir.path() / "out" / "heat.h5"), 11u);
    EXPECT_TRUE(std::filesystem::is_regular_file(dir.path() / "out" / "x.mtx"));
}

// While a run holds a basename's outputs in a directory, a second run into the same files
// stops at once with a message naming the directory and the holder, and writes nothing; a
// run into another directory goes on. The lock is held here by this process, as a running
// simrun holds it.
TEST(HostileInput, ASecondRunIntoTheSameOutputIsRefused) {
    TemporaryDirectory dir;
    dir.write("run.toml", heat_input("", "all = \"0\"", implicit_time));
    {
        const framework::OutputLock held(dir.path() / "out", "heat");
        const auto second = run_simrun("run.toml --backend cpu --quiet", dir.path());
        EXPECT_EQ(second.exit_code, 1) << second.err;
        EXPECT_NE(second.err.find("output directory 'out' is in use"), std::string::npos)
            << second.err;
        EXPECT_NE(second.err.find("process " + std::to_string(::getpid())), std::string::npos)
            << second.err;
        EXPECT_FALSE(std::filesystem::exists(dir.path() / "out" / "heat.h5"));
        EXPECT_EQ(run_simrun("run.toml --backend cpu --quiet --output other", dir.path()).exit_code,
                  0);
    }
    // Released (as the kernel releases a killed run's): the next run goes on, and removes the
    // temporary files a killed run of this basename left, and only those.
    dir.write("out/.heat.h5.0123456789abcdef.tmp", "left by a killed run");
    dir.write("out/.heat_000004.vti.fedcba9876543210.tmp", "left by a killed run");
    dir.write("out/.other.h5.0123456789abcdef.tmp", "another basename's");
    // A piece of a distributed run's step, in the step's piece directory.
    std::filesystem::create_directories(dir.path() / "out/heat_000004");
    dir.write("out/heat_000004/.heat_000004_1.vti.0123456789abcdef.tmp", "left by a killed run");
    dir.write("out/heat_000004/heat_000004_1.vti", "a piece, kept");
    const auto after = run_simrun("run.toml --backend cpu --quiet", dir.path());
    EXPECT_EQ(after.exit_code, 0) << after.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "out/.heat.h5.0123456789abcdef.tmp"));
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "out/.heat_000004.vti.fedcba9876543210.tmp"));
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "out/.other.h5.0123456789abcdef.tmp"));
    EXPECT_FALSE(std::filesystem::exists(
        dir.path() / "out/heat_000004/.heat_000004_1.vti.0123456789abcdef.tmp"));
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "out/heat_000004/heat_000004_1.vti"));
}

// verify with absurd levels is refused at once; an exact solution that is not finite is an
// input error naming it, never an error table of NaN with exit 0.
TEST(HostileInput, VerifyRefusesAbsurdLevelsAndANonFiniteExactSolution) {
    TemporaryDirectory dir;
    const std::string input =
        "[problem]\ntype = \"poisson\"\nsource = \"2*pi^2*sin(pi*x)*sin(pi*y)\"\n"
        "exact = \"sin(pi*x)*sin(pi*y)\"\n[grid]\nnx = 5\nny = 5\n[boundary]\nall = \"0\"\n";
    dir.write("run.toml", input);
    for (const char* levels : {"12", "40"}) {
        const auto result =
            run_simrun(std::string("verify run.toml --backend cpu --levels ") + levels, dir.path());
        EXPECT_EQ(result.exit_code, 2) << result.err;
        EXPECT_NE(result.err.find("is too many"), std::string::npos) << result.err;
    }
    std::string bad = input;
    bad.replace(bad.find("exact = \"sin(pi*x)*sin(pi*y)\""), 29, "exact = \"log(x - 2)\"");
    dir.write("bad.toml", bad);
    const auto result = run_simrun("verify bad.toml --backend cpu --json", dir.path());
    EXPECT_EQ(result.exit_code, 2) << result.err << result.out;
    EXPECT_NE(result.err.find("key 'problem.exact': the exact solution is"), std::string::npos)
        << result.err;
    EXPECT_EQ(result.out, "");
}

// Inputs that ask for more memory than any machine has are refused with the figure and what
// this machine has, before the allocation: a grid (by the run and by check alike), a matrix
// whose short file declares 2^31 - 1 rows. (The image case: image_field_test; a restart file's
// dataset is read only when shaped like the input's grid, and never past the memory.)
TEST(HostileInput, ImpossibleSizesAreRefusedWithTheMemoryTheyNeed) {
    TemporaryDirectory dir;
    std::string input = heat_input("", "all = \"0\"", implicit_time);
    // 1.7e9 nodes: about 320 GB.
    input.replace(input.find("nx = 17\nny = 17"), 15, "nx = 1200\nny = 1200\nnz = 1200");
    dir.write("run.toml", input);
    for (const char* command : {"run.toml --backend cpu", "check run.toml"}) {
        const auto result = run_simrun(command, dir.path());
        EXPECT_EQ(result.exit_code, 2) << command << ": " << result.err;
        EXPECT_TRUE(std::regex_search(
            result.err, std::regex("run.toml: key 'grid': a grid of [0-9]+ nodes needs about "
                                   "[0-9.]+ [kMGTP]?B of memory, the machine has [0-9.]+ [kMGTP]?B "
                                   "available")))
            << result.err;
    }
    dir.write("huge.mtx",
              "%%MatrixMarket matrix coordinate real general\n2147483647 2147483647 1\n1 1 1\n");
    const auto solve = run_simrun("solve huge.mtx --backend cpu", dir.path());
    EXPECT_EQ(solve.exit_code, 2) << solve.err;
    EXPECT_NE(solve.err.find("huge.mtx: a system of 2147483647 rows and 1 entries needs about"),
              std::string::npos)
        << solve.err;
}

// The largest resident size of the waited-for children so far, in kB.
long children_peak_kilobytes() {
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    return usage.ru_maxrss;
}

// check validates a grid in blocks of planes: the memory it takes does not grow with the grid.
// From 1001^2 to 4001^2 nodes one field grows by 120 MB and the run by about 40 fields; check
// grows by less than a quarter of one field.
TEST(HostileInput, CheckValidatesALargeGridInMemoryThatDoesNotGrowWithIt) {
    TemporaryDirectory dir;
    std::string input = heat_input("", "all = \"x\"", implicit_time);
    input.replace(input.find("sin(pi*x)*sin(pi*y)"), 19, "x*y");
    long peak_small = 0;
    for (const char* size : {"1001", "4001"}) {
        std::string sized = input;
        sized.replace(sized.find("nx = 17\nny = 17"), 15,
                      std::string("nx = ") + size + "\nny = " + size);
        dir.write("run.toml", sized);
        // (Under AddressSanitizer freed blocks would wait in its quarantine, not be reused.)
        const auto result =
            run_simrun("check run.toml", dir.path(),
                       "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0\"");
        EXPECT_EQ(result.exit_code, 0) << size << ": " << result.err;
        EXPECT_NE(result.out.find("run.toml: OK"), std::string::npos) << result.out;
        if (peak_small == 0) peak_small = children_peak_kilobytes();
    }
    const long growth = children_peak_kilobytes() - peak_small;
    EXPECT_LT(growth, 32 * 1024) << "check grew by " << growth << " kB from 1001^2 to 4001^2";
}

// A restart file whose last step claims a field of 2^50 values (a chunked dataset: the file
// stays small) is refused on its shape without reading it.
TEST(HostileInput, ARestartFileClaimingAHugeFieldIsRefusedWithoutReadingIt) {
    TemporaryDirectory dir;
    dir.write("run.toml", heat_input("", "all = \"0\"", implicit_time));
    ASSERT_EQ(run_simrun("run.toml --backend cpu --quiet", dir.path()).exit_code, 0);
    const auto h5 = dir.path() / "out" / "heat.h5";
    {
        const hid_t file = H5Fopen(h5.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        ASSERT_GE(file, 0);
        ASSERT_GE(H5Ldelete(file, "/steps/000010/u", H5P_DEFAULT), 0);
        const hsize_t dims[2] = {hsize_t{1} << 25, hsize_t{1} << 25}, chunk[2] = {64, 64};
        const hid_t space = H5Screate_simple(2, dims, nullptr);
        const hid_t properties = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_chunk(properties, 2, chunk);
        const hid_t data = H5Dcreate2(file, "/steps/000010/u", H5T_NATIVE_DOUBLE, space,
                                      H5P_DEFAULT, properties, H5P_DEFAULT);
        EXPECT_GE(data, 0);
        H5Dclose(data);
        H5Pclose(properties);
        H5Sclose(space);
        H5Fclose(file);
    }
    EXPECT_LT(std::filesystem::file_size(h5), std::uintmax_t{1} << 20);
    const auto result = run_simrun(
        "run.toml --backend cpu --quiet --set time.end=0.2 --output again "
        "--restart out/heat.h5",
        dir.path());
    EXPECT_EQ(result.exit_code, 2) << result.err;
    // Refused before anything is allocated: the file cannot hold what the dataset declares.
    EXPECT_NE(result.err.find("refused: dataset '/steps/000010/u' declares"), std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find("the file is corrupt or truncated"), std::string::npos)
        << result.err;
}

// Unix manners: a file that is not a regular file is named for what it is (a device would be
// read forever), a result that could not be written is a failure, check refuses what the run
// refuses, a list where one expression is expected and a basename that would break the .pvd
// are input errors.
TEST(HostileInput, FilesStreamsAndNamesAreCheckedAsTheRunWouldUseThem) {
    TemporaryDirectory dir;
    std::filesystem::create_symlink("loop_b", dir.path() / "loop_a");
    std::filesystem::create_symlink("loop_a", dir.path() / "loop_b");
    std::filesystem::create_directory(dir.path() / "folder.toml");
    const std::pair<const char*, const char*> files[] = {
        {"/dev/zero", "not a regular file"},
        {"folder.toml", "it is a directory"},
        {"loop_a", "Too many levels of symbolic links"},
        {"missing.toml", "no such file"}};
    for (const auto& [file, reason] : files) {
        for (const std::string& command : {std::string(file), "solve " + std::string(file)}) {
            const auto result = run_simrun(command, dir.path());
            EXPECT_EQ(result.exit_code, 2) << command;
            EXPECT_NE(result.err.find(reason), std::string::npos) << command << ": " << result.err;
        }
    }

    // stdout on a full device: the result never arrives, so the run fails.
    const std::string to_full = "cd '" + dir.path().string() +
                                "' && '" SIMRUN_EXECUTABLE "' solve " SIMRUN_SOURCE_DIR
                                "/tests/data/matrices/nos3.mtx --backend cpu --json > /dev/full "
                                "2> full.err";
    const int status = std::system(to_full.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
    const std::string full_err = testing::read_text(dir.path() / "full.err");
    EXPECT_NE(full_err.find("cannot write the output: No space left on device"), std::string::npos)
        << full_err;

    // check refuses what the run would refuse after parsing: an unstable explicit step, SOR
    // with a preconditioner.
    dir.write("unstable.toml",
              heat_input("", "all = \"0\"", "scheme = \"explicit_euler\"\ndt = 0.1\nend = 1"));
    std::string sor = heat_input("", "all = \"0\"", implicit_time);
    sor += "[solver]\nmethod = \"sor\"\npreconditioner = \"jacobi\"\n";
    dir.write("sor.toml", sor);
    std::string dense = heat_input("", "all = \"0\"", implicit_time);
    dense.replace(dense.find("nx = 17\nny = 17"), 15, "nx = 129\nny = 129");
    dense += "[solver]\nformat = \"dense\"\n";
    dir.write("dense.toml", dense);
    // Data that is not finite where the first step evaluates it: check finds what the run
    // finds first (the source before the boundary values, whatever their nodes).
    std::string bad_source = heat_input("source = \"y > 0.8 ? sqrt(-1) : 0\"",
                                        "left = \"0\"\nright = \"0\"\ntop = \"0\"\n"
                                        "bottom = \"x < 0.3 ? 1/0 : 0\"",
                                        implicit_time);
    dir.write("source.toml", bad_source);
    std::string bad_initial = heat_input("", "all = \"0\"", implicit_time);
    bad_initial.replace(bad_initial.find("sin(pi*x)*sin(pi*y)"), 19, "y > 0.9 ? log(-1) : 0");
    dir.write("initial.toml", bad_initial);
    for (const char* file :
         {"unstable.toml", "sor.toml", "dense.toml", "source.toml", "initial.toml"}) {
        const auto checked = run_simrun(std::string("check ") + file, dir.path());
        const auto ran = run_simrun(std::string(file) + " --backend cpu --quiet", dir.path());
        EXPECT_EQ(ran.exit_code, 2) << file << ": " << ran.err;
        EXPECT_EQ(checked.exit_code, 2) << file << ": " << checked.out;
        EXPECT_EQ(checked.err, ran.err);
        EXPECT_NE(ran.err.find(std::string(file) + ":"), std::string::npos) << ran.err;  // placed
    }

    std::string comma = heat_input("", "all = \"0\"", implicit_time);
    comma.replace(comma.find("sin(pi*x)*sin(pi*y)"), 19, "x, 1");
    dir.write("comma.toml", comma);
    const auto listed = run_simrun("check comma.toml", dir.path());
    EXPECT_EQ(listed.exit_code, 2);
    EXPECT_NE(listed.err.find("key 'problem.initial': 'x, 1' is 2 comma-separated expressions"),
              std::string::npos)
        << listed.err;

    dir.write("good.toml", heat_input("", "all = \"0\"", implicit_time));
    for (const char* basename : {"\"a\\nb\"", "\"a\\u0000b\"", "\".hidden\""}) {
        const auto named = run_simrun(
            std::string("check good.toml --set 'output.basename=") + basename + "'", dir.path());
        EXPECT_EQ(named.exit_code, 2) << basename;
        EXPECT_NE(named.err.find("key 'output.basename'"), std::string::npos) << named.err;
    }
}

// A NUL in an expression cut it short (muParser read "x\u0000+1" as x, exit 0): control
// characters in any input string are refused with the key named, before anything is written;
// in a path too (a NUL there gave the message "a"), and a path takes no tab or newline either,
// from the input file, --set or the command line.
TEST(HostileInput, ControlCharactersInExpressionsAndPathsAreRefusedNamingTheKey) {
    TemporaryDirectory dir;
    dir.write("run.toml", heat_input("source = \"x\\u0000+1\"", "all = \"0\"", implicit_time));
    dir.write("good.toml", heat_input("", "all = \"0\"", implicit_time));
    for (const char* command : {"run.toml --backend cpu --quiet", "check run.toml"}) {
        const auto result = run_simrun(command, dir.path());
        EXPECT_EQ(result.exit_code, 2) << command;
        EXPECT_NE(result.err.find("run.toml:5:10: key 'problem.source': holds the control "
                                  "character U+0000 at position 1"),
                  std::string::npos)
            << result.err;
    }
    const std::pair<std::string, std::string> settings[] = {
        {"'output.directory=\"a\\u0000b\"'",
         "key 'output.directory': holds the control "
         "character U+0000 at position 1"},
        {"'output.directory=\"a\\nb\"'",
         "key 'output.directory': holds the control character "
         "U+000A at position 1"},
        {"'boundary.all=\"x\\u0007\"'",
         "key 'boundary.all': holds the control character U+0007 "
         "at position 1"},
    };
    for (const auto& [setting, message] : settings) {
        const auto result =
            run_simrun("good.toml --backend cpu --quiet --set " + setting, dir.path());
        EXPECT_EQ(result.exit_code, 2) << setting;
        EXPECT_NE(result.err.find("--set "), std::string::npos) << result.err;  // placed
        EXPECT_NE(result.err.find(message), std::string::npos) << result.err;
    }
    const auto output =
        run_simrun("good.toml --backend cpu --quiet --output \"$(printf 'a\\tb')\"", dir.path());
    EXPECT_EQ(output.exit_code, 2);
    EXPECT_NE(
        output.err.find("--output: the path holds the control character U+0009 at position 1"),
        std::string::npos)
        << output.err;
    // Nothing was written anywhere.
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
        EXPECT_TRUE(entry.path().extension() == ".toml") << entry.path();
    }
}

// Coefficients whose stencil overflows a double (alpha / h^2 = inf): `check` said OK while the
// run failed in its solver's set-up. Both make the same validation, at assembly, and refuse it
// with the same message: naming alpha for heat, the problem for another (epsilon / h^2 of
// convection-diffusion), and dt where only dt times the operator overflows.
TEST(HostileInput, CheckRefusesCoefficientsThatOverflowAsTheRunDoes) {
    TemporaryDirectory dir;
    std::string alpha = heat_input("", "all = \"0\"", implicit_time);
    alpha.replace(alpha.find("alpha = 0.1"), 11, "alpha = 1e308");
    dir.write("alpha.toml", alpha);
    dir.write("epsilon.toml",
              "[problem]\ntype = \"convection_diffusion\"\nepsilon = 1e308\nvelocity = [1.0, "
              "0.0]\n[grid]\nnx = 17\nny = 17\n[boundary]\nall = \"0\"\n[time]\ndt = 0.01\n"
              "end = 0.1\n");
    // alpha / h^2 = 256: finite; dt 256 (the system matrix's entries) overflows.
    dir.write("dt.toml", heat_input("", "all = \"0\"",
                                    "scheme = \"backward_euler\"\ndt = 1e307\nend = 1e307"));
    const std::pair<const char*, const char*> cases[] = {
        {"alpha.toml", "alpha.toml:3:9: key 'problem.alpha': alpha = 1e+308 over h^2 overflows"},
        {"epsilon.toml",
         "epsilon.toml: key 'problem': the discretised operator is not finite at "
         "(0.0625, 0.0625)"},
        {"dt.toml",
         "dt.toml: key 'time.dt': the implicit step's matrix I - theta dt L is not "
         "finite at (0.0625, 0.0625)"},
    };
    for (const auto& [file, message] : cases) {
        const auto checked = run_simrun(std::string("check ") + file, dir.path());
        const auto ran = run_simrun(std::string(file) + " --backend cpu --quiet", dir.path());
        EXPECT_EQ(checked.exit_code, 2) << checked.out;
        EXPECT_EQ(ran.exit_code, 2) << ran.err;
        EXPECT_NE(ran.err.find(message), std::string::npos) << ran.err;
        EXPECT_EQ(checked.err, ran.err);
        EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));
    }
}

// An output directory that cannot be made on a read-only file system is named with the system's
// reason (it was "No such file or directory" about the lock file inside it), exit 1. Needs a
// mount (root in CI containers); skipped where none may be made.
TEST(HostileInput, AReadOnlyFileSystemIsNamedForWhatItIs) {
    TemporaryDirectory dir;
    std::filesystem::create_directory(dir.path() / "ro");
    const std::string mount =
        "mount -t tmpfs -o ro,size=64k tmpfs '" + (dir.path() / "ro").string() + "' 2>/dev/null";
    if (std::system(mount.c_str()) != 0) GTEST_SKIP() << "no tmpfs may be mounted here";
    dir.write("run.toml", heat_input("", "all = \"0\"", implicit_time));
    const auto run = run_simrun("run.toml --backend cpu --quiet --output ro/out", dir.path());
    [[maybe_unused]] const int unmounted =
        std::system(("umount '" + (dir.path() / "ro").string() + "'").c_str());
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_NE(run.err.find("cannot create the output directory 'ro/out': Read-only file system"),
              std::string::npos)
        << run.err;
}

}  // namespace
}  // namespace simrun

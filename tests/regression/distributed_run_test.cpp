// Distributed runs under mpirun (2 cores in CI: --oversubscribe): every input split over 1 to 4
// ranks gives the fields of one rank; the same input on the same ranks gives the same bits every
// run; a restart changes the rank count; input errors and failures end every rank alike, within
// a time limit (a hang fails the test instead of stalling CI).
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <vtkDataArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkXMLImageDataReader.h>
#include <vtkXMLPImageDataReader.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include "simrun/solvers/base/backend.hpp"
#include "support/run_file.hpp"
#include "support/run_simrun.hpp"
#include "support/stopped_run.hpp"

namespace simrun {
namespace {

using testing::CommandResult;
using testing::RunFile;
using testing::TemporaryDirectory;

// The launcher, bounded in time: as root (CI containers) Open MPI must be told that is meant;
// shared memory between the ranks of this host only; ranks may outnumber the cores.
// `limit`: the arguments of timeout(1).
std::string mpirun(int ranks, const std::string& limit = "-k 10 120") {
    return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader "
           "OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1 "
           "OMP_NUM_THREADS=1 SIMRUN_CHECK_COLLECTIVES=1 timeout " +
           limit + " " SIMRUN_MPIEXEC " -np " + std::to_string(ranks);
}

CommandResult run_ranks(int ranks, const std::string& arguments, const TemporaryDirectory& dir) {
    return testing::run_simrun(arguments, dir.path(), mpirun(ranks));
}

std::string step_group(std::int64_t step) {
    char name[32];
    std::snprintf(name, sizeof name, "/steps/%06lld", static_cast<long long>(step));
    return name;
}

// Whether the ranks' stderr holds one "simrun:" report: a failure said once, not per rank.
bool reported_once(const std::string& err) {
    const auto first = err.find("simrun:");
    return first != std::string::npos && err.find("simrun:", first + 1) == std::string::npos;
}

// The run file a run wrote into `directory`.
std::filesystem::path run_file_in(const std::filesystem::path& directory) {
    for (const auto& entry : std::filesystem::directory_iterator(directory)) {
        if (entry.path().extension() == ".h5") return entry.path();
    }
    return directory / "none.h5";
}

// max |a - b| / max |a|
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
    EXPECT_EQ(a.size(), b.size());
    double difference = 0, scale = 0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        difference = std::max(difference, std::abs(a[i] - b[i]));
        scale = std::max(scale, std::abs(a[i]));
    }
    return scale > 0 ? difference / scale : difference;
}

struct Case {
    std::string input;     // in inputs/
    std::string settings;  // --set ... making it small
    std::string solver;    // what the run file's solver decisions name (the preconditioner)
    // On 4 ranks, where given: what the decisions say of the multigrid levels' split.
    std::string on_four = {};
};
void PrintTo(const Case& c, std::ostream* out) { *out << c.input; }

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    std::string name = info.param.input.substr(0, info.param.input.find('.'));
    std::replace(name.begin(), name.end(), '-', '_');
    return name;
}

class DistributedRun : public ::testing::TestWithParam<Case> {};

// One rank, then 2, 3 and 4 (uneven slabs among them): the last step's field agrees to 1e-12
// relative. The same method on every rank count (CG + Jacobi for the time-dependent problems,
// CG + multigrid for Poisson: its levels split over the ranks, then gathered); tight
// tolerances, so that what remains is the rounding of sums taken in another order.
TEST_P(DistributedRun, TwoThreeAndFourRanksGiveTheFieldOfOne) {
    TemporaryDirectory dir;
    const Case& c = GetParam();
    const std::string common = std::string(SIMRUN_SOURCE_DIR) + "/inputs/" + c.input +
                               " --backend cpu --quiet --set output.vtk=false " + c.settings;
    const auto one = run_ranks(1, common + " --output r1", dir);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    const RunFile reference(run_file_in(dir.path() / "r1"));
    ASSERT_TRUE(reference.is_open());
    const std::int64_t last = reference.steps().back();
    const std::vector<double> u1 = reference.doubles(step_group(last) + "/u");
    for (const int ranks : {2, 3, 4}) {
        SCOPED_TRACE(std::to_string(ranks) + " ranks");
        const std::string out = "r" + std::to_string(ranks);
        const auto run = run_ranks(ranks, common + " --output " + out, dir);
        ASSERT_EQ(run.exit_code, 0) << run.err;
        const RunFile file(run_file_in(dir.path() / out));
        ASSERT_TRUE(file.is_open());
        EXPECT_EQ(file.steps(), reference.steps());
        const std::vector<double> u = file.doubles(step_group(last) + "/u");
        const double difference = relative_difference(u1, u);
        EXPECT_LE(difference, 1e-12);
        std::printf("%s on %d ranks: max |u - u_1| / max |u_1| = %.3g\n", c.input.c_str(), ranks,
                    difference);
        // The run file says how the run was split, and the method.
        const std::string decisions = file.text("/solver_decisions");
        EXPECT_NE(decisions.find("ranks = " + std::to_string(ranks)), std::string::npos);
        EXPECT_NE(decisions.find(c.solver), std::string::npos) << decisions;
        if (ranks == 4 && !c.on_four.empty()) {
            EXPECT_NE(decisions.find(c.on_four), std::string::npos) << decisions;
        }
    }
}

const std::string tight =
    " --set solver.method='\"cg\"' --set solver.preconditioner='\"jacobi\"' "
    "--set solver.rtol=1e-13 ";
// Every level that can be split is (gather_size 0, the CPU's default, said here as well).
const std::string tight_multigrid =
    " --set solver.method='\"cg\"' --set solver.preconditioner='\"multigrid\"' "
    "--set solver.multigrid.gather_size=0 --set solver.rtol=1e-13 ";

INSTANTIATE_TEST_SUITE_P(
    Inputs, DistributedRun,
    ::testing::Values(
        Case{"heat.toml", "--set grid.nx=33 --set grid.ny=33 --set time.end=0.05" + tight,
             "jacobi"},
        Case{"heat_3d.toml",
             "--set grid.nx=13 --set grid.ny=13 --set grid.nz=13 --set time.end=0.04" + tight,
             "jacobi"},
        // 41 planes: the finest level split on 2-4 ranks, a coarse level too on 2 and 3.
        Case{"poisson.toml", "--set grid.nx=41 --set grid.ny=41" + tight_multigrid, "multigrid"},
        // 25 planes: 6 to 13 a rank, the finest level split on 2-4 ranks; on 4 the 13^3
        // level (3-4 planes a rank) split anew over 2 ranks.
        Case{"poisson_3d.toml",
             "--set grid.nx=25 --set grid.ny=25 --set grid.nz=25" + tight_multigrid, "multigrid",
             "over 4 ranks (13x13x13 on 2, from 7x7x7 gathered on each)"},
        Case{"convection_diffusion.toml",
             "--set grid.nx=33 --set grid.ny=33 --set time.end=0.05 --set solver.rtol=1e-13",
             "bicgstab"},
        Case{"convection_diffusion_3d.toml",
             "--set grid.nx=13 --set grid.ny=13 --set grid.nz=13 --set solver.rtol=1e-13",
             "bicgstab"}),
    case_name);

// The same input on the same ranks twice: the same bits (the global sums are taken in rank
// order, whatever the timing).
TEST(Distributed, SameRanksGiveTheSameBitsEveryRun) {
    TemporaryDirectory dir;
    const std::string common = std::string(SIMRUN_SOURCE_DIR) +
                               "/inputs/heat.toml --backend cpu --quiet --set output.vtk=false "
                               "--set grid.nx=33 --set grid.ny=33 --set time.end=0.05 ";
    for (const char* out : {"a", "b"}) {
        const auto run = run_ranks(3, common + "--output " + out, dir);
        ASSERT_EQ(run.exit_code, 0) << run.err;
    }
    const RunFile a(dir.path() / "a" / "heat.h5"), b(dir.path() / "b" / "heat.h5");
    ASSERT_TRUE(a.is_open() && b.is_open());
    for (const std::int64_t step : a.steps()) {
        EXPECT_EQ(a.doubles(step_group(step) + "/u"), b.doubles(step_group(step) + "/u"));
    }
}

// Process grids of boxes (--process-grid): each input's last step on 3 or 4 ranks split in two
// or three axes agrees with one rank to 1e-12, as slabs do, with CG + Jacobi, BiCGStab or CG +
// multigrid (its levels split in boxes too); the run file says how the run was split.
TEST(Distributed, ProcessGridsOfBoxesGiveTheFieldOfOne) {
    TemporaryDirectory dir;
    struct Grids {
        std::string input, settings;
        std::vector<std::string> grids;
    };
    const Grids cases[] = {
        {"heat.toml",
         "--set grid.nx=33 --set grid.ny=29 --set time.end=0.05" + tight,
         {"2x2", "4x1", "3x1"}},
        {"heat_3d.toml",
         "--set grid.nx=13 --set grid.ny=11 --set grid.nz=13 --set time.end=0.04" + tight,
         {"2x2x1", "2x1x2", "1x2x2"}},
        {"poisson.toml", "--set grid.nx=41 --set grid.ny=37" + tight, {"2x2"}},
        {"poisson.toml", "--set grid.nx=41 --set grid.ny=37" + tight_multigrid, {"2x2", "3x1"}},
        {"poisson_3d.toml",
         "--set grid.nx=17 --set grid.ny=15 --set grid.nz=19" + tight_multigrid,
         {"2x1x2", "2x2x1"}},
        {"convection_diffusion.toml",
         "--set grid.nx=33 --set grid.ny=33 --set time.end=0.05 --set solver.rtol=1e-13",
         {"2x2"}},
        {"convection_diffusion_3d.toml",
         "--set grid.nx=13 --set grid.ny=13 --set grid.nz=13 --set solver.rtol=1e-13",
         {"2x1x2"}},
    };
    for (std::size_t index = 0; index < std::size(cases); ++index) {
        const Grids& c = cases[index];
        SCOPED_TRACE(c.input + " " + c.settings);
        const std::string common = std::string(SIMRUN_SOURCE_DIR) + "/inputs/" + c.input +
                                   " --backend cpu --quiet --set output.vtk=false " + c.settings;
        const std::string name = c.input.substr(0, c.input.find('.')) + std::to_string(index);
        const auto one = run_ranks(1, common + " --output " + name + "_r1", dir);
        ASSERT_EQ(one.exit_code, 0) << one.err;
        const RunFile reference(run_file_in(dir.path() / (name + "_r1")));
        ASSERT_TRUE(reference.is_open());
        const std::int64_t last = reference.steps().back();
        const std::vector<double> u1 = reference.doubles(step_group(last) + "/u");
        for (const std::string& grid : c.grids) {
            SCOPED_TRACE(grid);
            int ranks = 1;
            for (std::size_t at = 0; at < grid.size(); at = grid.find('x', at) + 1) {
                ranks *= std::stoi(grid.substr(at));
                if (grid.find('x', at) == std::string::npos) break;
            }
            const std::string out = name + "_" + grid;
            const auto run =
                run_ranks(ranks, common + " --process-grid " + grid + " --output " + out, dir);
            ASSERT_EQ(run.exit_code, 0) << run.err;
            const RunFile file(run_file_in(dir.path() / out));
            ASSERT_TRUE(file.is_open());
            EXPECT_EQ(file.steps(), reference.steps());
            const double difference =
                relative_difference(u1, file.doubles(step_group(last) + "/u"));
            EXPECT_LE(difference, 1e-12);
            std::printf("%s on a %s process grid: max |u - u_1| / max |u_1| = %.3g\n",
                        c.input.c_str(), grid.c_str(), difference);
            const std::string decisions = file.text("/solver_decisions");
            EXPECT_NE(decisions.find("a " + grid + " process grid of boxes"), std::string::npos)
                << decisions;
            if (c.settings.find("multigrid") != std::string::npos) {
                EXPECT_NE(decisions.find("multigrid = "), std::string::npos) << decisions;
                EXPECT_NE(decisions.find("over " + std::to_string(ranks) + " ranks"),
                          std::string::npos)
                    << decisions;
            }
        }
    }
}

// A process grid that does not hold the ranks or is not PxQ[xR] is refused: exit 2 on every
// rank, said once.
TEST(Distributed, ProcessGridsThatCannotRunAreRefusedOnce) {
    TemporaryDirectory dir;
    const std::string common = std::string(SIMRUN_SOURCE_DIR) +
                               "/inputs/poisson.toml --backend cpu --quiet --set grid.nx=33 "
                               "--set grid.ny=33 ";
    struct Refusal {
        int ranks;
        std::string arguments, says;
    };
    for (const Refusal& r :
         {Refusal{3, "--process-grid 2x2", "--process-grid 2x2 holds 4 ranks, but the run has 3"},
          Refusal{2, "--process-grid 2x", "expected PxQ or PxQxR"},
          Refusal{2, "--process-grid 1x2x1x1", "expected PxQ or PxQxR"},
          Refusal{1, "--process-grid 2x1", "--process-grid 2x1 holds 2 ranks, but the run has 1"},
          Refusal{2, "--process-grid 1x1x2", "a 2D grid is split along x and y only"}}) {
        SCOPED_TRACE(r.arguments);
        const auto run = run_ranks(r.ranks, common + r.arguments, dir);
        EXPECT_EQ(run.exit_code, 2) << run.err;
        EXPECT_NE(run.err.find(r.says), std::string::npos) << run.err;
        const auto first = run.err.find(r.says);
        EXPECT_EQ(run.err.find(r.says, first + 1), std::string::npos) << run.err;
    }
}

// Where multigrid pays, a run on a process grid of boxes chooses it as one process does, its
// levels split in boxes over the ranks.
TEST(Distributed, BoxesTakeMultigridWhereItPays) {
    TemporaryDirectory dir;
    const auto run = run_ranks(4,
                               std::string(SIMRUN_SOURCE_DIR) +
                                   "/inputs/poisson.toml --backend cpu --quiet --set "
                                   "output.vtk=false --set grid.nx=129 --set grid.ny=129 "
                                   "--process-grid 2x2 --output boxes",
                               dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const RunFile file(run_file_in(dir.path() / "boxes"));
    ASSERT_TRUE(file.is_open());
    const std::string decisions = file.text("/solver_decisions");
    EXPECT_NE(decisions.find("preconditioner = multigrid"), std::string::npos) << decisions;
    EXPECT_NE(decisions.find("multigrid = 4 levels: 129x129 -> 65x65"), std::string::npos)
        << decisions;
    EXPECT_NE(decisions.find("over 4 ranks"), std::string::npos) << decisions;
}

// A run on 2 ranks (slabs) continued on a 2x2 process grid, and one on 2x2 continued on 3
// slabs: the last step of the run on one rank throughout, to 1e-12.
TEST(Distributed, RestartBetweenSlabsAndBoxes) {
    TemporaryDirectory dir;
    const std::string common = std::string(SIMRUN_SOURCE_DIR) +
                               "/inputs/heat.toml --backend cpu --quiet --set output.vtk=false "
                               "--set grid.nx=33 --set grid.ny=29 --set output.every=1" +
                               tight;
    const auto full = run_ranks(1, common + " --set time.end=0.06 --output full", dir);
    ASSERT_EQ(full.exit_code, 0) << full.err;
    const RunFile reference(dir.path() / "full" / "heat.h5");
    ASSERT_TRUE(reference.is_open());
    struct Switch {
        int first_ranks;
        std::string first_grid;
        int then_ranks;
        std::string then_grid;
    };
    for (const Switch& s :
         {Switch{2, "", 4, "--process-grid 2x2"}, Switch{4, "--process-grid 2x2", 3, ""}}) {
        SCOPED_TRACE(std::to_string(s.first_ranks) + " " + s.first_grid + " then " +
                     std::to_string(s.then_ranks) + " " + s.then_grid);
        const std::string part = "part" + std::to_string(s.first_ranks);
        const auto first =
            run_ranks(s.first_ranks,
                      common + " --set time.end=0.03 --output " + part + " " + s.first_grid, dir);
        ASSERT_EQ(first.exit_code, 0) << first.err;
        const std::string rest = "rest" + std::to_string(s.then_ranks);
        const auto continued = run_ranks(s.then_ranks,
                                         common + " --set time.end=0.06 --output " + rest +
                                             " --restart " + part + "/heat.h5 " + s.then_grid,
                                         dir);
        ASSERT_EQ(continued.exit_code, 0) << continued.err;
        const RunFile file(dir.path() / rest / "heat.h5");
        ASSERT_TRUE(file.is_open());
        EXPECT_EQ(file.steps(), (std::vector<std::int64_t>{3, 4, 5, 6}));
        EXPECT_LE(relative_difference(reference.doubles(step_group(6) + "/u"),
                                      file.doubles(step_group(6) + "/u")),
                  1e-12);
    }
}

// `common` on 3 ranks to t = 0.06 into full/, on 2 ranks to t = 0.03 into `part`/, then
// continued on 3 ranks to t = 0.06 into `rest`/ from part's run file (`rest` == `part`: in
// place). Fails fatally where a run does not exit 0.
void run_two_then_three(const TemporaryDirectory& dir, const std::string& common,
                        const std::string& part, const std::string& rest) {
    const auto full = run_ranks(3, common + " --set time.end=0.06 --output full", dir);
    ASSERT_EQ(full.exit_code, 0) << full.err;
    const auto first = run_ranks(2, common + " --set time.end=0.03 --output " + part, dir);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    const auto continued = run_ranks(
        3, common + " --set time.end=0.06 --output " + rest + " --restart " + part + "/heat.h5",
        dir);
    ASSERT_EQ(continued.exit_code, 0) << continued.err;
}

// A run stopped at step 3 on 2 ranks and continued on 3 from its run file ends where the run
// on 3 ranks throughout ends, to 1e-12.
TEST(Distributed, RestartOnAnotherRankCount) {
    TemporaryDirectory dir;
    const std::string common = std::string(SIMRUN_SOURCE_DIR) +
                               "/inputs/heat.toml --backend cpu --quiet --set output.vtk=false "
                               "--set grid.nx=33 --set grid.ny=33 --set output.every=1" +
                               tight;
    run_two_then_three(dir, common, "part", "rest");
    if (::testing::Test::HasFatalFailure()) return;
    const RunFile reference(dir.path() / "full" / "heat.h5"),
        continued(dir.path() / "rest" / "heat.h5");
    ASSERT_TRUE(reference.is_open() && continued.is_open());
    EXPECT_EQ(continued.steps(), (std::vector<std::int64_t>{3, 4, 5, 6}));
    EXPECT_LE(relative_difference(reference.doubles(step_group(6) + "/u"),
                                  continued.doubles(step_group(6) + "/u")),
              1e-12);
}

// The files a .pvd lists, in order.
std::vector<std::string> pvd_files(const std::filesystem::path& pvd) {
    const std::string text = testing::read_text(pvd);
    const std::regex dataset(R"re(file="([^"]*)")re");
    std::vector<std::string> files;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), dataset);
         it != std::sregex_iterator(); ++it) {
        files.push_back((*it)[1].str());
    }
    return files;
}

// An image VTK read (the reader's output), its extent and its point array u.
struct Image {
    std::array<int, 6> extent{};
    std::vector<double> u;
};

template <typename Reader>
Image read_image(const std::filesystem::path& path) {
    vtkNew<Reader> reader;
    reader->SetFileName(path.c_str());
    reader->Update();
    Image image;
    EXPECT_EQ(reader->GetErrorCode(), 0u) << path;
    vtkImageData* data = reader->GetOutput();
    data->GetExtent(image.extent.data());
    vtkDataArray* u = data->GetPointData()->GetArray("u");
    EXPECT_NE(u, nullptr) << path;
    if (u == nullptr) return image;
    for (vtkIdType i = 0; i < u->GetNumberOfTuples(); ++i) image.u.push_back(u->GetTuple1(i));
    return image;
}

// Each step of the series `pieces` (a .pvd of .pvti steps) reads through VTK's parallel
// reader as the same step of `whole` (a .pvd of .vti files): the same extent, the same values
// to 1e-12 (the solves' sums are taken in another order). Returns rank 1's piece of the last
// step, read alone.
Image expect_pieces_read_as_whole_files(const std::filesystem::path& whole,
                                        const std::filesystem::path& pieces) {
    const auto serial_steps = pvd_files(whole);
    const auto steps = pvd_files(pieces);
    EXPECT_EQ(steps.size(), serial_steps.size());
    EXPECT_GE(steps.size(), 2u);
    for (std::size_t k = 0; k < std::min(steps.size(), serial_steps.size()); ++k) {
        EXPECT_EQ(steps[k], serial_steps[k].substr(0, serial_steps[k].size() - 4) + ".pvti");
        const Image reference =
            read_image<vtkXMLImageDataReader>(whole.parent_path() / serial_steps[k]);
        const Image image = read_image<vtkXMLPImageDataReader>(pieces.parent_path() / steps[k]);
        EXPECT_EQ(image.extent, reference.extent) << steps[k];
        EXPECT_LE(relative_difference(reference.u, image.u), 1e-12) << steps[k];
    }
    if (steps.empty()) return {};
    const std::string step = steps.back().substr(0, steps.back().size() - 5);
    return read_image<vtkXMLImageDataReader>(pieces.parent_path() / step / (step + "_1.vti"));
}

// On 3 ranks each VTK step is a .pvti of 3 pieces, each piece a rank's planes and the next
// rank's first plane; VTK's parallel reader puts them together into the image one rank
// writes: the same extent, and the same values to 1e-12 (the solves' sums are taken in another
// order). The run file on 3 ranks holds the same steps, fields and attributes as on one.
TEST(Distributed, VtkPiecesReadAsTheImageOfOneRank) {
    TemporaryDirectory dir;
    for (const std::string grid : {"--set grid.nx=33 --set grid.ny=33 --set time.end=0.05 ",
                                   "--set grid.nx=13 --set grid.ny=11 --set grid.nz=13 "
                                   "--set time.end=0.04 "}) {
        const bool three_d = grid.find("nz") != std::string::npos;
        SCOPED_TRACE(three_d ? "3D" : "2D");
        const std::string input = three_d ? "heat_3d" : "heat";
        const std::string common = std::string(SIMRUN_SOURCE_DIR) + "/inputs/" + input +
                                   ".toml --backend cpu --quiet " + grid + tight;
        const std::string one = input + "_r1", three = input + "_r3";
        const std::string base = "heat";  // the problem's name: both inputs' outputs
        const auto serial = run_ranks(1, common + " --output " + one, dir);
        ASSERT_EQ(serial.exit_code, 0) << serial.err;
        const auto run = run_ranks(3, common + " --output " + three, dir);
        ASSERT_EQ(run.exit_code, 0) << run.err;

        // A piece alone: the middle rank's planes (33 split 11/11/11, 13 split 5/4/4) and the
        // last rank's first plane.
        const Image piece = expect_pieces_read_as_whole_files(dir.path() / one / (base + ".pvd"),
                                                              dir.path() / three / (base + ".pvd"));
        const int planes = three_d ? 13 : 33, axis = three_d ? 2 : 1;
        const int first = planes / 3 + (planes % 3 > 0 ? 1 : 0);
        const int last = first + planes / 3 + (planes % 3 > 1 ? 1 : 0);
        EXPECT_EQ(piece.extent[2 * axis], first);
        EXPECT_EQ(piece.extent[2 * axis + 1], last);  // the next rank's first plane, shared

        const RunFile reference(dir.path() / one / (base + ".h5"));
        const RunFile file(dir.path() / three / (base + ".h5"));
        ASSERT_TRUE(reference.is_open() && file.is_open());
        EXPECT_EQ(file.steps(), reference.steps());
        for (const std::int64_t k : reference.steps()) {
            std::vector<hsize_t> extent, reference_extent;
            const auto u = file.doubles(step_group(k) + "/u", &extent);
            const auto u1 = reference.doubles(step_group(k) + "/u", &reference_extent);
            EXPECT_EQ(extent, reference_extent);
            EXPECT_LE(relative_difference(u1, u), 1e-12);
            EXPECT_EQ(file.string_attribute(step_group(k), "method"),
                      reference.string_attribute(step_group(k), "method"));
        }
        EXPECT_EQ(testing::read_text(dir.path() / three / (base + ".xmf")),
                  testing::read_text(dir.path() / one / (base + ".xmf")));
    }
}

// On a process grid of boxes each VTK step's pieces are the boxes, each widened by a node
// towards the next boxes along each axis: VTK's parallel reader puts them together into the
// image one rank writes, to 1e-12; and the run file holds the one rank's fields.
TEST(Distributed, VtkPiecesOfBoxesReadAsTheImageOfOneRank) {
    TemporaryDirectory dir;
    struct Boxes {
        std::string input, grid, parts;
        std::array<int, 6> piece_one;  // rank 1's piece's extent
    };
    // 2D 17 x 15 as 2 x 2: x 0-8 | 9-16, y 0-7 | 8-14; rank 1 holds x 9-16, y 0-7 (to y 8).
    // 3D 9 x 7 x 9 as 2 x 1 x 2: rank 1 holds x 5-8, all y, z 0-4 (to z 5).
    for (const Boxes& b : {Boxes{"heat",
                                 "--set grid.nx=17 --set grid.ny=15 --set time.end=0.05 ",
                                 "2x2",
                                 {9, 16, 0, 8, 0, 0}},
                           Boxes{"heat_3d",
                                 "--set grid.nx=9 --set grid.ny=7 --set grid.nz=9 "
                                 "--set time.end=0.04 ",
                                 "2x1x2",
                                 {5, 8, 0, 6, 0, 5}}}) {
        SCOPED_TRACE(b.input + " on " + b.parts);
        const std::string common = std::string(SIMRUN_SOURCE_DIR) + "/inputs/" + b.input +
                                   ".toml --backend cpu --quiet " + b.grid + tight;
        const std::string one = b.input + "_r1", four = b.input + "_" + b.parts;
        ASSERT_EQ(run_ranks(1, common + " --output " + one, dir).exit_code, 0);
        const auto run =
            run_ranks(4, common + " --process-grid " + b.parts + " --output " + four, dir);
        ASSERT_EQ(run.exit_code, 0) << run.err;
        const Image piece = expect_pieces_read_as_whole_files(dir.path() / one / "heat.pvd",
                                                              dir.path() / four / "heat.pvd");
        EXPECT_EQ(piece.extent, b.piece_one);
        const RunFile reference(dir.path() / one / "heat.h5"), file(dir.path() / four / "heat.h5");
        ASSERT_TRUE(reference.is_open() && file.is_open());
        EXPECT_EQ(file.steps(), reference.steps());
        for (const std::int64_t k : reference.steps()) {
            EXPECT_LE(relative_difference(reference.doubles(step_group(k) + "/u"),
                                          file.doubles(step_group(k) + "/u")),
                      1e-12);
        }
    }
}

// A write that fails on one rank alone, not rank 0 (its piece of the first step cannot replace
// the directory standing at its name): every rank stops with 1 within the time limit, and rank
// 0 reports that rank's own message once; no index lists the step.
TEST(Distributed, PieceWriteFailureOnOneRankStopsEveryRankWithItsMessage) {
    TemporaryDirectory dir;
    const auto blocked = dir.path() / "out" / "heat_000000" / "heat_000000_1.vti";
    std::filesystem::create_directories(blocked);
    dir.write("out/heat_000000/heat_000000_1.vti/keep", "in the way");
    const auto run = run_ranks(3,
                               std::string(SIMRUN_SOURCE_DIR) +
                                   "/inputs/heat.toml --backend cpu --quiet --set grid.nx=17 "
                                   "--set grid.ny=17 --set time.end=0.05 --output out",
                               dir);
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_NE(run.err.find("simrun: rank 1 of 3: error:"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("heat_000000_1.vti"), std::string::npos) << run.err;
    EXPECT_TRUE(reported_once(run.err)) << run.err;
    EXPECT_TRUE(pvd_files(dir.path() / "out" / "heat.pvd").empty());
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "out" / "heat_000000.pvti"));
    const RunFile file(dir.path() / "out" / "heat.h5");
    ASSERT_TRUE(file.is_open());
    EXPECT_TRUE(file.steps().empty());
}

// Starts `arguments` on 3 ranks in the background, waits until its .pvd lists `listed` steps
// (60 s at most), then sends SIGTERM to the launcher, which passes it to every rank: a stop in
// the middle of the output whatever the machine's load. Returns the launcher's exit code (0
// where the run ended first).
int run_until_listed_then_stop(const TemporaryDirectory& dir, const std::string& arguments,
                               const std::string& out, int listed) {
    const std::string command =
        "cd '" + dir.path().string() + "' && { " + mpirun(3) + " '" SIMRUN_EXECUTABLE "' " +
        arguments + " --output " + out +
        " >/dev/null 2>&1 & pid=$!; for i in $(seq 600); do n=$(grep -c '<DataSet' " + out +
        "/heat.pvd 2>/dev/null); [ \"${n:-0}\" -ge " + std::to_string(listed) +
        " ] && break; sleep 0.1; done; kill -TERM $pid; wait $pid; }";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A run on 3 ranks writing every step, ended by SIGTERM to the launcher once it has listed 2
// and 6 steps (mpirun passes it on; the ranks agree to stop after a step, StopSignals, unless
// mpirun's SIGKILL comes first): each step the .pvd lists reads whole through its pieces, each
// step the run file holds reads whole and finite, and the run file holds no step the .pvd does
// not list.
TEST(Distributed, KilledRunLeavesEveryListedStepReadable) {
    TemporaryDirectory dir;
    const std::string arguments = std::string(SIMRUN_SOURCE_DIR) +
                                  "/inputs/heat.toml --backend cpu --quiet --set grid.nx=257 "
                                  "--set grid.ny=257 --set time.end=10 --set output.every=1";
    const std::size_t points = 257 * 257;
    int stopped_with_steps = 0;
    for (const int after : {2, 6}) {
        SCOPED_TRACE("stopped once " + std::to_string(after) + " steps were listed");
        const std::string out = "out" + std::to_string(after);
        const int code = run_until_listed_then_stop(dir, arguments, out, after);
        const auto directory = dir.path() / out;
        std::vector<std::string> listed;
        if (std::filesystem::exists(directory / "heat.pvd")) {
            listed = pvd_files(directory / "heat.pvd");
        }
        for (std::size_t n = 0; n < listed.size(); ++n) {
            char name[32];
            std::snprintf(name, sizeof name, "heat_%06zu.pvti", n);
            ASSERT_EQ(listed[n], name);  // a prefix of the steps 0, 1, 2, ...
            const Image image = read_image<vtkXMLPImageDataReader>(directory / listed[n]);
            ASSERT_EQ(image.u.size(), points) << listed[n];
            for (const double u : image.u) ASSERT_TRUE(std::isfinite(u)) << listed[n];
        }
        if (code != 0 && !listed.empty()) ++stopped_with_steps;
        if (!std::filesystem::exists(directory / "heat.h5")) continue;
        const RunFile file(directory / "heat.h5");
        ASSERT_TRUE(file.is_open());
        const auto steps = file.steps();
        EXPECT_LE(steps.size(), listed.size());
        for (const std::int64_t step : steps) {
            const auto u = file.doubles(step_group(step) + "/u");
            ASSERT_EQ(u.size(), points) << step;
            for (const double value : u) ASSERT_TRUE(std::isfinite(value)) << step;
        }
    }
    // Not a test that passes by never stopping a run that has written.
    EXPECT_EQ(stopped_with_steps, 2);
}

// SIGTERM sent to one rank alone (the last mpirun started), once the run has written two output
// steps (every 7th): the ranks agree after every step, so every rank stops after the same step
// and writes it. Each exits with the shell's code for the signal and rank 0 says so; the run
// file and the .pvd end on that step, every piece whole.
TEST(Distributed, ASignalToOneRankStopsEveryRankAfterTheSameWrittenStep) {
    TemporaryDirectory dir;
    const std::string arguments = std::string(SIMRUN_SOURCE_DIR) +
                                  "/inputs/heat.toml --backend cpu --quiet --set grid.nx=257 "
                                  "--set grid.ny=257 --set time.end=10 --set output.every=7";
    const std::size_t points = 257 * 257;
    const auto stopped = testing::run_stop_script(
        dir, mpirun(2) + " '" SIMRUN_EXECUTABLE "' " + arguments +
                 " --output out 2> err.txt &\npid=$!\n" + testing::wait_until_xmf_lists(2) +
                 // timeout, then mpirun, then its ranks.
                 "launcher=$(pgrep -P $pid | head -1)\n"
                 "kill -TERM $(pgrep -P $launcher | tail -1)\n"
                 "wait $pid\n");
    const std::vector<std::int64_t> expected =
        testing::steps_of_stopped_run(stopped, SIGTERM, 7, 1000);
    ASSERT_FALSE(expected.empty());
    const std::int64_t last = expected.back();

    const auto out = dir.path() / "out";
    const RunFile file(out / "heat.h5");
    ASSERT_TRUE(file.is_open());
    EXPECT_EQ(file.steps(), expected);
    const std::vector<std::string> listed = pvd_files(out / "heat.pvd");
    ASSERT_EQ(listed.size(), expected.size());
    char name[32];
    std::snprintf(name, sizeof name, "heat_%06lld.pvti", static_cast<long long>(last));
    EXPECT_EQ(listed.back(), name);
    const Image image = read_image<vtkXMLPImageDataReader>(out / listed.back());
    ASSERT_EQ(image.u.size(), points);
    EXPECT_EQ(image.u, file.doubles(step_group(last) + "/u"));
}

// A run on 2 ranks continued in place on 3 (its run file appended to collectively, its series
// continued): the run file and the .pvd list every step once, the run file records the
// restart, and the last field is the one of a run on 3 ranks throughout.
TEST(Distributed, RestartInPlaceOnAnotherRankCountAppendsToBothOutputs) {
    TemporaryDirectory dir;
    const std::string common = std::string(SIMRUN_SOURCE_DIR) +
                               "/inputs/heat.toml --backend cpu --quiet --set grid.nx=33 "
                               "--set grid.ny=33 --set output.every=1" +
                               tight;
    run_two_then_three(dir, common, "run", "run");
    if (::testing::Test::HasFatalFailure()) return;
    const RunFile reference(dir.path() / "full" / "heat.h5"), file(dir.path() / "run" / "heat.h5");
    ASSERT_TRUE(reference.is_open() && file.is_open());
    EXPECT_EQ(file.steps(), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6}));
    EXPECT_TRUE(file.exists("/restarts/0"));
    EXPECT_LE(relative_difference(reference.doubles(step_group(6) + "/u"),
                                  file.doubles(step_group(6) + "/u")),
              1e-12);
    const auto listed = pvd_files(dir.path() / "run" / "heat.pvd");
    ASSERT_EQ(listed.size(), 7u);
    for (std::size_t n = 0; n < listed.size(); ++n) {
        char name[32];
        std::snprintf(name, sizeof name, "heat_%06zu.pvti", n);
        EXPECT_EQ(listed[n], name);
        // Steps 0-3 in 2 pieces, 4-6 in 3.
        const std::string pvti = testing::read_text(dir.path() / "run" / listed[n]);
        std::size_t pieces = 0;
        for (auto at = pvti.find("<Piece"); at != std::string::npos;
             at = pvti.find("<Piece", at + 1))
            ++pieces;
        EXPECT_EQ(pieces, n <= 3 ? 2u : 3u) << listed[n];
        EXPECT_EQ(read_image<vtkXMLPImageDataReader>(dir.path() / "run" / listed[n]).u.size(),
                  33u * 33u);
    }
}

// Messages beyond MPI's int counts travel in pieces: with pieces of 64 bytes
// (SIMRUN_MPI_MESSAGE_BYTES, every exchange, gather and all-gather cut up), a run on 3 ranks
// writes the fields of the run with whole messages, to the bit: multigrid's set-up and cycle
// (ghost rows, halos, the gathered level), the solver's sums, the output's
// shared planes.
TEST(Distributed, MessagesInPiecesGiveTheSameBits) {
    TemporaryDirectory dir;
    const std::string common = std::string(SIMRUN_SOURCE_DIR) +
                               "/inputs/poisson.toml --backend cpu --quiet --set grid.nx=41 "
                               "--set grid.ny=41" +
                               tight_multigrid;
    const auto whole = run_ranks(3, common + " --output whole", dir);
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    const auto pieces = testing::run_simrun(common + " --output pieces", dir.path(),
                                            "SIMRUN_MPI_MESSAGE_BYTES=64 " + mpirun(3));
    ASSERT_EQ(pieces.exit_code, 0) << pieces.err;
    const RunFile a(dir.path() / "whole" / "poisson.h5"), b(dir.path() / "pieces" / "poisson.h5");
    ASSERT_TRUE(a.is_open() && b.is_open());
    ASSERT_EQ(a.steps(), b.steps());
    EXPECT_EQ(a.doubles(step_group(a.steps().back()) + "/u"),
              b.doubles(step_group(b.steps().back()) + "/u"));
    EXPECT_EQ(read_image<vtkXMLPImageDataReader>(dir.path() / "whole" / "poisson_000000.pvti").u,
              read_image<vtkXMLPImageDataReader>(dir.path() / "pieces" / "poisson_000000.pvti").u);
}

// An input error is reported once, by rank 0, and every rank exits with 2.
TEST(Distributed, InputErrorExitsTwoOnEveryRankReportedOnce) {
    TemporaryDirectory dir;
    dir.write("bad.toml",
              "[problem]\ntype = \"heat\"\nalpha = -1\n[grid]\nnx = 17\nny = 17\n"
              "[time]\ndt = 0.01\nend = 0.1\n");
    const auto run = run_ranks(3, "bad.toml --backend cpu --quiet", dir);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_NE(run.err.find("input error"), std::string::npos) << run.err;
    // Once: the message's own text appears a single time.
    const auto first = run.err.find("input error");
    EXPECT_EQ(run.err.find("input error", first + 1), std::string::npos) << run.err;
}

// A source that is not finite at nodes of one rank's slab only (y = 0.75 lies in the last of
// 3 slabs of 17 planes): every rank stops with 2 and the serial run's message, reported once.
TEST(Distributed, DataNotFiniteOnOneRankStopsEveryRankWithTheSerialMessage) {
    TemporaryDirectory dir;
    const std::string arguments = std::string(SIMRUN_SOURCE_DIR) +
                                  "/inputs/heat.toml --backend cpu --quiet --set grid.nx=17 "
                                  "--set grid.ny=17 --set time.end=0.05 --set "
                                  "problem.source='\"1/(y - 0.75)\"' --set output.vtk=false";
    const auto serial = testing::run_simrun(arguments, dir.path());
    ASSERT_EQ(serial.exit_code, 2) << serial.err;
    const auto run = run_ranks(3, arguments, dir);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    // The serial message first (the launcher adds its own lines after it), and only once.
    EXPECT_EQ(run.err.substr(0, serial.err.size()), serial.err) << run.err;
    EXPECT_EQ(run.err.find("simrun:", 1), std::string::npos) << run.err;
}

// A coefficient that is not positive from y = 0.7 on: each rank checks its own planes (no rank
// the whole grid), and the first node in node order is reported, as one process and `simrun
// check` report it (41 planes on 3 ranks: the node lies on the last rank's first plane).
TEST(Distributed, CoefficientCheckedOnEachRanksPlanesReportsTheFirstNode) {
    TemporaryDirectory dir;
    const std::string arguments = std::string(SIMRUN_SOURCE_DIR) +
                                  "/inputs/poisson.toml --backend cpu --quiet --set grid.nx=41 "
                                  "--set grid.ny=41 --set problem.k='\"0.7 - y\"'";
    const auto serial = testing::run_simrun(arguments, dir.path());
    ASSERT_EQ(serial.exit_code, 2) << serial.err;
    EXPECT_NE(serial.err.find("key 'problem.k': k must be positive and finite; it is not near "
                              "(0.000000, 0.700000, 0.000000)"),
              std::string::npos)
        << serial.err;
    const auto check =
        testing::run_simrun("check " + arguments.substr(0, arguments.find(" --backend")) +
                                arguments.substr(arguments.find(" --set")),
                            dir.path());
    EXPECT_EQ(check.exit_code, 2) << check.err;
    EXPECT_NE(check.err.find("it is not near (0.000000, 0.700000, 0.000000)"), std::string::npos)
        << check.err;
    const auto run = run_ranks(3, arguments, dir);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_EQ(run.err.substr(0, serial.err.size()), serial.err) << run.err;
    EXPECT_EQ(run.err.find("simrun:", 1), std::string::npos) << run.err;
}

// A failure of one rank alone, where the others cannot know it (rank 0 cannot write its
// outputs): every rank stops with 1, the message naming the rank, within the time limit.
TEST(Distributed, WriteFailureOnRankZeroStopsEveryRank) {
    TemporaryDirectory dir;
    dir.write("file", "not a directory");
    const auto run = run_ranks(3,
                               std::string(SIMRUN_SOURCE_DIR) +
                                   "/inputs/heat.toml --backend cpu --quiet --set grid.nx=17 "
                                   "--set grid.ny=17 --set time.end=0.05 --output file/out",
                               dir);
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_NE(run.err.find("rank 0 of 3"), std::string::npos) << run.err;
}

// As many ranks as planes (a slab of one plane each: the band reaches past every block).
TEST(Distributed, OnePlanePerRank) {
    TemporaryDirectory dir;
    const std::string common = std::string(SIMRUN_SOURCE_DIR) +
                               "/inputs/poisson.toml --backend cpu --quiet --set output.vtk=false "
                               "--set grid.nx=9 --set grid.ny=4" +
                               tight;
    const auto one = run_ranks(1, common + " --output r1", dir);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    const auto four = run_ranks(4, common + " --output r4", dir);
    ASSERT_EQ(four.exit_code, 0) << four.err;
    const RunFile a(run_file_in(dir.path() / "r1")), b(run_file_in(dir.path() / "r4"));
    EXPECT_LE(relative_difference(a.doubles(step_group(0) + "/u"), b.doubles(step_group(0) + "/u")),
              1e-12);
}

// Over ranks the summary says what the solver spent communicating. CG + Jacobi applies the
// operator (one halo exchange) and takes at least one global sum in every iteration; one rank
// has nothing to say.
TEST(Distributed, SummarySaysWhatTheSolverSpentCommunicating) {
    TemporaryDirectory dir;
    const std::string common = std::string(SIMRUN_SOURCE_DIR) +
                               "/inputs/poisson.toml --backend cpu --set output.vtk=false "
                               "--set grid.nx=65 --set grid.ny=65 --set solver.method='\"cg\"' "
                               "--set solver.preconditioner='\"jacobi\"'";
    const auto one = run_ranks(1, common + " --output r1", dir);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    EXPECT_EQ(one.out.find("communication"), std::string::npos) << one.out;
    const auto two = run_ranks(2, common + " --output r2", dir);
    ASSERT_EQ(two.exit_code, 0) << two.err;
    std::smatch done, spent;
    ASSERT_TRUE(std::regex_search(two.out, done, std::regex("steady solve; (\\d+) solver iter")))
        << two.out;
    ASSERT_TRUE(std::regex_search(
        two.out, spent,
        std::regex("communication, each kind on its slowest rank \\(of ([0-9.]+) s; working "
                   "[0-9.]+-[0-9.]+ s over the ranks\\): halo "
                   "exchanges (\\d+) in ([0-9.]+) s \\([0-9.]+%\\), sums (\\d+) in ([0-9.]+) s")))
        << two.out;
    const long iterations = std::stol(done[1]);
    EXPECT_GE(std::stol(spent[2]), iterations);
    EXPECT_GE(std::stol(spent[4]), iterations);
    // Each is a part of the solver's time (printed to the millisecond).
    EXPECT_LE(std::stod(spent[3]), std::stod(spent[1]) + 1e-3);
    EXPECT_LE(std::stod(spent[5]), std::stod(spent[1]) + 1e-3);
}

// Ranks left unbound on one host share its cores: each takes the cores it may run on (this
// process's, which mpirun --bind-to none hands on) divided by the ranks; a thread count the user
// set is kept.
TEST(Distributed, RanksOfOneHostShareItsCores) {
    TemporaryDirectory dir;
    cpu_set_t mask;
    ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
    const int cores = CPU_COUNT(&mask);
    const std::string unbound =
        "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader "
        "OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1 "
        "timeout -k 10 120 " SIMRUN_MPIEXEC " --bind-to none -np 2";
    const std::string arguments = std::string(SIMRUN_SOURCE_DIR) +
                                  "/inputs/poisson.toml --backend cpu --set output.vtk=false "
                                  "--set grid.nx=33 --set grid.ny=33 --output out";
    const auto shared =
        testing::run_simrun(arguments, dir.path(), "env -u OMP_NUM_THREADS " + unbound);
    ASSERT_EQ(shared.exit_code, 0) << shared.err;
    const std::string each = "OpenMP, " + std::to_string(std::max(1, cores / 2)) + " threads";
    EXPECT_NE(shared.out.find(each), std::string::npos) << each << " expected:\n" << shared.out;
    const auto chosen =
        testing::run_simrun(arguments, dir.path(), "env OMP_NUM_THREADS=3 " + unbound);
    ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
    EXPECT_NE(chosen.out.find("OpenMP, 3 threads"), std::string::npos) << chosen.out;
}

// simrun verify over ranks, in slabs and on a process grid of boxes: the observed orders of one
// rank (the levels' solves to 1e-12, so the errors are the discretisation's).
TEST(Distributed, VerifyObservesTheOrdersOfOneRank) {
    TemporaryDirectory dir;
    for (const char* input : {"heat_crank_nicolson_2d", "poisson_3d", "poisson_neumann_2d"}) {
        SCOPED_TRACE(input);
        const std::string arguments = "verify " + std::string(SIMRUN_SOURCE_DIR) +
                                      "/inputs/verify/" + input +
                                      ".toml --backend cpu --json --levels 3";
        const auto one = run_ranks(1, arguments, dir);
        ASSERT_EQ(one.exit_code, 0) << one.err;
        const auto three = run_ranks(3, arguments, dir);
        ASSERT_EQ(three.exit_code, 0) << three.err;
        const auto order = [](const std::string& json) {
            const auto at = json.find("\"observed_order_space\":");
            return at == std::string::npos ? -1.0 : std::stod(json.substr(at + 23));
        };
        EXPECT_GT(order(one.out), 0.9);
        EXPECT_NEAR(order(three.out), order(one.out), 1e-6) << one.out << three.out;
        // On a process grid of boxes (4 ranks) too.
        const std::string boxes = input == std::string("poisson_3d") ? "2x1x2" : "2x2";
        const auto four = run_ranks(4, arguments + " --process-grid " + boxes, dir);
        ASSERT_EQ(four.exit_code, 0) << four.err;
        EXPECT_NEAR(order(four.out), order(one.out), 1e-6) << one.out << four.out;
    }
}

// A back-end this build or machine lacks: the one-process message, once, exit 2.
TEST(Distributed, MissingBackEndIsAUsageErrorOnEveryRank) {
    if (solvers::cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present";
    TemporaryDirectory dir;
    const std::string arguments = std::string(SIMRUN_SOURCE_DIR) +
                                  "/inputs/heat.toml --backend cuda --quiet --set grid.nx=17 "
                                  "--set grid.ny=17";
    const auto serial = testing::run_simrun(arguments, dir.path());
    ASSERT_EQ(serial.exit_code, 2) << serial.err;
    const auto run = run_ranks(2, arguments, dir);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_EQ(run.err.substr(0, serial.err.size()), serial.err) << run.err;
    EXPECT_EQ(run.err.find("simrun:", 1), std::string::npos) << run.err;
}

// The commands that do not run split are refused once, exit 2.
TEST(Distributed, CheckUnderSeveralRanksIsRefusedOnce) {
    TemporaryDirectory dir;
    const auto run =
        run_ranks(2, "check " + std::string(SIMRUN_SOURCE_DIR) + "/inputs/heat.toml", dir);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_NE(run.err.find("usage error: only a run"), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find("simrun:", 1), std::string::npos) << run.err;
}

// More ranks than planes: said once, exit 2.
TEST(Distributed, MoreRanksThanPlanesIsAnInputError) {
    TemporaryDirectory dir;
    const auto run = run_ranks(4,
                               std::string(SIMRUN_SOURCE_DIR) +
                                   "/inputs/poisson.toml --backend cpu --quiet --set grid.nx=5 "
                                   "--set grid.ny=3",
                               dir);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_NE(run.err.find("each rank needs at least one"), std::string::npos) << run.err;
}

// The steps an .xmf lists (its grids named step_NNNNNN), in order.
std::vector<std::int64_t> xmf_steps(const std::filesystem::path& xmf) {
    const std::string text = testing::read_text(xmf);
    const std::regex grid(R"re(<Grid Name="step_([0-9]+)")re");
    std::vector<std::int64_t> steps;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), grid);
         it != std::sregex_iterator(); ++it) {
        steps.push_back(std::stoll((*it)[1].str()));
    }
    return steps;
}

// The steps a .pvd lists (from its files' names, <basename>_NNNNNN.pvti), in order.
std::vector<std::int64_t> pvd_steps(const std::filesystem::path& pvd) {
    std::vector<std::int64_t> steps;
    for (const auto& file : pvd_files(pvd)) {
        steps.push_back(std::stoll(file.substr(file.rfind('_') + 1)));
    }
    return steps;
}

std::vector<std::int64_t> steps_from(std::int64_t first, std::int64_t last) {
    std::vector<std::int64_t> steps;
    for (std::int64_t step = first; step <= last; ++step) steps.push_back(step);
    return steps;
}

// Every step the run file holds reads whole and finite; every step the .xmf lists is one of
// them (a prefix: an index may lag where its rewrite failed), and every step the .pvd lists
// has its .pvti. Where `whole`, each index lists every step the run file holds.
void expect_complete_steps(const std::filesystem::path& out, const std::string& name, bool whole) {
    const RunFile file(out / (name + ".h5"));
    ASSERT_TRUE(file.is_open());
    const auto steps = file.steps();
    for (const auto step : steps) {
        const auto u = file.doubles(step_group(step) + "/u");
        ASSERT_FALSE(u.empty()) << "step " << step;
        EXPECT_TRUE(std::all_of(u.begin(), u.end(), [](double v) { return std::isfinite(v); }))
            << "step " << step;
    }
    const auto xmf = xmf_steps(out / (name + ".xmf"));
    EXPECT_TRUE(xmf.size() <= steps.size() && std::equal(xmf.begin(), xmf.end(), steps.begin()));
    if (whole) {
        EXPECT_EQ(xmf, steps);
    }
    if (!std::filesystem::exists(out / (name + ".pvd"))) return;
    for (const auto& file_name : pvd_files(out / (name + ".pvd"))) {
        EXPECT_TRUE(std::filesystem::exists(out / file_name)) << file_name;
    }
    if (whole) {
        EXPECT_EQ(pvd_steps(out / (name + ".pvd")), steps);
    }
}

// The heat input on a small grid, writing every one of `steps` steps (dt 0.001).
std::string every_step(int steps) {
    return std::string(SIMRUN_SOURCE_DIR) +
           "/inputs/heat.toml --backend cpu --quiet --set grid.nx=17 --set grid.ny=17 "
           "--set time.dt=0.001 --set output.every=1 --set time.end=" +
           std::to_string(steps / 1000.0);
}

// Runs with far more output steps than the .xmf's and .pvd's schedules rewrite them at every
// step (16): 101 steps on 2 ranks with both writers, on a 2x2 process grid with the run file
// alone; every step written, each index listing them all at the end. The collectives are
// checked (SIMRUN_CHECK_COLLECTIVES), so a divergence fails with both places named.
TEST(Distributed, LongRunsWriteEveryOutputStep) {
    TemporaryDirectory dir;
    for (const std::string layout : {"", " --process-grid 2x2 --set output.vtk=false"}) {
        SCOPED_TRACE(layout);
        const int ranks = layout.empty() ? 2 : 4;
        const auto run = run_ranks(ranks, every_step(101) + layout + " --output out", dir);
        ASSERT_EQ(run.exit_code, 0) << run.err;
        const RunFile file(dir.path() / "out" / "heat.h5");
        EXPECT_EQ(file.steps(), steps_from(0, 101));
        expect_complete_steps(dir.path() / "out", "heat", true);
        std::filesystem::remove_all(dir.path() / "out");
    }
}

// A run of 10 output steps on 2 ranks continued to 40 on 3: the continuation crosses the step
// at which the indexes' schedule stops rewriting them every step, and ends with every step.
TEST(Distributed, RestartAcrossTheIndexScheduleWritesEveryStep) {
    TemporaryDirectory dir;
    const auto first = run_ranks(2, every_step(10) + " --output out", dir);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    const auto rest = run_ranks(3, every_step(40) + " --output out --restart out/heat.h5", dir);
    ASSERT_EQ(rest.exit_code, 0) << rest.err;
    const RunFile file(dir.path() / "out" / "heat.h5");
    EXPECT_EQ(file.steps(), steps_from(0, 40));
    expect_complete_steps(dir.path() / "out", "heat", true);
}

// The bytes of the files under `directory` that rank `rank` of a run writes: its pieces, and
// for rank 0 the run file and the indexes too.
std::uintmax_t bytes_written_by(const std::filesystem::path& directory, int rank) {
    std::uintmax_t bytes = 0;
    const std::string piece = "_" + std::to_string(rank) + ".vti";
    for (const auto& entry : std::filesystem::recursive_directory_iterator(directory)) {
        if (!entry.is_regular_file()) continue;
        const std::string name = entry.path().filename().string();
        if (name.ends_with(piece) || (rank == 0 && !name.ends_with(".vti"))) {
            bytes += entry.file_size();
        }
    }
    return bytes;
}

// The ranks, preloaded with the disk that fills up (-x: Open MPI's way to set the ranks'
// environment, not the launcher's) for rank `rank` of the run writing into `out`, once the
// files there have taken `bytes`.
std::string full_disk(const std::filesystem::path& out, int rank, std::uintmax_t bytes) {
    return mpirun(4) +
           " -x LD_PRELOAD=" SIMRUN_FULL_DISK " -x SIMRUN_FULL_DISK_DIR=" + out.string() +
           " -x SIMRUN_FULL_DISK_RANK=" + std::to_string(rank) +
           " -x SIMRUN_FULL_DISK_BYTES=" + std::to_string(bytes);
}

bool launcher_is_open_mpi() {
    const std::string command =
        SIMRUN_MPIEXEC " --version 2>&1 | grep -qE 'Open MPI|OpenRTE|open-mpi'";
    return std::system(command.c_str()) == 0;
}

// The disk fills up for one rank at a time (a preloaded library fails its writes with ENOSPC
// once they have taken half of what that rank's files take in a whole run): on a 2x2 process
// grid every rank stops with 1 within the time limit, the failing rank names the full disk,
// and every step the outputs list is complete. Rank 0 meets it reserving the run file's space
// for a step or writing an index, the others writing their pieces; none inside a collective
// write of the run file, whose space rank 0 reserved for all.
TEST(Distributed, FullDiskOnEachRankInTurnStopsEveryRank) {
    if (!launcher_is_open_mpi()) GTEST_SKIP() << "the ranks' environment is set as Open MPI's";
    TemporaryDirectory dir;
    const std::string input = every_step(40) + " --process-grid 2x2";
    const auto whole = run_ranks(4, input + " --output whole", dir);
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    for (int rank = 0; rank < 4; ++rank) {
        SCOPED_TRACE("the disk full for rank " + std::to_string(rank));
        const auto out = dir.path() / ("full" + std::to_string(rank));
        const auto run = testing::run_simrun(
            input + " --output " + out.string(), dir.path(),
            full_disk(out, rank, bytes_written_by(dir.path() / "whole", rank) / 2));
        EXPECT_EQ(run.exit_code, 1) << run.err;
        EXPECT_NE(run.err.find("No space left on device"), std::string::npos) << run.err;
        expect_complete_steps(out, "heat", false);
        const RunFile file(out / "heat.h5");
        EXPECT_LT(file.steps().size(), 41u);
    }
}

// A disk that only the run file fills (its other files take no space), full for rank 0: met
// where rank 0 reserves the space of the next step, before any rank enters the step's
// collective writes (the ranks' writes land in reserved space), so every rank stops with 1,
// rank 0 naming the reservation, and every step the run file holds is complete.
TEST(Distributed, FullDiskIsMetReservingTheRunFilesSpace) {
    if (!launcher_is_open_mpi()) GTEST_SKIP() << "the ranks' environment is set as Open MPI's";
    TemporaryDirectory dir;
    const std::string input = every_step(40) + " --process-grid 2x2 --set output.vtk=false";
    const auto whole = run_ranks(4, input + " --output whole", dir);
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    const auto out = dir.path() / "full";
    const auto h5_bytes = std::filesystem::file_size(dir.path() / "whole" / "heat.h5");
    const auto run =
        testing::run_simrun(input + " --output " + out.string(), dir.path(),
                            full_disk(out, 0, h5_bytes / 2) + " -x SIMRUN_FULL_DISK_SUFFIX=.h5");
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_NE(run.err.find("rank 0 of 4: error: cannot reserve"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("No space left on device"), std::string::npos) << run.err;
    expect_complete_steps(out, "heat", false);
    const RunFile file(out / "heat.h5");
    EXPECT_GT(file.steps().size(), 0u);
    EXPECT_LT(file.steps().size(), 41u);
}

// A link planted where a step's directory of pieces goes (to send the pieces elsewhere) is
// removed, never followed: the pieces land in a directory of the run's, the link's target
// stays empty, and the step reads whole.
TEST(Distributed, LinkPlantedAtAPieceDirectoryIsNotFollowed) {
    TemporaryDirectory dir;
    std::filesystem::create_directories(dir.path() / "out");
    std::filesystem::create_directories(dir.path() / "elsewhere");
    std::filesystem::create_directory_symlink(dir.path() / "elsewhere",
                                              dir.path() / "out" / "heat_000001");
    const auto run = run_ranks(2, every_step(3) + " --output out", dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_TRUE(std::filesystem::is_empty(dir.path() / "elsewhere"));
    const auto pieces = dir.path() / "out" / "heat_000001";
    EXPECT_FALSE(std::filesystem::is_symlink(pieces));
    EXPECT_TRUE(std::filesystem::exists(pieces / "heat_000001_0.vti"));
    EXPECT_TRUE(std::filesystem::exists(pieces / "heat_000001_1.vti"));
    expect_complete_steps(dir.path() / "out", "heat", true);
}

// Data turning non-finite mid-run on 3 ranks (the top side, rank 2's, at t > 0.035 with dt
// 0.01: first at step 4) stops every rank with 1, said once, the outputs holding steps 0 to 3;
// data non-finite from the start is an input error (2) before anything is written.
TEST(Distributed, DataTurningNonFiniteMidRunExitsOneWithTheStepsBefore) {
    TemporaryDirectory dir;
    const std::string input = std::string(SIMRUN_SOURCE_DIR) +
                              "/inputs/heat.toml --backend cpu --quiet --set grid.nx=17 --set "
                              "grid.ny=17 --set time.dt=0.01 --set time.end=0.05 --set "
                              "output.every=1 --set output.vtk=false --output out ";
    const auto mid_run = run_ranks(3, input + "--set 'boundary.top=\"t > 0.035 ? 1/0 : 0\"'", dir);
    EXPECT_EQ(mid_run.exit_code, 1) << mid_run.err;
    EXPECT_NE(mid_run.err.find("t = 0.04"), std::string::npos) << mid_run.err;
    EXPECT_TRUE(reported_once(mid_run.err)) << mid_run.err;
    const RunFile file(dir.path() / "out" / "heat.h5");
    ASSERT_TRUE(file.is_open());
    EXPECT_EQ(file.steps(), steps_from(0, 3));
    expect_complete_steps(dir.path() / "out", "heat", true);
    std::filesystem::remove_all(dir.path() / "out");

    const auto at_start = run_ranks(3, input + "--set 'boundary.top=\"log(-t)\"'", dir);
    EXPECT_EQ(at_start.exit_code, 2) << at_start.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "out" / "heat.h5"));
}

// An output directory rank 0 cannot make (a file stands in its path): every rank stops with
// 1 within the time limit, rank 0 naming the directory, once; no rank goes on into the
// writers' collectives without it.
TEST(Distributed, AnOutputDirectoryThatCannotBeMadeStopsEveryRank) {
    TemporaryDirectory dir;
    dir.write("blocker", "a file");
    const auto run = run_ranks(3, every_step(2) + " --output blocker/out", dir);
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_NE(run.err.find("simrun: rank 0 of 3: error: cannot create the output directory"),
              std::string::npos)
        << run.err;
    EXPECT_TRUE(reported_once(run.err)) << run.err;
}

}  // namespace
}  // namespace simrun

// The asynchronous output pipeline with the real writers in a temporary directory: every step
// reaches both series with its own values although the field buffers are recycled, the
// buffers stay within their bound, and a writer failure leaves each series a prefix of the
// steps handed over, the HDF5 one no longer than the VTK one.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <vtkDataArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkXMLImageDataReader.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

// The pipeline is internal to the framework library: its header is not installed.
#include "../framework/src/output/output_pipeline.hpp"
#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/framework/output/hdf5_run_writer.hpp"
#include "simrun/framework/output/vtk_series_writer.hpp"
#include "simrun/framework/output/xdmf_writer.hpp"
#include "support/run_simrun.hpp"

namespace simrun::framework {
namespace {

using simrun::testing::TemporaryDirectory;

const Grid grid(2, {33, 17, 1}, {0.0, 0.0, 0.0}, {1.0, 0.5, 0.0});
const auto field_size = static_cast<std::size_t>(grid.num_points());

// Node n of step s holds s + n / 1024: every step and every node differ.
double value(std::int64_t step, std::size_t node) {
    return static_cast<double>(step) + static_cast<double>(node) / 1024.0;
}

void fill(std::span<double> u, std::int64_t step) {
    for (std::size_t n = 0; n < u.size(); ++n) u[n] = value(step, n);
}

std::vector<std::int64_t> steps_up_to(std::int64_t last) {
    std::vector<std::int64_t> steps;
    for (std::int64_t s = 0; s <= last; ++s) steps.push_back(s);
    return steps;
}

void submit(OutputPipeline& pipeline, std::int64_t step) {
    pipeline.submit({step, 0.25 * static_cast<double>(step), {}, true, true},
                    [step](std::span<double> u) { fill(u, step); });
}

void expect_vti_holds_step(const std::filesystem::path& path, std::int64_t step) {
    vtkNew<vtkXMLImageDataReader> reader;
    reader->SetFileName(path.c_str());
    reader->Update();
    ASSERT_EQ(reader->GetErrorCode(), 0u) << path;
    vtkDataArray* u = reader->GetOutput()->GetPointData()->GetArray("u");
    ASSERT_NE(u, nullptr) << path;
    ASSERT_EQ(u->GetNumberOfTuples(), grid.num_points()) << path;
    for (vtkIdType n = 0; n < u->GetNumberOfTuples(); ++n) {
        ASSERT_EQ(u->GetTuple1(n), value(step, static_cast<std::size_t>(n)))
            << path << " node " << n;
    }
}

void expect_h5_holds_step(const std::filesystem::path& path, std::int64_t step) {
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(file, 0) << path;
    const std::string name = step_group_path(step) + "/u";
    const hid_t data = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
    std::vector<double> u(static_cast<std::size_t>(grid.num_points()));
    const herr_t read =
        data < 0 ? -1 : H5Dread(data, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, u.data());
    if (data >= 0) H5Dclose(data);
    H5Fclose(file);
    ASSERT_GE(read, 0) << path << ":" << name;
    for (std::size_t n = 0; n < u.size(); ++n) {
        ASSERT_EQ(u[n], value(step, n)) << path << ":" << name << " node " << n;
    }
}

// Submits the steps in order until submit() rethrows a writer error, then checks that
// finish() throws too. Returns the error's message.
std::string run_into_failure(OutputPipeline& pipeline, const std::vector<std::int64_t>& steps) {
    try {
        for (const std::int64_t step : steps) submit(pipeline, step);
        pipeline.finish();
    } catch (const std::runtime_error& error) {
        EXPECT_THROW(pipeline.finish(), std::runtime_error);
        return error.what();
    }
    ADD_FAILURE() << "no writer error";
    return {};
}

// Both writers in a temporary directory, still reachable once a pipeline owns them.
class OutputPipelineTest : public ::testing::Test {
protected:
    OutputPipelineTest()
        : vtk_(std::make_unique<VtkSeriesWriter>(dir_.path(), "run", grid)),
          hdf5_(
              std::make_unique<Hdf5RunWriter>(dir_.path() / "run.h5", grid, "input", "decisions")),
          vtk_view_(*vtk_),
          hdf5_view_(*hdf5_) {}

    // Hands the writers (the VTK one only with_vtk) to a new pipeline.
    OutputPipeline& start(std::size_t buffer_bytes = OutputPipeline::default_buffer_bytes,
                          bool with_vtk = true) {
        pipeline_ =
            std::make_unique<OutputPipeline>(with_vtk ? std::move(vtk_) : nullptr, std::move(hdf5_),
                                             field_size, solvers::make_cpu_backend(), buffer_bytes);
        return *pipeline_;
    }

    std::vector<std::int64_t> vtk_steps() const {
        std::vector<std::int64_t> steps;
        for (const auto& [step, time] : vtk_view_.steps()) steps.push_back(step);
        return steps;
    }
    std::vector<std::int64_t> hdf5_steps() const {
        std::vector<std::int64_t> steps;
        for (const auto& entry : hdf5_view_.steps()) steps.push_back(entry.step);
        return steps;
    }

    TemporaryDirectory dir_;
    std::unique_ptr<VtkSeriesWriter> vtk_;
    std::unique_ptr<Hdf5RunWriter> hdf5_;
    const VtkSeriesWriter& vtk_view_;
    const Hdf5RunWriter& hdf5_view_;
    std::unique_ptr<OutputPipeline> pipeline_;  // last: its threads end before the rest goes
};

TEST_F(OutputPipelineTest, EveryStepReachesBothSeriesWithItsOwnValues) {
    // No byte budget: the minimum of buffers, recycled while both writers run.
    OutputPipeline& pipeline = start(0);
    constexpr std::int64_t last = 24;
    for (std::int64_t step = 0; step <= last; ++step) submit(pipeline, step);
    pipeline.finish();

    EXPECT_EQ(vtk_steps(), steps_up_to(last));
    EXPECT_EQ(hdf5_steps(), steps_up_to(last));
    for (std::int64_t step = 0; step <= last; ++step) {
        SCOPED_TRACE("step " + std::to_string(step));
        expect_vti_holds_step(vtk_view_.step_path(step), step);
        expect_h5_holds_step(dir_.path() / "run.h5", step);
    }
}

TEST_F(OutputPipelineTest, BuffersAreRecycledWithinTheBound) {
    OutputPipeline& pipeline = start(4 * field_size * sizeof(double));  // four fields
    std::set<const double*> buffers;
    for (std::int64_t step = 0; step < 30; ++step) {
        pipeline.submit({step, 0.0, {}, true, true}, [&](std::span<double> u) {
            ASSERT_EQ(u.size(), field_size);
            buffers.insert(u.data());
            fill(u, step);
        });
    }
    pipeline.finish();
    EXPECT_GE(buffers.size(), 1u);
    EXPECT_LE(buffers.size(), 4u);
    EXPECT_EQ(hdf5_steps(), steps_up_to(29));
}

// A run stopped by an error destroys the pipeline without finish(): the steps it handed over
// are written all the same.
TEST_F(OutputPipelineTest, DestructionWritesTheStepsHandedOver) {
    OutputPipeline& pipeline = start();
    for (std::int64_t step = 0; step <= 5; ++step) submit(pipeline, step);
    pipeline_.reset();
    const VtkSeriesWriter series(dir_.path(), "run", grid, ContinueSeries{100});
    EXPECT_EQ(series.steps().size(), 6u);
    for (std::int64_t step = 0; step <= 5; ++step) {
        SCOPED_TRACE("step " + std::to_string(step));
        expect_vti_holds_step(series.step_path(step), step);
        expect_h5_holds_step(dir_.path() / "run.h5", step);
    }
}

// The VTK writer fails at step 5: the steps before it reach both series, none after it.
TEST_F(OutputPipelineTest, VtkFailureEndsBothSeriesBeforeTheFailedStep) {
    // A non-empty directory where step 5's .vti goes: renaming onto it fails.
    std::filesystem::create_directories(vtk_view_.step_path(5) / "blocker");
    const std::string message = run_into_failure(start(), steps_up_to(12));
    EXPECT_NE(message.find("run_000005.vti"), std::string::npos) << message;
    EXPECT_EQ(vtk_steps(), steps_up_to(4));
    EXPECT_EQ(hdf5_steps(), steps_up_to(4));
}

// The HDF5 writer fails at step 2's second hand-over: its series ends at step 2; the VTK
// series, ahead of it, holds at least those steps and is a prefix too.
TEST_F(OutputPipelineTest, Hdf5FailureEndsItsSeriesAndTheVtkSeriesStaysAPrefix) {
    const std::string message = run_into_failure(start(), {0, 1, 2, 2, 3, 4, 5, 6, 7, 8});
    EXPECT_NE(message.find("run.h5"), std::string::npos) << message;
    EXPECT_EQ(hdf5_steps(), steps_up_to(2));
    const auto vtk = vtk_steps();
    ASSERT_GE(vtk.size(), 3u);
    EXPECT_EQ(vtk, steps_up_to(static_cast<std::int64_t>(vtk.size()) - 1));
}

// A step is queued whatever happens to its hand-over (so that over ranks every rank's writers
// meet at the same steps): a failed copy hands it over without its field, the writers fail on
// it, and the steps before it stay complete and listed.
TEST_F(OutputPipelineTest, FailedCopyHandsTheStepOverWithoutItsFieldAndTheWritersStopThere) {
    OutputPipeline& pipeline = start();
    submit(pipeline, 0);
    EXPECT_THROW(pipeline.submit({1, 0.25, {}, true, true},
                                 [](std::span<double>) { throw std::runtime_error("copy"); }),
                 std::runtime_error);
    EXPECT_THROW(pipeline.finish(), std::invalid_argument);
    EXPECT_EQ(hdf5_steps(), steps_up_to(0));
    EXPECT_EQ(vtk_steps(), steps_up_to(0));
}

TEST_F(OutputPipelineTest, OneWriterAloneWritesItsSeries) {
    OutputPipeline& pipeline = start(OutputPipeline::default_buffer_bytes, false);
    for (std::int64_t step = 0; step <= 3; ++step) submit(pipeline, step);
    pipeline.finish();
    EXPECT_EQ(hdf5_steps(), steps_up_to(3));
    EXPECT_TRUE(vtk_steps().empty());
}

TEST(OutputPipeline, NoWriterIsRefused) {
    EXPECT_THROW(OutputPipeline(nullptr, nullptr, 16, solvers::make_cpu_backend()),
                 std::invalid_argument);
}

}  // namespace
}  // namespace simrun::framework

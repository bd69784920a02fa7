// Output writers: VTK series (.vti + .pvd), HDF5 run file (+ .xmf), atomic file replacement.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>
#include <vtkDataArray.h>
#include <vtkDoubleArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkXMLImageDataReader.h>
#include <vtkXMLPImageDataReader.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "simrun/framework/discretisation/field.hpp"
#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/framework/output/hdf5_run_writer.hpp"
#include "simrun/framework/output/vtk_series_writer.hpp"
#include "simrun/framework/output/xdmf_writer.hpp"
#include "simrun/solvers/system/atomic_file.hpp"
#include "simrun/solvers/base/communicator.hpp"

namespace fs = std::filesystem;
using simrun::framework::FieldView;
using simrun::framework::Grid;
using simrun::framework::Hdf5RunWriter;
using simrun::framework::StepStatistics;
using simrun::framework::VtkCompression;
using simrun::framework::VtkSeriesWriter;
using simrun::solvers::AtomicReplace;
using simrun::solvers::is_atomic_temporary_of;
using simrun::solvers::write_file_atomically;

namespace {

class OutputTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() /
               ("simrun_output_test_" + std::to_string(::getpid()) + "_" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ignored;
        fs::remove_all(dir_, ignored);
    }

    fs::path dir_;
};

Grid grid_2d() { return Grid(2, {7, 5, 1}, {0.0, -1.0, 0.0}, {1.5, 2.0, 0.0}); }
Grid grid_3d() { return Grid(3, {6, 5, 4}, {-0.5, 0.0, 1.0}, {0.7, 2.0, 3.3}); }

// sin(x) cos(y) + z + shift: non-constant along every axis.
std::vector<double> sample_field(const Grid& grid, double shift) {
    std::vector<double> values(static_cast<std::size_t>(grid.num_points()));
    for (std::int64_t k = 0; k < grid.points(2); ++k) {
        for (std::int64_t j = 0; j < grid.points(1); ++j) {
            for (std::int64_t i = 0; i < grid.points(0); ++i) {
                const double x = grid.coordinate(0, i);
                const double y = grid.coordinate(1, j);
                const double z = grid.dimension() == 3 ? grid.coordinate(2, k) : 0.0;
                values[static_cast<std::size_t>(grid.index(i, j, k))] =
                    std::sin(x) * std::cos(y) + z + shift;
            }
        }
    }
    return values;
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path);
    EXPECT_TRUE(in) << path;
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> temporary_files(const fs::path& dir) {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(dir)) {
        const auto name = entry.path().filename().string();
        if (name.find(".tmp") != std::string::npos) found.push_back(name);
    }
    return found;
}

void expect_vti_equals(const fs::path& path, const Grid& grid,
                       const std::vector<FieldView>& fields) {
    vtkNew<vtkXMLImageDataReader> reader;
    reader->SetFileName(path.c_str());
    reader->Update();
    ASSERT_EQ(reader->GetErrorCode(), 0u);
    vtkImageData* image = reader->GetOutput();
    ASSERT_NE(image, nullptr);
    int dims[3];
    image->GetDimensions(dims);
    double origin[3];
    double spacing[3];
    image->GetOrigin(origin);
    image->GetSpacing(spacing);
    for (int a = 0; a < 3; ++a) {
        EXPECT_EQ(dims[a], grid.points(a)) << "axis " << a;
        EXPECT_EQ(origin[a], grid.origin()[static_cast<std::size_t>(a)]) << "axis " << a;
        EXPECT_EQ(spacing[a], grid.spacing(a)) << "axis " << a;
    }
    ASSERT_EQ(image->GetPointData()->GetNumberOfArrays(), static_cast<int>(fields.size()));
    for (const auto& field : fields) {
        auto* array =
            vtkDoubleArray::SafeDownCast(image->GetPointData()->GetArray(field.name.c_str()));
        ASSERT_NE(array, nullptr) << field.name;
        ASSERT_EQ(array->GetNumberOfComponents(), 1);
        ASSERT_EQ(array->GetNumberOfTuples(), grid.num_points());
        for (vtkIdType n = 0; n < array->GetNumberOfTuples(); ++n) {
            ASSERT_EQ(array->GetValue(n), field.values[static_cast<std::size_t>(n)])
                << field.name << " node " << n;
        }
    }
}

// Small RAII holder for handles opened by the tests.
struct H5Id {
    hid_t id;
    herr_t (*close)(hid_t);
    ~H5Id() {
        if (id >= 0) close(id);
    }
};

std::vector<double> read_dataset(hid_t file, const std::string& path, std::vector<hsize_t>& dims) {
    H5Id data{H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose};
    EXPECT_GE(data.id, 0) << path;
    if (data.id < 0) return {};
    H5Id space{H5Dget_space(data.id), H5Sclose};
    const int rank = H5Sget_simple_extent_ndims(space.id);
    dims.assign(static_cast<std::size_t>(rank), 0);
    H5Sget_simple_extent_dims(space.id, dims.data(), nullptr);
    std::vector<double> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.id)));
    EXPECT_GE(H5Dread(data.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
    return values;
}

template <typename T>
T read_scalar_attribute(hid_t object, const char* name, hid_t type) {
    H5Id attr{H5Aopen(object, name, H5P_DEFAULT), H5Aclose};
    EXPECT_GE(attr.id, 0) << name;
    T value{};
    EXPECT_GE(H5Aread(attr.id, type, &value), 0) << name;
    return value;
}

template <typename T>
std::array<T, 3> read_triple_attribute(hid_t object, const char* name, hid_t type) {
    H5Id attr{H5Aopen(object, name, H5P_DEFAULT), H5Aclose};
    EXPECT_GE(attr.id, 0) << name;
    H5Id space{H5Aget_space(attr.id), H5Sclose};
    EXPECT_EQ(H5Sget_simple_extent_npoints(space.id), 3) << name;
    std::array<T, 3> values{};
    EXPECT_GE(H5Aread(attr.id, type, values.data()), 0) << name;
    return values;
}

std::string read_string(hid_t type_owner, bool is_attribute) {
    H5Id type{is_attribute ? H5Aget_type(type_owner) : H5Dget_type(type_owner), H5Tclose};
    EXPECT_EQ(H5Tget_class(type.id), H5T_STRING);
    std::string text(H5Tget_size(type.id), '\0');
    const herr_t status =
        is_attribute ? H5Aread(type_owner, type.id, text.data())
                     : H5Dread(type_owner, type.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data());
    EXPECT_GE(status, 0);
    return text.substr(0, text.find('\0'));
}

std::string read_string_dataset(hid_t file, const char* path) {
    H5Id data{H5Dopen2(file, path, H5P_DEFAULT), H5Dclose};
    EXPECT_GE(data.id, 0) << path;
    return read_string(data.id, false);
}

}  // namespace

TEST_F(OutputTest, VtkRoundTrip2dAnd3dIsExact) {
    for (const Grid& grid : {grid_2d(), grid_3d()}) {
        const auto u = sample_field(grid, 0.0);
        const auto v = sample_field(grid, 0.25);
        const std::vector<FieldView> fields{{"u", u}, {"temperature", v}};
        const auto sub = dir_ / ("d" + std::to_string(grid.dimension()));
        VtkSeriesWriter writer(sub, "run", grid);
        writer.write_step(3, 0.1, fields);
        const auto path = sub / "run_000003.vti";
        ASSERT_EQ(writer.step_path(3), path);
        ASSERT_TRUE(fs::exists(path));
        expect_vti_equals(path, grid, fields);
        // Binary appended, not base64; LZ4 compressed by default.
        const auto text = read_text(path);
        EXPECT_NE(text.find("encoding=\"raw\""), std::string::npos);
        EXPECT_NE(text.find("vtkLZ4DataCompressor"), std::string::npos);
        // zlib and no compression read back exactly too.
        for (const auto& [compression, name] :
             {std::pair{VtkCompression::zlib, "vtkZLibDataCompressor"},
              std::pair{VtkCompression::none, ""}}) {
            writer.set_compression(compression);
            writer.write_step(4, 0.2, fields);
            expect_vti_equals(sub / "run_000004.vti", grid, fields);
            const auto written = read_text(sub / "run_000004.vti");
            if (*name != '\0') {
                EXPECT_NE(written.find(name), std::string::npos);
            } else {
                EXPECT_EQ(written.find("compressor="), std::string::npos);
            }
        }
    }
}

TEST_F(OutputTest, PvdListsStepsWithExactTimesInOrder) {
    const Grid grid = grid_2d();
    const auto u = sample_field(grid, 1.0);
    const std::vector<FieldView> fields{{"u", u}};
    VtkSeriesWriter writer(dir_ / "vtk", "heat", grid);
    const std::vector<std::pair<std::int64_t, double>> steps{
        {0, 0.0}, {10, 0.1}, {20, 1.0 / 3.0}, {30, 2.0 / 3.0 + 1e-12}};
    for (const auto& [step, time] : steps) writer.write_step(step, time, fields);

    const auto text = read_text(writer.pvd_path());
    EXPECT_NE(text.find("type=\"Collection\""), std::string::npos);
    const std::regex dataset(
        R"re(<DataSet timestep="([^"]+)" group="" part="0" file="([^"]+)"/>)re");
    std::vector<std::pair<double, std::string>> listed;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), dataset);
         it != std::sregex_iterator(); ++it) {
        listed.emplace_back(std::stod((*it)[1].str()), (*it)[2].str());
    }
    ASSERT_EQ(listed.size(), steps.size());
    for (std::size_t n = 0; n < steps.size(); ++n) {
        EXPECT_EQ(listed[n].first, steps[n].second) << "entry " << n;
        EXPECT_EQ(fs::path(listed[n].second), writer.step_path(steps[n].first).filename());
        EXPECT_TRUE(fs::exists(dir_ / "vtk" / listed[n].second)) << listed[n].second;
    }
    EXPECT_TRUE(temporary_files(dir_ / "vtk").empty());
}

// The run file removed or replaced under a running writer (another run, a cleanup script):
// the next step fails naming the file, instead of writing into a file nobody will see.
TEST_F(OutputTest, Hdf5RunFileRemovedOrReplacedDuringTheRunFailsTheNextStep) {
    const Grid grid = grid_2d();
    const auto u = sample_field(grid, 0.0);
    const std::vector<FieldView> fields{{"u", u}};
    for (const bool replaced : {false, true}) {
        const auto h5 = dir_ / (replaced ? "replaced.h5" : "removed.h5");
        Hdf5RunWriter writer(h5, grid, "", "");
        writer.write_step(0, 0.0, fields, {0, 0.0, "initial", "none", {}});
        fs::remove(h5);
        if (replaced) write_file_atomically(h5, "another run's file");
        try {
            writer.write_step(1, 0.1, fields, {0, 0.0, "explicit", "none", {}});
            ADD_FAILURE() << "the step was written into a file that is gone";
        } catch (const std::runtime_error& error) {
            EXPECT_NE(
                std::string(error.what()).find("'" + h5.string() + "' was removed or replaced"),
                std::string::npos)
                << error.what();
        }
    }
}

// Each step's flush scans every entry of the run file's metadata cache (which never evicts), so
// a cache growing with the steps made output every step quadratic in the steps (8,000 steps
// took 57 times as long as 1,000). Through thousands of steps the cache stays below the
// writer's bound after every step, and the file holds every step.
TEST_F(OutputTest, Hdf5MetadataCacheStaysBoundedThroughThousandsOfSteps) {
    const Grid grid = Grid(2, {3, 3, 1}, {0, 0, 0}, {1, 1, 0});
    const std::vector<double> u(9, 1.0);
    const std::vector<FieldView> fields{{"u", u}};
    constexpr int steps = 3000;
    Hdf5RunWriter writer(dir_ / "many.h5", grid, "", "");
    std::size_t most = 0;
    for (int step = 0; step < steps; ++step) {
        writer.write_step(step, 0.001 * step, fields, {1, 0.0, "converged", "cg", {1.0, 0.1}});
        most = std::max(most, writer.metadata_cache_entries());
    }
    EXPECT_LT(most, Hdf5RunWriter::max_cache_entries);
    EXPECT_EQ(writer.steps().size(), static_cast<std::size_t>(steps));
    const hid_t file = H5Fopen((dir_ / "many.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    H5G_info_t info;
    EXPECT_GE(H5Gget_info_by_name(file, "/steps", &info, H5P_DEFAULT), 0);
    EXPECT_EQ(info.nlinks, static_cast<hsize_t>(steps));
    H5Fclose(file);
}

// The .pvd and the .xmf are rewritten whole, so rewriting them each step would cost time
// quadratic in the steps. On their schedule (a rewrite once the index would list 1/16 more
// steps, so every step below 16) N steps cause at most 17 + ln(N / 16) / ln(17 / 16)
// rewrites: 70 for 400. Every index on disk lists complete steps only, and at the end of output it
// lists them all.
TEST_F(OutputTest, IndexesAreRewrittenOnAScheduleLinearInTheSteps) {
    const Grid grid = Grid(2, {3, 3, 1}, {0, 0, 0}, {1, 1, 0});
    const std::vector<double> u(9, 1.0);
    const std::vector<FieldView> fields{{"u", u}};
    constexpr int steps = 400;
    const double bound = 17 + std::log(steps / 16.0) / std::log(17.0 / 16.0);
    VtkSeriesWriter vtk(dir_, "series", grid);
    Hdf5RunWriter h5(dir_ / "series.h5", grid, "", "");
    int pvd_rewrites = 0, xmf_rewrites = 0;
    std::string pvd, xmf;
    const auto count = [](const std::string& text, const std::string& item) {
        std::size_t found = 0;
        for (std::size_t at = text.find(item); at != std::string::npos;
             at = text.find(item, at + 1)) {
            ++found;
        }
        return found;
    };
    for (int step = 0; step < steps; ++step) {
        vtk.write_step(step, 0.1 * step, fields);
        h5.write_step(step, 0.1 * step, fields, {0, 0.0, "explicit", "none", {}});
        const std::string new_pvd = read_text(vtk.pvd_path()), new_xmf = read_text(h5.xdmf_path());
        pvd_rewrites += new_pvd != pvd;
        xmf_rewrites += new_xmf != xmf;
        pvd = new_pvd;
        xmf = new_xmf;
        // Listed steps are complete: at most the steps written, at least 16/17 of them.
        const std::size_t written = static_cast<std::size_t>(step) + 1;
        for (const std::size_t listed :
             {count(pvd, "<DataSet "), count(xmf, "series.h5:/steps/")}) {
            EXPECT_LE(listed, written);
            EXPECT_GE(17 * listed + 17, 16 * written) << step;
        }
    }
    EXPECT_LE(pvd_rewrites, bound);
    EXPECT_LE(xmf_rewrites, bound);
    vtk.write_index();
    h5.write_index();
    EXPECT_EQ(count(read_text(vtk.pvd_path()), "<DataSet "), static_cast<std::size_t>(steps));
    EXPECT_EQ(count(read_text(h5.xdmf_path()), "series.h5:/steps/"),
              static_cast<std::size_t>(steps));
}

TEST_F(OutputTest, Hdf5RoundTripIsExact) {
    const std::string input = "[grid]\npoints = [6, 5, 4]\n# \"quoted\" and unicode: \xce\xb1\n";
    const std::string decisions = "pcg+jacobi: symmetric, positive diagonal => SPD";
    for (const Grid& grid : {grid_2d(), grid_3d()}) {
        const auto h5 = dir_ / ("run" + std::to_string(grid.dimension()) + ".h5");
        const auto u = sample_field(grid, 0.0);
        const auto v = sample_field(grid, -2.0);
        const std::vector<double> history{1.0, 0.25, 3e-3, 1.5e-7};
        {
            Hdf5RunWriter writer(h5, grid, input, decisions);
            const std::vector<FieldView> fields{{"u", u}, {"v", v}};
            writer.write_step(0, 0.0, fields, {0, 0.0, "initial", "none", {}});
            writer.write_step(10, 0.125, fields,
                              {42, 3.5e-11, "converged", "cg + jacobi", history});
        }
        H5Id file{H5Fopen(h5.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
        ASSERT_GE(file.id, 0);

        H5Id grid_group{H5Gopen2(file.id, "/grid", H5P_DEFAULT), H5Gclose};
        ASSERT_GE(grid_group.id, 0);
        EXPECT_EQ(read_scalar_attribute<int>(grid_group.id, "dimension", H5T_NATIVE_INT),
                  grid.dimension());
        EXPECT_EQ(read_triple_attribute<std::int64_t>(grid_group.id, "points", H5T_NATIVE_INT64),
                  grid.points());
        EXPECT_EQ(read_triple_attribute<double>(grid_group.id, "origin", H5T_NATIVE_DOUBLE),
                  grid.origin());
        EXPECT_EQ(read_triple_attribute<double>(grid_group.id, "spacing", H5T_NATIVE_DOUBLE),
                  grid.spacing());
        EXPECT_EQ(read_string_dataset(file.id, "/input"), input);
        EXPECT_EQ(read_string_dataset(file.id, "/solver_decisions"), decisions);

        H5Id step{H5Gopen2(file.id, "/steps/000010", H5P_DEFAULT), H5Gclose};
        ASSERT_GE(step.id, 0);
        EXPECT_EQ(read_scalar_attribute<double>(step.id, "time", H5T_NATIVE_DOUBLE), 0.125);
        EXPECT_EQ(
            read_scalar_attribute<std::int64_t>(step.id, "solver_iterations", H5T_NATIVE_INT64),
            42);
        EXPECT_EQ(read_scalar_attribute<double>(step.id, "relative_residual", H5T_NATIVE_DOUBLE),
                  3.5e-11);
        H5Id status{H5Aopen(step.id, "status", H5P_DEFAULT), H5Aclose};
        EXPECT_EQ(read_string(status.id, true), "converged");
        H5Id method{H5Aopen(step.id, "method", H5P_DEFAULT), H5Aclose};
        EXPECT_EQ(read_string(method.id, true), "cg + jacobi");
        std::vector<hsize_t> history_dims;
        EXPECT_EQ(read_dataset(file.id, "/steps/000010/residual_history", history_dims), history);
        EXPECT_EQ(history_dims, (std::vector<hsize_t>{history.size()}));
        // Step 0 solved nothing: method "none" and no history.
        H5Id initial{H5Gopen2(file.id, "/steps/000000", H5P_DEFAULT), H5Gclose};
        H5Id initial_method{H5Aopen(initial.id, "method", H5P_DEFAULT), H5Aclose};
        EXPECT_EQ(read_string(initial_method.id, true), "none");
        EXPECT_EQ(H5Lexists(initial.id, "residual_history", H5P_DEFAULT), 0);

        std::vector<hsize_t> dims;
        EXPECT_EQ(read_dataset(file.id, "/steps/000010/u", dims), u);
        std::vector<hsize_t> expected_dims;
        for (int a = grid.dimension() - 1; a >= 0; --a) {
            expected_dims.push_back(static_cast<hsize_t>(grid.points(a)));
        }
        EXPECT_EQ(dims, expected_dims);
        EXPECT_EQ(read_dataset(file.id, "/steps/000000/v", dims), v);
    }
}

TEST_F(OutputTest, XdmfNamesExistingDatasetsWithIncreasingTimes) {
    const Grid grid = grid_3d();
    const auto h5 = dir_ / "run.h5";
    const auto u = sample_field(grid, 0.0);
    const std::vector<FieldView> fields{{"u", u}, {"w", u}};
    const std::vector<double> times{0.0, 0.5, 1.0 / 3.0 + 1.0};
    {
        Hdf5RunWriter writer(h5, grid, "", "");
        ASSERT_EQ(writer.xdmf_path(), dir_ / "run.xmf");
        for (std::size_t n = 0; n < times.size(); ++n) {
            writer.write_step(static_cast<std::int64_t>(5 * n), times[n], fields,
                              {1, 0.5, "ok", "none", {}});
        }
    }
    const auto text = read_text(dir_ / "run.xmf");
    EXPECT_NE(text.find("<Xdmf Version=\"3.0\">"), std::string::npos);
    EXPECT_NE(text.find("CollectionType=\"Temporal\""), std::string::npos);
    EXPECT_NE(text.find("TopologyType=\"3DCoRectMesh\" Dimensions=\"4 5 6\""), std::string::npos);
    EXPECT_NE(text.find("GeometryType=\"ORIGIN_DXDYDZ\""), std::string::npos);
    // Opening and closing tags balance for each element type used.
    for (const std::string tag : {"Grid", "Attribute", "DataItem", "Geometry", "Domain"}) {
        const std::regex open("<" + tag + "[ >]");
        const std::regex close("</" + tag + ">");
        const auto count = [&text](const std::regex& re) {
            return std::distance(std::sregex_iterator(text.begin(), text.end(), re),
                                 std::sregex_iterator());
        };
        EXPECT_EQ(count(open), count(close)) << tag;
    }

    const std::regex time_re(R"re(<Time Value="([^"]+)"/>)re");
    std::vector<double> listed_times;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), time_re);
         it != std::sregex_iterator(); ++it) {
        listed_times.push_back(std::stod((*it)[1].str()));
    }
    EXPECT_EQ(listed_times, times);
    for (std::size_t n = 1; n < listed_times.size(); ++n) {
        EXPECT_GT(listed_times[n], listed_times[n - 1]);
    }

    H5Id file{H5Fopen(h5.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
    ASSERT_GE(file.id, 0);
    const std::regex item_re(R"re(Format="HDF">([^:<]+):(/steps/[0-9]{6}/[a-z]+)<)re");
    int items = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), item_re);
         it != std::sregex_iterator(); ++it, ++items) {
        EXPECT_EQ((*it)[1].str(), "run.h5");
        const std::string path = (*it)[2].str();
        std::vector<hsize_t> dims;
        EXPECT_EQ(read_dataset(file.id, path, dims).size(),
                  static_cast<std::size_t>(grid.num_points()))
            << path;
        EXPECT_EQ(dims, (std::vector<hsize_t>{4, 5, 6})) << path;
    }
    EXPECT_EQ(items, static_cast<int>(times.size() * fields.size()));
    EXPECT_TRUE(temporary_files(dir_).empty());
}

// A 2D grid is one z layer of a 3D mesh, so ParaView places it in the xy plane like the .vti.
TEST_F(OutputTest, Xdmf2dIsOneLayerOfA3dMeshInZyxOrder) {
    const Grid grid = grid_2d();
    const std::vector<simrun::framework::XdmfStep> steps{{7, 0.25, {"u"}}};
    const auto text = simrun::framework::make_xdmf(grid, "a.h5", steps);
    EXPECT_NE(text.find("TopologyType=\"3DCoRectMesh\" Dimensions=\"1 5 7\""), std::string::npos)
        << text;
    EXPECT_NE(text.find("GeometryType=\"ORIGIN_DXDYDZ\""), std::string::npos);
    EXPECT_NE(text.find(">0 -1 0</DataItem>"), std::string::npos) << text;
    EXPECT_NE(text.find(">1 0.75 0.25</DataItem>"), std::string::npos) << text;
    EXPECT_NE(text.find(">a.h5:/steps/000007/u</DataItem>"), std::string::npos);
}

TEST_F(OutputTest, NoTemporaryFilesRemainAfterWriting) {
    const Grid grid = grid_2d();
    const auto u = sample_field(grid, 0.0);
    const std::vector<FieldView> fields{{"u", u}};
    VtkSeriesWriter vtk(dir_, "run", grid);
    Hdf5RunWriter h5(dir_ / "run.h5", grid, "x = 1\n", "none");
    for (std::int64_t step = 0; step < 4; ++step) {
        vtk.write_step(step, 0.5 * static_cast<double>(step), fields);
        h5.write_step(step, 0.5 * static_cast<double>(step), fields,
                      {3, 1e-9, "converged", "cg + jacobi", {1.0, 1e-9}});
    }
    write_file_atomically(dir_ / "notes.txt", "hello");
    EXPECT_TRUE(temporary_files(dir_).empty());
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
        names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"notes.txt", "run.h5", "run.pvd", "run.xmf",
                                               "run_000000.vti", "run_000001.vti", "run_000002.vti",
                                               "run_000003.vti"}));
}

TEST_F(OutputTest, AtomicReplaceKeepsOldFileUntilCommit) {
    const auto path = dir_ / "data.txt";
    fs::path temp;
    write_file_atomically(path, "old");
    {
        AtomicReplace replace(path);
        EXPECT_EQ(replace.temp_path().parent_path(), dir_);
        EXPECT_TRUE(is_atomic_temporary_of(replace.temp_path().filename().string(), "data.txt"))
            << replace.temp_path();
        temp = replace.temp_path();
        std::ofstream(replace.temp_path()) << "new, abandoned";
        EXPECT_EQ(read_text(path), "old");
    }
    EXPECT_FALSE(fs::exists(temp));
    EXPECT_EQ(read_text(path), "old");
    write_file_atomically(path, "");
    EXPECT_EQ(read_text(path), "");
    write_file_atomically(path, "replaced");
    EXPECT_EQ(read_text(path), "replaced");
}

// A temporary name is never predictable nor reused: links planted in the directory under the
// names a writer might pick (the fixed ".NAME.tmp" of earlier versions, a random one that
// happens to be taken) are neither followed nor overwritten, and each replacement uses a name of
// its own.
TEST_F(OutputTest, AtomicReplaceNeverWritesThroughAPlantedLink) {
    const auto victim = dir_ / "victim.txt";
    write_file_atomically(victim, "precious");
    fs::create_directory(dir_ / "shared");
    fs::create_symlink(victim, dir_ / "shared" / ".data.txt.tmp");
    std::set<fs::path> names;
    for (int i = 0; i < 20; ++i) {
        AtomicReplace replace(dir_ / "shared" / "data.txt");
        names.insert(replace.temp_path());
        EXPECT_FALSE(fs::is_symlink(replace.temp_path()));
        // A link planted under the next name this one picks cannot be: the name is taken now.
        EXPECT_THROW(fs::create_symlink(victim, replace.temp_path()), fs::filesystem_error);
    }
    EXPECT_EQ(names.size(), 20u);
    write_file_atomically(dir_ / "shared" / "data.txt", "written");
    EXPECT_EQ(read_text(dir_ / "shared" / "data.txt"), "written");
    EXPECT_EQ(read_text(victim), "precious");
    EXPECT_TRUE(fs::is_symlink(dir_ / "shared" / ".data.txt.tmp"));  // left as it was
}

TEST_F(OutputTest, FieldOfWrongSizeThrowsAndWritesNothing) {
    const Grid grid = grid_3d();
    const std::vector<double> short_field(static_cast<std::size_t>(grid.num_points() - 1), 1.0);
    const std::vector<FieldView> fields{{"u", short_field}};
    VtkSeriesWriter vtk(dir_, "run", grid);
    EXPECT_THROW(vtk.write_step(0, 0.0, fields), std::invalid_argument);
    EXPECT_FALSE(fs::exists(vtk.step_path(0)));
    EXPECT_FALSE(fs::exists(vtk.pvd_path()));

    Hdf5RunWriter h5(dir_ / "run.h5", grid, "", "");
    try {
        h5.write_step(0, 0.0, fields, {});
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("'u'"), std::string::npos) << message;
        EXPECT_NE(message.find(std::to_string(grid.num_points())), std::string::npos) << message;
    }
    EXPECT_FALSE(fs::exists(h5.xdmf_path()));
    EXPECT_TRUE(temporary_files(dir_).empty());
}

TEST_F(OutputTest, UncreatableDirectoryThrowsNamingThePath) {
    const auto blocker = dir_ / "regular_file";
    write_file_atomically(blocker, "not a directory");
    const Grid grid = grid_2d();

    const auto vtk_dir = blocker / "vtk";
    try {
        VtkSeriesWriter writer(vtk_dir, "run", grid);
        FAIL() << "expected std::runtime_error";
    } catch (const std::runtime_error& error) {
        EXPECT_NE(std::string(error.what()).find(vtk_dir.string()), std::string::npos)
            << error.what();
    }

    const auto h5 = blocker / "run.h5";
    try {
        Hdf5RunWriter writer(h5, grid, "", "");
        FAIL() << "expected std::runtime_error";
    } catch (const std::runtime_error& error) {
        EXPECT_NE(std::string(error.what()).find(h5.string()), std::string::npos) << error.what();
    }

    try {
        write_file_atomically(blocker / "x.txt", "data");
        FAIL() << "expected std::runtime_error";
    } catch (const std::runtime_error& error) {
        EXPECT_NE(std::string(error.what()).find((blocker / ".x.txt.").string()), std::string::npos)
            << error.what();
    }
}

namespace {

// The .xmf's <Time> values, in order.
std::vector<double> xdmf_times(const std::string& text) {
    const std::regex time_re(R"re(<Time Value="([^"]+)"/>)re");
    std::vector<double> times;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), time_re);
         it != std::sregex_iterator(); ++it) {
        times.push_back(std::stod((*it)[1].str()));
    }
    return times;
}

}  // namespace

TEST_F(OutputTest, Hdf5AppendKeepsStepsRecordsTheRestartAndRewritesTheXdmf) {
    const Grid grid = grid_2d();
    const auto h5 = dir_ / "run.h5";
    const auto u = sample_field(grid, 0.0);
    const auto w = sample_field(grid, 3.0);
    const std::vector<FieldView> first{{"u", u}};
    const std::vector<FieldView> later{{"u", w}};
    {
        Hdf5RunWriter writer(h5, grid, "end = 1", "first");
        writer.write_step(0, 0.0, first, {0, 0.0, "initial", "none", {}});
        writer.write_step(5, 0.5, first, {7, 1e-9, "converged", "cg + jacobi", {1.0, 1e-9}});
    }
    {
        Hdf5RunWriter writer(h5, grid, "end = 2", "second",
                             simrun::framework::Hdf5OpenMode::append);
        ASSERT_EQ(writer.steps().size(), 2u);
        EXPECT_EQ(writer.steps()[1].step, 5);
        EXPECT_EQ(writer.steps()[1].time, 0.5);
        // Only datasets shaped like the grid are fields; residual_history is not one.
        EXPECT_EQ(writer.steps()[1].field_names, (std::vector<std::string>{"u"}));
        EXPECT_EQ(xdmf_times(read_text(writer.xdmf_path())), (std::vector<double>{0.0, 0.5}));
        writer.write_step(10, 1.0, later, {3, 1e-10, "converged", "cg + jacobi", {1.0, 1e-10}});
        EXPECT_THROW(writer.write_step(5, 0.5, later, {}), std::runtime_error);
    }
    EXPECT_EQ(xdmf_times(read_text(dir_ / "run.xmf")), (std::vector<double>{0.0, 0.5, 1.0}));

    H5Id file{H5Fopen(h5.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
    ASSERT_GE(file.id, 0);
    std::vector<hsize_t> dims;
    EXPECT_EQ(read_dataset(file.id, "/steps/000005/u", dims), u);
    EXPECT_EQ(read_dataset(file.id, "/steps/000010/u", dims), w);
    EXPECT_EQ(read_string_dataset(file.id, "/input"), "end = 1");
    EXPECT_EQ(read_string_dataset(file.id, "/restarts/0/input"), "end = 2");
    EXPECT_EQ(read_string_dataset(file.id, "/restarts/0/solver_decisions"), "second");
    H5Id restart{H5Gopen2(file.id, "/restarts/0", H5P_DEFAULT), H5Gclose};
    EXPECT_EQ(read_scalar_attribute<std::int64_t>(restart.id, "step", H5T_NATIVE_INT64), 5);
}

TEST_F(OutputTest, Hdf5AppendToAnotherGridThrows) {
    const auto h5 = dir_ / "run.h5";
    { Hdf5RunWriter writer(h5, grid_2d(), "", ""); }
    EXPECT_THROW(Hdf5RunWriter(h5, grid_3d(), "", "", simrun::framework::Hdf5OpenMode::append),
                 std::invalid_argument);
}

// A new run file replaces the old one whole: no .xmf of the earlier run names its steps.
TEST_F(OutputTest, NewRunFileRemovesTheEarlierRunsXdmf) {
    const Grid grid = grid_2d();
    const auto u = sample_field(grid, 0.0);
    const std::vector<FieldView> fields{{"u", u}};
    {
        Hdf5RunWriter writer(dir_ / "run.h5", grid, "", "");
        writer.write_step(0, 0.0, fields, {});
    }
    ASSERT_TRUE(fs::exists(dir_ / "run.xmf"));
    Hdf5RunWriter writer(dir_ / "run.h5", grid, "", "");
    EXPECT_FALSE(fs::exists(dir_ / "run.xmf"));
    EXPECT_TRUE(writer.steps().empty());
    EXPECT_TRUE(temporary_files(dir_).empty());
}

TEST_F(OutputTest, VtkSeriesContinuesFromThePvdAndStartsAfresh) {
    const Grid grid = grid_2d();
    const auto u = sample_field(grid, 0.0);
    const std::vector<FieldView> fields{{"u", u}};
    const double third = 1.0 / 3.0;
    {
        VtkSeriesWriter writer(dir_, "a&b", grid);
        for (std::int64_t step = 0; step < 4; ++step) {
            writer.write_step(step, third * static_cast<double>(step), fields);
        }
    }
    {
        // Steps after the one continued from are dropped; the others keep their exact times.
        VtkSeriesWriter writer(dir_, "a&b", grid, simrun::framework::ContinueSeries{2});
        using Steps = std::vector<std::pair<std::int64_t, double>>;
        EXPECT_EQ(writer.steps(), (Steps{{0, 0.0}, {1, third}, {2, 2 * third}}));
        EXPECT_TRUE(writer.has_step(2));
        EXPECT_FALSE(writer.has_step(3));
        writer.write_step(4, 4 * third, fields);
        EXPECT_EQ(writer.steps(), (Steps{{0, 0.0}, {1, third}, {2, 2 * third}, {4, 4 * third}}));
    }
    const auto text = read_text(dir_ / "a&b.pvd");
    EXPECT_NE(text.find("file=\"a&amp;b_000004.vti\""), std::string::npos) << text;
    EXPECT_EQ(text.find("a&amp;b_000003.vti"), std::string::npos) << text;

    VtkSeriesWriter fresh(dir_, "a&b", grid);
    EXPECT_TRUE(fresh.steps().empty());
    EXPECT_FALSE(fs::exists(dir_ / "a&b.pvd"));
    VtkSeriesWriter elsewhere(dir_ / "none", "a&b", grid, simrun::framework::ContinueSeries{9});
    EXPECT_TRUE(elsewhere.steps().empty());
}

// A series written in pieces (one rank's here: the whole grid its only piece) continues a
// series of whole .vti files: the .pvd lists both kinds, the .pvti names the piece, and VTK's
// parallel reader reads the step as the image of a .vti. A piece of some planes is written
// with their extent, and a field of another size is refused.
TEST_F(OutputTest, VtkSeriesInPiecesContinuesASeriesOfWholeFiles) {
    using simrun::framework::ContinueSeries;
    using simrun::framework::PlaneRange;
    using simrun::framework::VtkPieces;
    const Grid grid = grid_2d();
    const auto u = sample_field(grid, 0.0);
    const std::vector<FieldView> fields{{"u", u}};
    {
        VtkSeriesWriter writer(dir_, "run", grid);
        writer.write_step(0, 0.0, fields);
        writer.write_step(1, 0.5, fields);
    }
    {
        VtkSeriesWriter writer(dir_, "run", grid, ContinueSeries{1},
                               VtkPieces{simrun::solvers::single_process(), {grid.box()}});
        EXPECT_TRUE(writer.has_step(1));
        writer.write_step(2, 1.0, fields);
        EXPECT_EQ(writer.step_path(2), dir_ / "run_000002.pvti");
        EXPECT_TRUE(fs::exists(writer.piece_path(2, 0)));
    }
    const auto pvd = read_text(dir_ / "run.pvd");
    EXPECT_NE(pvd.find("file=\"run_000001.vti\""), std::string::npos) << pvd;
    EXPECT_NE(pvd.find("file=\"run_000002.pvti\""), std::string::npos) << pvd;
    const auto pvti = read_text(dir_ / "run_000002.pvti");
    EXPECT_NE(pvti.find("Source=\"run_000002/run_000002_0.vti\""), std::string::npos) << pvti;

    vtkNew<vtkXMLImageDataReader> whole;
    whole->SetFileName((dir_ / "run_000001.vti").c_str());
    whole->Update();
    vtkNew<vtkXMLPImageDataReader> pieces;
    pieces->SetFileName((dir_ / "run_000002.pvti").c_str());
    pieces->Update();
    ASSERT_EQ(pieces->GetErrorCode(), 0u);
    std::array<int, 6> expected{}, extent{};
    whole->GetOutput()->GetExtent(expected.data());
    pieces->GetOutput()->GetExtent(extent.data());
    EXPECT_EQ(extent, expected);
    vtkDataArray* read = pieces->GetOutput()->GetPointData()->GetArray("u");
    ASSERT_NE(read, nullptr);
    ASSERT_EQ(read->GetNumberOfTuples(), static_cast<vtkIdType>(u.size()));
    for (std::size_t i = 0; i < u.size(); ++i) {
        ASSERT_EQ(read->GetTuple1(static_cast<vtkIdType>(i)), u[i]) << i;
    }

    // Planes 1 and 2 alone: the piece's extent is theirs.
    VtkSeriesWriter part(
        dir_ / "part", "run", grid,
        VtkPieces{simrun::solvers::single_process(), {grid.box(PlaneRange{1, 3})}});
    EXPECT_THROW(part.write_step(0, 0.0, fields), std::invalid_argument);
    const std::vector<double> planes(u.begin() + grid.plane_size(),
                                     u.begin() + 3 * grid.plane_size());
    const std::vector<FieldView> piece_fields{{"u", planes}};
    part.write_step(0, 0.0, piece_fields);
    vtkNew<vtkXMLImageDataReader> piece;
    piece->SetFileName(part.piece_path(0, 0).c_str());
    piece->Update();
    piece->GetOutput()->GetExtent(extent.data());
    EXPECT_EQ(extent, (std::array<int, 6>{0, static_cast<int>(grid.points(0)) - 1, 1, 2, 0, 0}));
    EXPECT_TRUE(temporary_files(dir_).empty());
}

// The .vti arrays as VTK lays them out, compressed (and written) by several threads: the same
// bytes as with one thread, read back exactly by VTK, with the block header
// [blocks, 1 MiB, bytes of a partial last block or 0, ...] and the range of the values.
TEST_F(OutputTest, VtkBlocksWrittenByFourThreadsMatchOneThreadByteForByte) {
    constexpr std::uint64_t block = std::uint64_t{1} << 20;
    // 1 344 000 bytes (a full block and a partial one) and 2 MiB (two full blocks).
    const Grid grids[] = {Grid(3, {70, 60, 40}, {-0.5, 0.0, 1.0}, {0.7, 2.0, 3.3}),
                          Grid(2, {512, 512, 1}, {0.0, 0.0, 0.0}, {1.0, 1.0, 0.0})};
    for (const Grid& grid : grids) {
        const auto u = sample_field(grid, 0.5);
        const std::vector<FieldView> fields{{"u", u}};
        const std::uint64_t bytes = u.size() * sizeof(double);
        const std::uint64_t blocks = (bytes + block - 1) / block;
        for (const auto compression :
             {VtkCompression::lz4, VtkCompression::zlib, VtkCompression::none}) {
            SCOPED_TRACE("dimension " + std::to_string(grid.dimension()) + ", compression " +
                         std::to_string(static_cast<int>(compression)));
            std::string files[2];
            for (const std::size_t threads : {1u, 4u}) {
                const auto sub = dir_ / ("threads" + std::to_string(threads));
                VtkSeriesWriter writer(sub, "run", grid);
                writer.set_compression(compression);
                writer.set_threads(threads);
                EXPECT_EQ(writer.threads(), threads);
                writer.write_step(1, 0.5, fields);
                expect_vti_equals(writer.step_path(1), grid, fields);
                files[threads == 1 ? 0 : 1] = read_text(writer.step_path(1));
            }
            ASSERT_EQ(files[0], files[1]);

            const std::string& text = files[1];
            const std::size_t data = text.find("<AppendedData encoding=\"raw\">\n   _");
            ASSERT_NE(data, std::string::npos);
            std::uint64_t header[3] = {};
            text.copy(reinterpret_cast<char*>(header), sizeof header, text.find('_', data) + 1);
            if (compression == VtkCompression::none) {
                EXPECT_EQ(header[0], bytes);
            } else {
                EXPECT_EQ(header[0], blocks);
                EXPECT_EQ(header[1], block);
                EXPECT_EQ(header[2], bytes % block);
            }
            const auto [min, max] = std::minmax_element(u.begin(), u.end());
            std::smatch range;
            ASSERT_TRUE(std::regex_search(
                text, range, std::regex(R"re(RangeMin="([^"]+)" RangeMax="([^"]+)")re")));
            EXPECT_EQ(std::stod(range[1].str()), *min);
            EXPECT_EQ(std::stod(range[2].str()), *max);
        }
    }
}

// A staged step reaches the file and the .xmf only when committed; a discarded one, or one
// staged when the writer closes, never does.
TEST_F(OutputTest, Hdf5StagedStepAppearsOnlyWhenCommitted) {
    const Grid grid = grid_2d();
    const auto u = sample_field(grid, 0.0);
    const auto v = sample_field(grid, 3.0);
    const std::vector<FieldView> first{{"u", u}};
    const std::vector<FieldView> second{{"u", v}};
    const auto h5 = dir_ / "run.h5";
    {
        Hdf5RunWriter writer(h5, grid, "input", "decisions");
        writer.write_step(0, 0.0, first, {});
        writer.stage_step(1, 0.5, first, {});
        EXPECT_THROW(writer.stage_step(2, 1.0, first, {}), std::logic_error);
        writer.discard_staged();
        EXPECT_EQ(writer.steps().size(), 1u);
        EXPECT_THROW(writer.commit_staged(), std::logic_error);
        writer.stage_step(1, 0.5, second, {});
        writer.commit_staged();
        ASSERT_EQ(writer.steps().size(), 2u);
        EXPECT_EQ(writer.steps()[1].time, 0.5);
        writer.stage_step(2, 1.0, first, {});  // left staged: dropped on closing
    }
    const std::string xdmf = read_text(dir_ / "run.xmf");
    EXPECT_NE(xdmf.find("step_000001"), std::string::npos);
    EXPECT_EQ(xdmf.find("step_000002"), std::string::npos);
    H5Id file{H5Fopen(h5.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
    ASSERT_GE(file.id, 0);
    EXPECT_GT(H5Lexists(file.id, "/steps/000001", H5P_DEFAULT), 0);
    EXPECT_EQ(H5Lexists(file.id, "/steps/000002", H5P_DEFAULT), 0);
    std::vector<hsize_t> dims;
    EXPECT_EQ(read_dataset(file.id, "/steps/000001/u", dims), v);
}

// Hostile run files: every reader of a run file (read_run_file, read_restart_state, the writer's
// append) refuses what would make HDF5 read another file (external raw storage, virtual
// datasets, external and user-defined links, filters that need a plugin), data the file cannot
// hold, grids of no nodes, and reads larger than the memory they may use, counted for the whole
// read. The files are built with the HDF5 C API, one change from what simrun writes each.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

// The readers' link visitor (for_each_link) is internal to the framework: its exception safety
// is tested here through its own header.
#include "../../../framework/src/output/hdf5_support.hpp"
#include "../../../framework/src/output/run_file_safety.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/framework/output/hdf5_run_writer.hpp"
#include "simrun/framework/output/restart_state.hpp"
#include "simrun/framework/output/run_file_reader.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/solvers/system/memory_budget.hpp"

namespace fs = std::filesystem;
using simrun::framework::Grid;
using simrun::framework::InputError;
using simrun::framework::read_restart_state;
using simrun::framework::read_run_file;
using simrun::framework::RunFileMemory;
using simrun::framework::TimeParameters;

namespace {

// Whether `text` contains each of `parts`, naming those it lacks.
::testing::AssertionResult contains(const std::string& text,
                                    std::initializer_list<std::string> parts) {
    for (const auto& part : parts) {
        if (text.find(part) == std::string::npos) {
            return ::testing::AssertionFailure() << "'" << text << "' lacks '" << part << "'";
        }
    }
    return ::testing::AssertionSuccess();
}

constexpr std::int64_t nx = 9, ny = 7;
// What write_run_file stores as /input and /solver_decisions, and their bytes in the file (one
// NUL each).
const std::string stored_input = "[problem]\ntype = \"heat\"\n", stored_decisions = "cg";
const double text_bytes = static_cast<double>(stored_input.size() + stored_decisions.size() + 2);
Grid test_grid() { return Grid(2, {nx, ny, 1}, {0.0, -1.0, 0.0}, {2.0, 0.5, 0.0}); }

// Closes an HDF5 identifier at the end of a scope.
struct Id {
    hid_t id;
    herr_t (*close)(hid_t);
    ~Id() {
        if (id >= 0) close(id);
    }
    operator hid_t() const { return id; }
};

void string_attribute(hid_t object, const char* name, const std::string& text) {
    Id type{H5Tcopy(H5T_C_S1), H5Tclose};
    H5Tset_size(type, text.size() + 1);
    Id space{H5Screate(H5S_SCALAR), H5Sclose};
    Id attr{H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
    H5Awrite(attr, type, text.c_str());
}

template <typename T>
void attribute(hid_t object, const char* name, hid_t type, const T* values, hsize_t count) {
    Id space{count == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr), H5Sclose};
    Id attr{H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
    H5Awrite(attr, type, values);
}

void string_dataset(hid_t location, const char* name, const std::string& text,
                    hid_t create = H5P_DEFAULT) {
    Id type{H5Tcopy(H5T_C_S1), H5Tclose};
    H5Tset_size(type, text.size() + 1);
    Id space{H5Screate(H5S_SCALAR), H5Sclose};
    Id data{H5Dcreate2(location, name, type, space, H5P_DEFAULT, create, H5P_DEFAULT), H5Dclose};
    if (create == H5P_DEFAULT) H5Dwrite(data, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.c_str());
}

// A field dataset [ny][nx] of `values` (nothing written where `values` is empty).
void field_dataset(hid_t location, const char* name, const std::vector<double>& values,
                   hid_t create = H5P_DEFAULT, std::array<hsize_t, 2> dims = {ny, nx}) {
    Id space{H5Screate_simple(2, dims.data(), nullptr), H5Sclose};
    Id data{H5Dcreate2(location, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, create, H5P_DEFAULT),
            H5Dclose};
    ASSERT_GE(data.id, 0) << name;
    if (!values.empty()) {
        ASSERT_GE(H5Dwrite(data, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
                  0);
    }
}

std::vector<double> field_values(double shift) {
    std::vector<double> values(nx * ny);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i) + shift;
    return values;
}

// A run file as Hdf5RunWriter writes it on `grid`: steps 0 .. steps-1 at t = step * 0.1, each
// with u = field_values(step) and a residual history of 3 values; `field_name(step)` names
// each step's field ("u" by default).
void write_run_file(const fs::path& path, const Grid& grid, int steps,
                    const std::function<std::string(int)>& field_name = {}) {
    Id file{H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose};
    {
        Id group{H5Gcreate2(file, "/grid", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose};
        const int dimension = grid.dimension();
        attribute(group, "dimension", H5T_NATIVE_INT, &dimension, 0);
        attribute(group, "points", H5T_NATIVE_INT64, grid.points().data(), 3);
        attribute(group, "origin", H5T_NATIVE_DOUBLE, grid.origin().data(), 3);
        attribute(group, "spacing", H5T_NATIVE_DOUBLE, grid.spacing().data(), 3);
    }
    string_dataset(file, "/input", stored_input);
    string_dataset(file, "/solver_decisions", stored_decisions);
    Id steps_group{H5Gcreate2(file, "/steps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose};
    for (int step = 0; step < steps; ++step) {
        char name[16];
        std::snprintf(name, sizeof name, "%06d", step);
        Id group{H5Gcreate2(steps_group, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose};
        const double time = step * 0.1, residual = 1e-9;
        const std::int64_t iterations = 2;
        attribute(group, "time", H5T_NATIVE_DOUBLE, &time, 0);
        attribute(group, "solver_iterations", H5T_NATIVE_INT64, &iterations, 0);
        attribute(group, "relative_residual", H5T_NATIVE_DOUBLE, &residual, 0);
        string_attribute(group, "status", "converged");
        string_attribute(group, "method", "cg");
        const std::vector<double> history{1.0, 1e-4, 1e-9};
        const hsize_t length = history.size();
        Id space{H5Screate_simple(1, &length, nullptr), H5Sclose};
        Id data{H5Dcreate2(group, "residual_history", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT,
                           H5P_DEFAULT, H5P_DEFAULT),
                H5Dclose};
        H5Dwrite(data, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, history.data());
        const std::string field = field_name ? field_name(step) : "u";
        const auto values = field_values(step);
        std::array<hsize_t, 2> dims{static_cast<hsize_t>(grid.points(1)),
                                    static_cast<hsize_t>(grid.points(0))};
        std::vector<double> whole(static_cast<std::size_t>(grid.num_points()));
        for (std::size_t i = 0; i < whole.size(); ++i) whole[i] = values[i % values.size()];
        field_dataset(group, field.c_str(), whole, H5P_DEFAULT, dims);
    }
}

class RunFileSafety : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() /
               ("simrun_run_file_safety_" + std::to_string(::getpid()) + "_" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        h5_ = dir_ / "run.h5";
        write_run_file(h5_, test_grid(), 1);
        // Another file of the user's: the values a crafted run file would read.
        secret_ = dir_ / "secret.bin";
        std::ofstream out(secret_, std::ios::binary);
        const auto values = field_values(1000.0);
        out.write(reinterpret_cast<const char*>(values.data()),
                  static_cast<std::streamsize>(values.size() * sizeof(double)));
    }
    void TearDown() override {
        std::error_code ignored;
        fs::remove_all(dir_, ignored);
    }

    // Opens the run file to change it.
    void change(const std::function<void(hid_t file)>& edit) {
        Id file{H5Fopen(h5_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose};
        ASSERT_GE(file.id, 0);
        edit(file);
    }
    // Replaces /steps/000000/u by a dataset made with `create`, and `values` written.
    void replace_u(hid_t create, const std::vector<double>& values = {}) {
        change([&](hid_t file) {
            H5Ldelete(file, "/steps/000000/u", H5P_DEFAULT);
            Id group{H5Gopen2(file, "/steps/000000", H5P_DEFAULT), H5Gclose};
            field_dataset(group, "u", values, create);
        });
    }

    // The message of the InputError with which read_run_file refuses the file; "" where it
    // reads it.
    std::string read_refusal(bool with_fields = true) {
        try {
            read_run_file(h5_, with_fields);
        } catch (const InputError& e) {
            return e.what();
        }
        return "";
    }

    // The message of the InputError with which read_restart_state refuses the file; "" where
    // it reads it.
    std::string restart_refusal() {
        TimeParameters time;
        time.dt = 0.1;
        time.end = 1.0;
        time.steps = 10;
        try {
            read_restart_state(h5_, test_grid(), time);
        } catch (const InputError& e) {
            return e.what();
        }
        return "";
    }

    // read_run_file and read_restart_state both refuse the file with InputError, their
    // messages naming the file (once) and containing every one of `parts`.
    template <typename... Parts>
    void expect_refused(const Parts&... parts) {
        EXPECT_TRUE(contains(read_refusal(), {h5_.string(), std::string(parts)...}));
        const std::string restart = restart_refusal();
        EXPECT_TRUE(contains(restart, {"--restart " + h5_.string(), std::string(parts)...}));
        EXPECT_EQ(occurrences(restart, h5_.string()), 1u) << restart;
    }

    static std::size_t occurrences(const std::string& text, const std::string& part) {
        std::size_t count = 0;
        for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
            ++count;
        }
        return count;
    }

    // Replaces link `place` by an external link to the same path in `other`.
    void link_out(const char* place, const fs::path& other) {
        change([&](hid_t file) {
            H5Ldelete(file, place, H5P_DEFAULT);
            H5Lcreate_external(other.c_str(), place, file, place, H5P_DEFAULT, H5P_DEFAULT);
        });
    }

    fs::path dir_, h5_, secret_;
};

TEST_F(RunFileSafety, TheUnchangedFileReadsAsWritten) {
    const auto run = read_run_file(h5_);
    ASSERT_EQ(run.steps.size(), 1u);
    ASSERT_EQ(run.steps[0].fields.size(), 1u);
    EXPECT_EQ(run.steps[0].fields[0].values, field_values(0.0));
    EXPECT_EQ(run.steps[0].statistics.residual_history, (std::vector<double>{1.0, 1e-4, 1e-9}));
}

TEST_F(RunFileSafety, ExternalRawStorageIsRefusedNamingTheDatasetAndTheFile) {
    Id create{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
    ASSERT_GE(H5Pset_external(create, secret_.c_str(), 0, nx * ny * sizeof(double)), 0);
    replace_u(create);
    expect_refused("'/steps/000000/u'", "external storage", secret_.string());
}

TEST_F(RunFileSafety, ExternalRawStorageOfTheInputTextIsRefused) {
    change([&](hid_t file) {
        H5Ldelete(file, "/input", H5P_DEFAULT);
        Id create{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
        H5Pset_external(create, secret_.c_str(), 0, 64);
        Id type{H5Tcopy(H5T_C_S1), H5Tclose};
        H5Tset_size(type, 64);
        Id space{H5Screate(H5S_SCALAR), H5Sclose};
        Id data{H5Dcreate2(file, "/input", type, space, H5P_DEFAULT, create, H5P_DEFAULT),
                H5Dclose};
    });
    EXPECT_TRUE(contains(read_refusal(false), {h5_.string(), "'/input'", "external storage"}));
}

TEST_F(RunFileSafety, VirtualDatasetIsRefused) {
    const fs::path source = dir_ / "source.h5";
    write_run_file(source, test_grid(), 1);
    Id create{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
    const std::array<hsize_t, 2> dims{ny, nx};
    Id space{H5Screate_simple(2, dims.data(), nullptr), H5Sclose};
    ASSERT_GE(H5Pset_virtual(create, space, source.c_str(), "/steps/000000/u", space), 0);
    replace_u(create);
    expect_refused("'/steps/000000/u'", "virtual dataset");
}

TEST_F(RunFileSafety, ExternalLinkOnAPathTheReadOpensIsRefused) {
    const fs::path other = dir_ / "other.h5";
    write_run_file(other, test_grid(), 1);
    for (const char* place : {"/steps/000000/u", "/steps/000000", "/steps", "/grid"}) {
        write_run_file(h5_, test_grid(), 1);
        link_out(place, other);
        SCOPED_TRACE(place);
        expect_refused(std::string("'") + place + "'", "external link", other.string());
    }
    // The texts, which read_run_file reads and the restart does not.
    for (const char* place : {"/input", "/solver_decisions"}) {
        write_run_file(h5_, test_grid(), 1);
        link_out(place, other);
        SCOPED_TRACE(place);
        EXPECT_TRUE(contains(read_refusal(false), {h5_.string(), std::string("'") + place + "'",
                                                   "external link", other.string()}));
    }
}

// The readers check each link on the paths they open, not every link of the file (a walk of
// the whole file cost 0.4 s per read of a 10,001-step file): a link that no read follows is
// left alone; the writer's append, which keeps the whole file, still refuses it.
TEST_F(RunFileSafety, ExternalLinkThatNoReadFollowsIsLeftAloneByTheReadersOnly) {
    const fs::path other = dir_ / "other.h5";
    write_run_file(other, test_grid(), 2);
    write_run_file(h5_, test_grid(), 2);
    change([&](hid_t file) {
        H5Lcreate_external(other.c_str(), "/grid", file, "/unrelated", H5P_DEFAULT, H5P_DEFAULT);
        H5Lcreate_external(other.c_str(), "/steps", file, "/steps/not_a_step", H5P_DEFAULT,
                           H5P_DEFAULT);
    });
    link_out("/steps/000001/u", other);
    // Step 0 alone: step 1's external link is on no path the read opens.
    const auto run = read_run_file(h5_, true, std::vector<std::int64_t>{0});
    ASSERT_EQ(run.steps.size(), 1u);
    EXPECT_EQ(run.steps[0].fields.at(0).values, field_values(0.0));
    EXPECT_TRUE(contains(read_refusal(), {"'/steps/000001/u'", "external link"}));
    try {
        simrun::framework::Hdf5RunWriter writer(h5_, test_grid(), "", "",
                                                simrun::framework::Hdf5OpenMode::append);
        ADD_FAILURE() << "the writer appended to " << h5_;
    } catch (const InputError& e) {
        EXPECT_TRUE(contains(e.what(), {h5_.string(), "external link"}));
    }
}

TEST_F(RunFileSafety, UserDefinedLinkIsRefused) {
    constexpr H5L_type_t type = static_cast<H5L_type_t>(H5L_TYPE_UD_MIN + 7);
    H5L_class_t link_class{};
    link_class.version = H5L_LINK_CLASS_T_VERS;
    link_class.id = type;
    link_class.comment = "test";
    link_class.trav_func = [](const char*, hid_t, const void*, size_t, hid_t, hid_t) -> hid_t {
        return -1;
    };
    ASSERT_GE(H5Lregister(&link_class), 0);
    change([&](hid_t file) {
        H5Ldelete(file, "/steps/000000/u", H5P_DEFAULT);
        H5Lcreate_ud(file, "/steps/000000/u", type, "x", 1, H5P_DEFAULT, H5P_DEFAULT);
    });
    expect_refused("'/steps/000000/u'", "user-defined link");
    H5Lunregister(type);
}

TEST_F(RunFileSafety, FilterThatNeedsAPluginIsRefusedAndBuiltInOnesAreRead) {
    const std::array<hsize_t, 2> chunk{ny, nx};
    {
        Id create{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
        H5Pset_chunk(create, 2, chunk.data());
        H5Pset_shuffle(create);
        H5Pset_deflate(create, 6);
        replace_u(create, field_values(0.0));
        EXPECT_EQ(read_run_file(h5_).steps.at(0).fields.at(0).values, field_values(0.0));
    }
    // A filter registered while the file is written and gone when it is read, as a plugin
    // that HDF5 would look for.
    constexpr H5Z_filter_t id = 32767;
    H5Z_class2_t filter{};
    filter.version = H5Z_CLASS_T_VERS;
    filter.id = id;
    filter.encoder_present = filter.decoder_present = 1;
    filter.name = "test filter";
    filter.filter = [](unsigned, size_t, const unsigned*, size_t nbytes, size_t*,
                       void**) -> size_t { return nbytes; };
    ASSERT_GE(H5Zregister(&filter), 0);
    {
        Id create{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
        H5Pset_chunk(create, 2, chunk.data());
        H5Pset_filter(create, id, H5Z_FLAG_MANDATORY, 0, nullptr);
        replace_u(create, field_values(0.0));
    }
    ASSERT_GE(H5Zunregister(id), 0);
    expect_refused("'/steps/000000/u'", "filter 32767");
}

TEST_F(RunFileSafety, ContiguousValuesTheFileCannotHoldAreRefusedAsCorrupt) {
    // 2000 x 3000 doubles (48 MB) declared, never written: a file of a few kB.
    const Grid large(2, {3000, 2000, 1}, {0.0, 0.0, 0.0}, {1.0, 1.0, 0.0});
    change([&](hid_t file) {
        Id group{H5Gopen2(file, "/grid", H5P_DEFAULT), H5Gclose};
        H5Adelete(group, "points");
        attribute(group, "points", H5T_NATIVE_INT64, large.points().data(), 3);
        H5Ldelete(file, "/steps/000000/u", H5P_DEFAULT);
        Id step{H5Gopen2(file, "/steps/000000", H5P_DEFAULT), H5Gclose};
        field_dataset(step, "u", {}, H5P_DEFAULT, {2000, 3000});
    });
    ASSERT_LT(fs::file_size(h5_), 1'000'000u);
    EXPECT_TRUE(
        contains(read_refusal(), {h5_.string(), "'/steps/000000/u'",
                                  simrun::solvers::format_bytes(2000 * 3000 * 8.0), "corrupt"}));
}

// A chunked dataset whose chunks were never written reads as its fill value: a file of a few
// kB would make the reader allocate what its extent declares. Every chunk must be there.
TEST_F(RunFileSafety, ChunkedValuesNeverWrittenAreRefusedAsCorrupt) {
    const Grid large(2, {3000, 2000, 1}, {0.0, 0.0, 0.0}, {1.0, 1.0, 0.0});
    const std::array<hsize_t, 2> chunk{100, 100};
    for (const bool one_chunk_written : {false, true}) {
        write_run_file(h5_, test_grid(), 1);
        change([&](hid_t file) {
            Id group{H5Gopen2(file, "/grid", H5P_DEFAULT), H5Gclose};
            H5Adelete(group, "points");
            attribute(group, "points", H5T_NATIVE_INT64, large.points().data(), 3);
            H5Ldelete(file, "/steps/000000/u", H5P_DEFAULT);
            Id step{H5Gopen2(file, "/steps/000000", H5P_DEFAULT), H5Gclose};
            Id create{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
            H5Pset_chunk(create, 2, chunk.data());
            field_dataset(step, "u", {}, create, {2000, 3000});
            if (!one_chunk_written) return;
            Id data{H5Dopen2(step, "u", H5P_DEFAULT), H5Dclose};
            Id space{H5Dget_space(data), H5Sclose};
            const std::array<hsize_t, 2> start{0, 0};
            H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, chunk.data(),
                                nullptr);
            Id memory{H5Screate_simple(2, chunk.data(), nullptr), H5Sclose};
            const std::vector<double> values(chunk[0] * chunk[1], 1.0);
            H5Dwrite(data, H5T_NATIVE_DOUBLE, memory, space, H5P_DEFAULT, values.data());
        });
        ASSERT_LT(fs::file_size(h5_), 1'000'000u);
        const std::string written = one_chunk_written ? "1" : "0";
        const std::string chunks = std::to_string((2000 / 100) * (3000 / 100));
        EXPECT_TRUE(contains(
            read_refusal(),
            {h5_.string(), "'/steps/000000/u'", simrun::solvers::format_bytes(2000 * 3000 * 8.0),
             written + " of " + chunks + " chunks written", "corrupt"}))
            << "one chunk written: " << one_chunk_written;
    }
}

// Filtered chunks hold fewer bytes than their values, legitimately: what they decompress into
// is what the read's memory check counts, the values and one whole chunk (HDF5 decompresses a
// chunk whole, and a chunk may be larger than the extent).
TEST_F(RunFileSafety, ReadBudgetCountsTheChunkAFilteredDatasetDecompresses) {
    const std::array<hsize_t, 2> chunk{256, 512};  // 1 MiB of doubles, for 63 values
    change([&](hid_t file) {
        H5Ldelete(file, "/steps/000000/u", H5P_DEFAULT);
        Id group{H5Gopen2(file, "/steps/000000", H5P_DEFAULT), H5Gclose};
        const std::array<hsize_t, 2> dims{ny, nx}, unlimited{H5S_UNLIMITED, H5S_UNLIMITED};
        Id space{H5Screate_simple(2, dims.data(), unlimited.data()), H5Sclose};
        Id create{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
        H5Pset_chunk(create, 2, chunk.data());
        H5Pset_deflate(create, 6);
        Id data{H5Dcreate2(group, "u", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, create, H5P_DEFAULT),
                H5Dclose};
        const auto values = field_values(0.0);
        H5Dwrite(data, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    });
    const double held = 8.0 * (nx * ny + 3) + text_bytes + 8.0 * 256 * 512;
    RunFileMemory memory;
    memory.limit = held - 1;
    EXPECT_THROW(read_run_file(h5_, true, std::nullopt, memory), std::runtime_error);
    memory.limit = held;
    EXPECT_EQ(read_run_file(h5_, true, std::nullopt, memory).steps.at(0).fields.at(0).values,
              field_values(0.0));
}

TEST_F(RunFileSafety, GridOfZeroOrNegativeNodesIsRefusedNamingTheAttribute) {
    for (const std::array<std::int64_t, 3> points :
         {std::array<std::int64_t, 3>{0, ny, 1}, {nx, -4, 1}, {nx, ny, 0}}) {
        write_run_file(h5_, test_grid(), 1);
        change([&](hid_t file) {
            Id group{H5Gopen2(file, "/grid", H5P_DEFAULT), H5Gclose};
            H5Adelete(group, "points");
            attribute(group, "points", H5T_NATIVE_INT64, points.data(), 3);
        });
        EXPECT_TRUE(contains(read_refusal(false), {h5_.string(), "/grid", "'points'"}))
            << "a grid of " << points[0] << " x " << points[1] << " x " << points[2];
    }
    for (const double spacing : {0.0, -0.25}) {
        write_run_file(h5_, test_grid(), 1);
        change([&](hid_t file) {
            Id group{H5Gopen2(file, "/grid", H5P_DEFAULT), H5Gclose};
            H5Adelete(group, "spacing");
            const std::array<double, 3> values{0.25, spacing, 1.0};
            attribute(group, "spacing", H5T_NATIVE_DOUBLE, values.data(), 3);
        });
        EXPECT_TRUE(contains(read_refusal(false), {h5_.string(), "/grid", "'spacing'"}))
            << "spacing " << spacing;
    }
}

TEST_F(RunFileSafety, StringsOfMoreThanOneValueAreRefused) {
    // The readers read one string: a dataset or attribute of several would overrun it.
    change([&](hid_t file) {
        H5Ldelete(file, "/input", H5P_DEFAULT);
        Id type{H5Tcopy(H5T_C_S1), H5Tclose};
        H5Tset_size(type, 8);
        const hsize_t count = 4096;
        Id space{H5Screate_simple(1, &count, nullptr), H5Sclose};
        Id data{H5Dcreate2(file, "/input", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                H5Dclose};
        const std::vector<char> text(count * 8, 'a');
        H5Dwrite(data, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data());
    });
    EXPECT_TRUE(contains(read_refusal(false), {h5_.string(), "/input", "one fixed-length string"}));
    write_run_file(h5_, test_grid(), 1);
    change([&](hid_t file) {
        Id group{H5Gopen2(file, "/steps/000000", H5P_DEFAULT), H5Gclose};
        H5Adelete(group, "status");
        Id type{H5Tcopy(H5T_C_S1), H5Tclose};
        H5Tset_size(type, 8);
        const hsize_t count = 512;
        Id space{H5Screate_simple(1, &count, nullptr), H5Sclose};
        Id attr{H5Acreate2(group, "status", type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
        const std::vector<char> text(count * 8, 'a');
        H5Awrite(attr, type, text.data());
    });
    EXPECT_TRUE(
        contains(read_refusal(false), {h5_.string(), "'status'", "one fixed-length string"}));
}

TEST_F(RunFileSafety, AppendingToAFileWithAnExternalLinkIsRefused) {
    const fs::path other = dir_ / "other.h5";
    write_run_file(other, test_grid(), 1);
    change([&](hid_t file) {
        H5Ldelete(file, "/steps/000000/u", H5P_DEFAULT);
        H5Lcreate_external(other.c_str(), "/steps/000000/u", file, "/steps/000000/u", H5P_DEFAULT,
                           H5P_DEFAULT);
    });
    try {
        simrun::framework::Hdf5RunWriter writer(h5_, test_grid(), "", "",
                                                simrun::framework::Hdf5OpenMode::append);
        ADD_FAILURE() << "the writer appended to " << h5_;
    } catch (const InputError& e) {
        EXPECT_TRUE(contains(e.what(), {h5_.string(), "'/steps/000000/u'", "external link"}));
    }
}

// The memory a read holds, counted before any value is read: every chosen step's fields and
// residual histories, and the caller's stacked copy where it makes one.
TEST_F(RunFileSafety, ReadBudgetCountsEveryStepAndTheCallersCopy) {
    constexpr int steps = 3;
    write_run_file(h5_, test_grid(), steps);
    const double values = steps * (nx * ny + 3.0);  // each step: u and 3 residuals
    const double held = 8.0 * values + text_bytes;
    // Each dataset alone is far below the limit; all of them are not.
    RunFileMemory memory;
    memory.limit = held - 8.0;
    try {
        read_run_file(h5_, true, std::nullopt, memory);
        ADD_FAILURE() << "read " << held << " bytes under a limit of " << *memory.limit;
    } catch (const std::runtime_error& e) {
        EXPECT_TRUE(
            contains(e.what(), {h5_.string(), "3 steps", simrun::solvers::format_bytes(held),
                                simrun::solvers::format_bytes(*memory.limit)}));
    }
    memory.limit = held;
    EXPECT_EQ(read_run_file(h5_, true, std::nullopt, memory).steps.size(), 3u);
    // The caller's copy of the same values is counted too.
    memory.stacked_copy = true;
    EXPECT_THROW(read_run_file(h5_, true, std::nullopt, memory), std::runtime_error);
    memory.limit = 2 * held;
    EXPECT_EQ(read_run_file(h5_, true, std::nullopt, memory).steps.size(), 3u);
    // Steps asked for twice are held twice.
    memory.limit = held;
    memory.stacked_copy = false;
    EXPECT_THROW(read_run_file(h5_, true, std::vector<std::int64_t>{0, 1, 2, 2}, memory),
                 std::runtime_error);
}

TEST_F(RunFileSafety, ReadBudgetCountsTheStackedCopyOfFieldsThatStepsLack) {
    // Each of 4 steps stores its own field: the copy stacks 4 fields over 4 steps (16 arrays of
    // a step's nodes, NaN where a step lacks the field), where the read holds 4.
    constexpr int steps = 4;
    write_run_file(h5_, test_grid(), steps, [](int step) { return "f" + std::to_string(step); });
    const double histories = steps * 3.0;
    const double read = 8.0 * (steps * nx * ny + histories) + text_bytes;
    const double copy = 8.0 * (steps * steps * nx * ny + histories) + text_bytes;
    RunFileMemory memory;
    memory.stacked_copy = true;
    memory.limit = read + copy - 8.0;
    EXPECT_THROW(read_run_file(h5_, true, std::nullopt, memory), std::runtime_error);
    memory.limit = read + copy;
    EXPECT_EQ(read_run_file(h5_, true, std::nullopt, memory).steps.size(), 4u);
}

// The stored input and solver decisions are read with the rest: counted in the same budget,
// under the caller's limit.
TEST_F(RunFileSafety, ReadBudgetCountsTheStoredTexts) {
    const std::string long_input(1 << 20, '#');
    change([&](hid_t file) {
        H5Ldelete(file, "/input", H5P_DEFAULT);
        string_dataset(file, "/input", long_input);
    });
    const auto texts = long_input.size() + 1 + stored_decisions.size() + 1;
    const double held = 8.0 * 3 + static_cast<double>(texts);
    RunFileMemory memory;
    memory.limit = held - 1;
    try {
        read_run_file(h5_, false, std::nullopt, memory);
        ADD_FAILURE() << "read " << held << " bytes under a limit of " << *memory.limit;
    } catch (const std::runtime_error& e) {
        EXPECT_TRUE(contains(e.what(), {h5_.string(), simrun::solvers::format_bytes(held)}));
    }
    memory.limit = held;
    EXPECT_EQ(read_run_file(h5_, false, std::nullopt, memory).input, long_input);
    // Copied by the caller: twice.
    memory.stacked_copy = true;
    EXPECT_THROW(read_run_file(h5_, false, std::nullopt, memory), std::runtime_error);
    memory.limit = 2 * held;
    EXPECT_EQ(read_run_file(h5_, false, std::nullopt, memory).input, long_input);
}

TEST_F(RunFileSafety, RestartMessagesNameTheFileOnce) {
    // A refusal (InputError naming the file) and a file that HDF5 cannot open at all.
    change([&](hid_t file) {
        Id group{H5Gopen2(file, "/grid", H5P_DEFAULT), H5Gclose};
        H5Adelete(group, "spacing");
        const std::array<double, 3> spacing{0.0, 0.5, 0.0};
        attribute(group, "spacing", H5T_NATIVE_DOUBLE, spacing.data(), 3);
    });
    std::string message = restart_refusal();
    EXPECT_TRUE(contains(message, {"--restart " + h5_.string() + ": refused: ", "'spacing'"}));
    EXPECT_EQ(occurrences(message, h5_.string()), 1u) << message;
    std::ofstream(h5_, std::ios::trunc) << "not HDF5";
    message = restart_refusal();
    EXPECT_TRUE(contains(message, {"--restart " + h5_.string(), "not a readable simrun run file"}));
    EXPECT_EQ(occurrences(message, h5_.string()), 1u) << message;
}

// HDF5 calls the link visitor from C code: an exception must not unwind through it. It reaches
// the caller as thrown, once HDF5 has returned, and HDF5 goes on working (no error left on its
// stack, the file readable).
TEST_F(RunFileSafety, AnExceptionOfTheLinkVisitorReachesTheCallerOutsideHdf5) {
    struct Stop {
        std::string at;
    };
    namespace hdf5 = simrun::framework::hdf5;
    const hdf5::Context context(h5_);
    auto file = hdf5::open_for_reading(context, H5P_DEFAULT);
    std::vector<std::string> seen;
    try {
        hdf5::for_each_link(context, file.get(), "/",
                            [&](const std::string& name, const H5L_info_t&) {
                                seen.push_back(name);
                                if (name == "input") throw Stop{name};
                            });
        ADD_FAILURE() << "the visitor's exception was lost";
    } catch (const Stop& stop) {
        EXPECT_EQ(stop.at, "input");
    }
    EXPECT_EQ(seen, (std::vector<std::string>{"grid", "input"}));  // stopped where it threw
    EXPECT_EQ(H5Eget_num(H5E_DEFAULT), 0);
    seen.clear();
    hdf5::for_each_link(context, file.get(), "/",
                        [&](const std::string& name, const H5L_info_t&) { seen.push_back(name); });
    EXPECT_EQ(seen, (std::vector<std::string>{"grid", "input", "solver_decisions", "steps"}));
    file.reset();
    EXPECT_EQ(read_run_file(h5_).steps.size(), 1u);
}

}  // namespace

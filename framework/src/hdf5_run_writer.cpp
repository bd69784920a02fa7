#include "simrun/framework/hdf5_run_writer.hpp"

#include <hdf5.h>

#include <array>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "simrun/solvers/atomic_file.hpp"

namespace simrun::framework {

static_assert(std::is_same_v<hid_t, std::int64_t> && std::is_same_v<herr_t, int>,
              "Hdf5Handle assumes HDF5 >= 1.10 identifier types");

Hdf5Handle::Hdf5Handle(Hdf5Handle&& other) noexcept
    : id_(std::exchange(other.id_, -1)), closer_(other.closer_) {}

Hdf5Handle& Hdf5Handle::operator=(Hdf5Handle&& other) noexcept {
    if (this != &other) {
        reset();
        id_ = std::exchange(other.id_, -1);
        closer_ = other.closer_;
    }
    return *this;
}

void Hdf5Handle::reset() {
    if (id_ >= 0 && closer_ != nullptr) closer_(id_);
    id_ = -1;
}

namespace {

class Context {
public:
    explicit Context(const std::filesystem::path& file) : file_(file) {}

    // The message names the file, the operation and the innermost entry of HDF5's error
    // stack (which carries the OS error for file system failures).
    [[noreturn]] void fail(const std::string& operation) const {
        std::string detail;
        H5Ewalk2(
            H5E_DEFAULT, H5E_WALK_DOWNWARD,
            [](unsigned, const H5E_error2_t* error, void* out) -> herr_t {
                if (error->desc != nullptr) *static_cast<std::string*>(out) = error->desc;
                return 0;
            },
            &detail);
        H5Eclear2(H5E_DEFAULT);
        throw std::runtime_error("HDF5 file '" + file_.string() + "': " + operation + " failed" +
                                 (detail.empty() ? "" : ": " + detail));
    }
    Hdf5Handle check(hid_t id, Hdf5Handle::Closer closer, const std::string& operation) const {
        if (id < 0) fail(operation);
        return Hdf5Handle(id, closer);
    }
    void check(herr_t status, const std::string& operation) const {
        if (status < 0) fail(operation);
    }

    Hdf5Handle scalar_space() const { return check(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate"); }
    Hdf5Handle simple_space(std::span<const hsize_t> dims) const {
        return check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                     H5Sclose, "H5Screate_simple");
    }
    // Fixed-length UTF-8 string type; HDF5 forbids size 0, so an empty string gets one NUL.
    Hdf5Handle string_type(std::size_t length) const {
        auto type = check(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy");
        check(H5Tset_size(type.get(), length == 0 ? 1 : length), "H5Tset_size");
        check(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
        check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset");
        return type;
    }

    void attribute(hid_t object, const char* name, hid_t type, hid_t space,
                   const void* data) const {
        const std::string what = std::string(" of attribute '") + name + "'";
        auto attr = check(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                          "H5Acreate2" + what);
        check(H5Awrite(attr.get(), type, data), "H5Awrite" + what);
    }
    template <typename T>
    void scalar_attribute(hid_t object, const char* name, hid_t type, T value) const {
        attribute(object, name, type, scalar_space().get(), &value);
    }
    template <typename T>
    void triple_attribute(hid_t object, const char* name, hid_t type,
                          const std::array<T, 3>& values) const {
        const std::array<hsize_t, 1> dims{3};
        attribute(object, name, type, simple_space(dims).get(), values.data());
    }
    void string_attribute(hid_t object, const char* name, std::string_view text) const {
        const std::string padded(text.empty() ? std::string(1, '\0') : std::string(text));
        auto type = string_type(text.size());
        attribute(object, name, type.get(), scalar_space().get(), padded.data());
    }
    void string_dataset(hid_t location, const char* name, std::string_view text) const {
        const std::string padded(text.empty() ? std::string(1, '\0') : std::string(text));
        const std::string what = std::string(" of dataset '") + name + "'";
        auto type = string_type(text.size());
        auto space = scalar_space();
        auto data = check(H5Dcreate2(location, name, type.get(), space.get(), H5P_DEFAULT,
                                     H5P_DEFAULT, H5P_DEFAULT),
                          H5Dclose, "H5Dcreate2" + what);
        check(H5Dwrite(data.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, padded.data()),
              "H5Dwrite" + what);
    }

private:
    const std::filesystem::path& file_;
};

}  // namespace

Hdf5RunWriter::Hdf5RunWriter(std::filesystem::path h5_path, const Grid& grid,
                             std::string_view input_text, std::string_view solver_decisions)
    : h5_path_(std::move(h5_path)), grid_(grid) {
    const Context context(h5_path_);
    context.check(H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr), "H5Eset_auto2");
    file_ = context.check(H5Fcreate(h5_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                          H5Fclose, "H5Fcreate (create/truncate)");

    auto group =
        context.check(H5Gcreate2(file_.get(), "/grid", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                      H5Gclose, "H5Gcreate2 of group '/grid'");
    context.scalar_attribute(group.get(), "dimension", H5T_NATIVE_INT, grid_.dimension());
    context.triple_attribute(group.get(), "points", H5T_NATIVE_INT64, grid_.points());
    context.triple_attribute(group.get(), "origin", H5T_NATIVE_DOUBLE, grid_.origin());
    context.triple_attribute(group.get(), "spacing", H5T_NATIVE_DOUBLE, grid_.spacing());

    context.string_dataset(file_.get(), "/input", input_text);
    context.string_dataset(file_.get(), "/solver_decisions", solver_decisions);
    context.check(H5Gcreate2(file_.get(), "/steps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                  H5Gclose, "H5Gcreate2 of group '/steps'");
    context.check(H5Fflush(file_.get(), H5F_SCOPE_GLOBAL), "H5Fflush");
}

std::filesystem::path Hdf5RunWriter::xdmf_path() const {
    auto path = h5_path_;
    return path.replace_extension(".xmf");
}

void Hdf5RunWriter::write_step(std::int64_t step, double time, std::span<const FieldView> fields,
                               const StepStatistics& stats) {
    const std::string group_path = step_group_path(step);
    for (const auto& field : fields) {
        if (static_cast<std::int64_t>(field.values.size()) != grid_.num_points()) {
            throw std::invalid_argument(
                "HDF5 file '" + h5_path_.string() + "', " + group_path + ": field '" + field.name +
                "' has " + std::to_string(field.values.size()) + " values, the grid has " +
                std::to_string(grid_.num_points()) + " nodes");
        }
    }

    const Context context(h5_path_);
    auto group = context.check(
        H5Gcreate2(file_.get(), group_path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        H5Gclose, "H5Gcreate2 of group '" + group_path + "'");
    context.scalar_attribute(group.get(), "time", H5T_NATIVE_DOUBLE, time);
    context.scalar_attribute(group.get(), "solver_iterations", H5T_NATIVE_INT64,
                             stats.solver_iterations);
    context.scalar_attribute(group.get(), "relative_residual", H5T_NATIVE_DOUBLE,
                             stats.relative_residual);
    context.string_attribute(group.get(), "status", stats.status);

    // C order, slowest axis first: [nz][ny][nx] or [ny][nx].
    std::vector<hsize_t> dims;
    for (int axis = grid_.dimension() - 1; axis >= 0; --axis) {
        dims.push_back(static_cast<hsize_t>(grid_.points(axis)));
    }
    auto space = context.simple_space(dims);
    XdmfStep entry{step, time, {}};
    for (const auto& field : fields) {
        const std::string what = " of dataset '" + group_path + "/" + field.name + "'";
        auto data = context.check(H5Dcreate2(group.get(), field.name.c_str(), H5T_NATIVE_DOUBLE,
                                             space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                  H5Dclose, "H5Dcreate2" + what);
        context.check(H5Dwrite(data.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                               field.values.data()),
                      "H5Dwrite" + what);
        entry.field_names.push_back(field.name);
    }
    group.reset();
    context.check(H5Fflush(file_.get(), H5F_SCOPE_GLOBAL), "H5Fflush");

    steps_.push_back(std::move(entry));
    solvers::write_file_atomically(xdmf_path(),
                                   make_xdmf(grid_, h5_path_.filename().string(), steps_));
}

}  // namespace simrun::framework

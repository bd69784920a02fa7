#include "hdf5_support.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "run_file_safety.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/solvers/system/memory_budget.hpp"
#ifdef H5_HAVE_PARALLEL
#include "simrun/solvers/base/mpi_comm.hpp"
#endif

namespace simrun::framework::hdf5 {

Context::Context(const std::filesystem::path& file) : file_(file) {
    check(H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr), "H5Eset_auto2");
}

void Context::fail(const std::string& operation) const {
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

Hdf5Handle Context::scalar_space() const {
    return check(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate");
}

Hdf5Handle Context::simple_space(std::span<const hsize_t> dims) const {
    return check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
                 "H5Screate_simple");
}

Hdf5Handle Context::string_type(std::size_t length) const {
    auto type = check(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy");
    check(H5Tset_size(type.get(), length == 0 ? 1 : length), "H5Tset_size");
    check(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
    check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset");
    return type;
}

void Context::attribute(hid_t object, const char* name, hid_t type, hid_t space,
                        const void* data) const {
    const std::string what = std::string(" of attribute '") + name + "'";
    auto attr = check(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                      "H5Acreate2" + what);
    check(H5Awrite(attr.get(), type, data), "H5Awrite" + what);
}

void Context::string_attribute(hid_t object, const char* name, std::string_view text) const {
    const std::string padded(text.empty() ? std::string(1, '\0') : std::string(text));
    auto type = string_type(text.size());
    attribute(object, name, type.get(), scalar_space().get(), padded.data());
}

void Context::write_dataset(hid_t location, const char* name, hid_t type, hid_t file_part,
                            const void* values, hsize_t count, bool write) const {
    const std::string what = std::string(" of dataset '") + name + "'";
    auto data =
        check(H5Dcreate2(location, name, type, file_part, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
              H5Dclose, "H5Dcreate2" + what);
    const std::array<hsize_t, 1> length{std::max<hsize_t>(count, 1)};
    auto memory = simple_space(length);
    if (!write) {
        check(H5Sselect_none(file_part), "H5Sselect_none" + what);
        check(H5Sselect_none(memory.get()), "H5Sselect_none" + what);
    }
    const bool scalar = H5Sget_simple_extent_type(file_part) == H5S_SCALAR;
    check(H5Dwrite(data.get(), type, scalar && write ? H5S_ALL : memory.get(), file_part, transfer_,
                   values),
          "H5Dwrite" + what);
}

void Context::string_dataset(hid_t location, const char* name, std::string_view text) const {
    const std::string padded(text.empty() ? std::string(1, '\0') : std::string(text));
    auto type = string_type(text.size());
    auto space = scalar_space();
    write_dataset(location, name, type.get(), space.get(), padded.data(), 1, writes_small_);
}

void Context::double_dataset(hid_t location, const char* name, std::span<const hsize_t> dims,
                             std::span<const double> values) const {
    auto space = simple_space(dims);
    write_dataset(location, name, H5T_NATIVE_DOUBLE, space.get(), values.data(), values.size(),
                  writes_small_);
}

void Context::field_dataset(hid_t location, const char* name, std::span<const hsize_t> dims,
                            const FieldPart& part, std::span<const double> values) const {
    auto space = simple_space(dims);
    hsize_t points = 1;
    bool fits = part.start.size() == dims.size() && part.count.size() == dims.size();
    for (std::size_t axis = 0; fits && axis < dims.size(); ++axis) {
        points *= part.count[axis];
        fits = part.start[axis] + part.count[axis] <= dims[axis];
    }
    if (!fits || points != values.size()) {
        throw std::logic_error("HDF5 file '" + file_.string() + "': dataset '" + name +
                               "': " + std::to_string(values.size()) +
                               " values of a box do not fit its shape");
    }
    check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, part.start.data(), nullptr,
                              part.count.data(), nullptr),
          std::string("H5Sselect_hyperslab of dataset '") + name + "'");
    write_dataset(location, name, H5T_NATIVE_DOUBLE, space.get(), values.data(), values.size(),
                  true);
}

void Context::refuse(const std::string& what) const { throw InputError(file_.string(), "", what); }

Hdf5Handle Context::open_group(hid_t location, const std::string& name,
                               const std::string& path) const {
    require_hard_path(*this, location, name, path, "group");
    return check(H5Gopen2(location, name.c_str(), H5P_DEFAULT), H5Gclose,
                 "H5Gopen2 of group '" + path + "'");
}

Hdf5Handle Context::open_dataset(hid_t location, const std::string& name,
                                 const std::string& path) const {
    require_hard_path(*this, location, name, path, "dataset");
    auto data = check(H5Dopen2(location, name.c_str(), H5P_DEFAULT), H5Dclose,
                      "H5Dopen2 of dataset '" + path + "'");
    require_values_in_file(*this, data.get(), path);
    return data;
}

bool Context::link_exists(hid_t location, const std::string& name) const {
    return check_exists(H5Lexists(location, name.c_str(), H5P_DEFAULT),
                        "H5Lexists of '" + name + "'");
}

bool Context::attribute_exists(hid_t object, const char* name) const {
    return check_exists(H5Aexists(object, name),
                        std::string("H5Aexists of attribute '") + name + "'");
}

void Context::read_attribute(hid_t object, const char* name, hid_t type, hsize_t count,
                             void* out) const {
    const std::string what = std::string(" of attribute '") + name + "'";
    auto attr = check(H5Aopen(object, name, H5P_DEFAULT), H5Aclose, "H5Aopen" + what);
    auto space = check(H5Aget_space(attr.get()), H5Sclose, "H5Aget_space" + what);
    const hssize_t points = H5Sget_simple_extent_npoints(space.get());
    if (points < 0) fail("H5Sget_simple_extent_npoints" + what);
    if (static_cast<hsize_t>(points) != count) {
        throw std::runtime_error("HDF5 file '" + file_.string() + "': attribute '" + name +
                                 "' has " + std::to_string(points) + " values, expected " +
                                 std::to_string(count));
    }
    check(H5Aread(attr.get(), type, out), "H5Aread" + what);
}

std::string Context::read_string_attribute(hid_t object, const char* name) const {
    const std::string what = std::string(" of attribute '") + name + "'";
    auto attr = check(H5Aopen(object, name, H5P_DEFAULT), H5Aclose, "H5Aopen" + what);
    auto type = check(H5Aget_type(attr.get()), H5Tclose, "H5Aget_type" + what);
    auto space = check(H5Aget_space(attr.get()), H5Sclose, "H5Aget_space" + what);
    const htri_t variable = H5Tis_variable_str(type.get());
    if (H5Tget_class(type.get()) != H5T_STRING || variable != 0 ||
        H5Sget_simple_extent_npoints(space.get()) != 1) {
        refuse(std::string("attribute '") + name + "' is not one fixed-length string");
    }
    std::string text(H5Tget_size(type.get()), '\0');
    check(H5Aread(attr.get(), type.get(), text.data()), "H5Aread" + what);
    return text.substr(0, text.find('\0'));
}

std::size_t Context::string_dataset_bytes(hid_t location, const char* name) const {
    const std::string what = std::string(" of dataset '") + name + "'";
    auto data = open_dataset(location, name, name);
    auto type = check(H5Dget_type(data.get()), H5Tclose, "H5Dget_type" + what);
    auto space = check(H5Dget_space(data.get()), H5Sclose, "H5Dget_space" + what);
    if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0 ||
        H5Sget_simple_extent_npoints(space.get()) != 1) {
        refuse(std::string("dataset '") + name + "' is not one fixed-length string");
    }
    return H5Tget_size(type.get());
}

std::string Context::read_string_dataset(hid_t location, const char* name) const {
    const std::string what = std::string(" of dataset '") + name + "'";
    std::string text(string_dataset_bytes(location, name), '\0');
    auto data = open_dataset(location, name, name);
    auto type = check(H5Dget_type(data.get()), H5Tclose, "H5Dget_type" + what);
    check(H5Dread(data.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()),
          "H5Dread" + what);
    return text.substr(0, text.find('\0'));
}

std::vector<hsize_t> Context::dataset_dims(hid_t dataset, const std::string& name) const {
    require_values_in_file(*this, dataset, name);
    auto space = check(H5Dget_space(dataset), H5Sclose, "H5Dget_space of '" + name + "'");
    return dataset_extent(space.get(), name);
}

std::vector<hsize_t> Context::dataset_extent(hid_t space, const std::string& name) const {
    const int rank = H5Sget_simple_extent_ndims(space);
    if (rank < 0) fail("H5Sget_simple_extent_ndims of '" + name + "'");
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    check(H5Sget_simple_extent_dims(space, dims.data(), nullptr),
          "H5Sget_simple_extent_dims of '" + name + "'");
    return dims;
}

std::vector<double> Context::read_doubles(hid_t dataset, const std::string& name) const {
    double count = 1;  // in double: a crafted extent may overflow any integer
    for (const hsize_t extent : dataset_dims(dataset, name)) count *= static_cast<double>(extent);
    require_memory(*this, 8.0 * count, "dataset '" + name + "'");
    std::vector<double> values(static_cast<std::size_t>(count));
    check(H5Dread(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
          "H5Dread of '" + name + "'");
    return values;
}

std::vector<double> Context::read_doubles(hid_t dataset, const std::string& name,
                                          const FieldPart& part) const {
    const std::vector<hsize_t> stored = dataset_dims(dataset, name);
    bool fits = part.start.size() == stored.size() && part.count.size() == stored.size();
    for (std::size_t axis = 0; fits && axis < stored.size(); ++axis) {
        fits = part.start[axis] + part.count[axis] <= stored[axis];
    }
    if (!fits) {
        throw std::runtime_error("HDF5 file '" + file_.string() + "': dataset '" + name +
                                 "' does not hold the part of the grid asked for");
    }
    const std::vector<hsize_t>& start = part.start;
    const std::vector<hsize_t>& dims = part.count;
    double values = 1;
    for (const hsize_t extent : dims) values *= static_cast<double>(extent);
    require_memory(*this, 8.0 * values, "rows of dataset '" + name + "'");
    std::vector<double> result(static_cast<std::size_t>(values));
    auto file_space = check(H5Dget_space(dataset), H5Sclose, "H5Dget_space of '" + name + "'");
    check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, dims.data(),
                              nullptr),
          "H5Sselect_hyperslab of '" + name + "'");
    auto memory = simple_space(dims);
    check(H5Dread(dataset, H5T_NATIVE_DOUBLE, memory.get(), file_space.get(), H5P_DEFAULT,
                  result.data()),
          "H5Dread of rows of '" + name + "'");
    return result;
}

Hdf5Handle open_for_reading(const Context& context, hid_t access) {
    return context.check(H5Fopen(context.file().c_str(), H5F_ACC_RDONLY, access), H5Fclose,
                         "H5Fopen (read-only)");
}

std::vector<hsize_t> field_dims(const Grid& grid) {
    std::vector<hsize_t> dims;
    for (int axis = grid.dimension() - 1; axis >= 0; --axis) {
        dims.push_back(static_cast<hsize_t>(grid.points(axis)));
    }
    return dims;
}

FieldPart field_part(const Grid& grid, const Box& box) {
    FieldPart part;
    for (int axis = grid.dimension() - 1; axis >= 0; --axis) {
        part.start.push_back(static_cast<hsize_t>(box.lower[static_cast<std::size_t>(axis)]));
        part.count.push_back(static_cast<hsize_t>(box.points(axis)));
    }
    return part;
}

Hdf5Handle crash_safe_file_access(const Context& context) {
    auto access = context.check(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate (file access)");
    H5AC_cache_config_t config;
    std::memset(&config, 0, sizeof config);
    config.version = H5AC__CURR_CACHE_CONFIG_VERSION;
    context.check(H5Pget_mdc_config(access.get(), &config), "H5Pget_mdc_config");
    // HDF5 accepts disabled evictions only with every automatic resize mode off.
    config.evictions_enabled = false;
    config.incr_mode = H5C_incr__off;
    config.flash_incr_mode = H5C_flash_incr__off;
    config.decr_mode = H5C_decr__off;
    // HDF5's MPI build writes metadata at a "sync point" each time the ranks have made this
    // many bytes of it dirty: far more than a step makes, so that it reaches the file at the
    // flushes alone there too (the same on every rank, as it must be; ignored by the serial
    // build).
    config.dirty_bytes_threshold = std::size_t{16} << 20;
    context.check(H5Pset_mdc_config(access.get(), &config), "H5Pset_mdc_config");
    return access;
}

Hdf5Handle collective_file_access(const Context& context,
                                  [[maybe_unused]] const solvers::Communicator& ranks) {
#ifdef H5_HAVE_PARALLEL
    auto access = crash_safe_file_access(context);
    context.check(H5Pset_fapl_mpio(access.get(), solvers::mpi_comm_of(ranks), MPI_INFO_NULL),
                  "H5Pset_fapl_mpio");
    return access;
#else
    throw std::logic_error("HDF5 file '" + context.file().string() +
                           "': this build's HDF5 has no MPI-IO: it cannot be written by several "
                           "ranks together");
#endif
}

Hdf5Handle collective_transfer(const Context& context) {
    auto transfer =
        context.check(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "H5Pcreate (data transfer)");
#ifdef H5_HAVE_PARALLEL
    context.check(H5Pset_dxpl_mpio(transfer.get(), H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
#endif
    return transfer;
}

// H5Fflush hands every buffered byte and the metadata to the operating system, which keeps them
// when the process is killed; no fsync: that would only add protection against a power cut or
// an OS crash, at tens of milliseconds per output step.
void flush_to_disk(const Context& context, hid_t file) {
    context.check(H5Fflush(file, H5F_SCOPE_GLOBAL), "H5Fflush");
}

}  // namespace simrun::framework::hdf5

#include "hdf5_support.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/solvers/base/memory_budget.hpp"
#ifdef H5_HAVE_PARALLEL
#include "simrun/solvers/base/mpi_comm.hpp"
#endif

namespace simrun::framework::hdf5 {
namespace {

// `text` with control characters as \xNN: a name read from a file may hold any byte.
std::string printable(std::string_view text) {
    std::string shown;
    for (const char c : text) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
            shown += escaped;
        } else {
            shown += c;
        }
    }
    return shown;
}

// What link `name` of `location` is, for messages: "an external link to 'FILE' ('/OBJECT')".
std::string link_description(const Context& context, hid_t location, const std::string& name,
                             const H5L_info_t& info) {
    if (info.type == H5L_TYPE_HARD) return "a hard link";
    std::string value(info.u.val_size, '\0');
    context.check(H5Lget_val(location, name.c_str(), value.data(), value.size(), H5P_DEFAULT),
                  "H5Lget_val of '" + name + "'");
    if (info.type == H5L_TYPE_SOFT) {
        return "a soft link to '" + printable(value.substr(0, value.find('\0'))) + "'";
    }
    unsigned flags = 0;
    const char* file = nullptr;
    const char* object = nullptr;
    if (info.type == H5L_TYPE_EXTERNAL &&
        H5Lunpack_elink_val(value.data(), value.size(), &flags, &file, &object) >= 0) {
        return "an external link to '" + printable(file) + "' ('" + printable(object) + "')";
    }
    H5Eclear2(H5E_DEFAULT);
    return "a user-defined link (type " + std::to_string(static_cast<int>(info.type)) + ")";
}

// Refuses link `name` of `location` (`info`: what it is) unless it is a hard link: the only
// kind a run file's groups and datasets are reached through.
void require_hard_link(const Context& context, hid_t location, const std::string& name,
                       const std::string& path, const char* kind, const H5L_info_t& info) {
    if (info.type != H5L_TYPE_HARD) {
        context.refuse("'" + path + "' is " + link_description(context, location, name, info) +
                       ", where a run file holds a " + kind);
    }
}

void require_hard_link(const Context& context, hid_t location, const std::string& name,
                       const std::string& path, const char* kind) {
    H5L_info_t info;
    context.check(H5Lget_info(location, name.c_str(), &info, H5P_DEFAULT),
                  "H5Lget_info of '" + path + "'");
    require_hard_link(context, location, name, path, kind, info);
}

// Filters whose code HDF5 carries: any other id makes it look for a plugin library to load.
bool built_into_hdf5(H5Z_filter_t id) {
    switch (id) {
#ifdef H5_HAVE_FILTER_DEFLATE
        case H5Z_FILTER_DEFLATE:
#endif
#ifdef H5_HAVE_FILTER_SZIP
        case H5Z_FILTER_SZIP:
#endif
        case H5Z_FILTER_SHUFFLE:
        case H5Z_FILTER_FLETCHER32:
        case H5Z_FILTER_NBIT:
        case H5Z_FILTER_SCALEOFFSET:
            return true;
        default:
            return false;
    }
}

const char* const only_this_file = "simrun reads only values stored in the run file itself";

}  // namespace

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
    require_hard_link(*this, location, name, path, "group");
    return check(H5Gopen2(location, name.c_str(), H5P_DEFAULT), H5Gclose,
                 "H5Gopen2 of group '" + path + "'");
}

Hdf5Handle Context::open_dataset(hid_t location, const std::string& name,
                                 const std::string& path) const {
    require_hard_link(*this, location, name, path, "dataset");
    auto data = check(H5Dopen2(location, name.c_str(), H5P_DEFAULT), H5Dclose,
                      "H5Dopen2 of dataset '" + path + "'");
    require_values_in_file(data.get(), path);
    return data;
}

void Context::require_values_in_file(hid_t dataset, const std::string& name) const {
    const std::string what = "dataset '" + name + "'";
    auto create = check(H5Dget_create_plist(dataset), H5Pclose, "H5Dget_create_plist of " + what);
    const H5D_layout_t layout = H5Pget_layout(create.get());
    if (layout < 0) fail("H5Pget_layout of " + what);
    if (layout == H5D_VIRTUAL) {
        refuse(what +
               " is a virtual dataset (HDF5 reads its values from other files): " + only_this_file);
    }
    const int external = H5Pget_external_count(create.get());
    if (external < 0) fail("H5Pget_external_count of " + what);
    if (external > 0) {
        std::string other(4096, '\0');
        off_t offset = 0;
        hsize_t size = 0;
        check(H5Pget_external(create.get(), 0, other.size() - 1, other.data(), &offset, &size),
              "H5Pget_external of " + what);
        refuse(what + " keeps its values in another file ('" +
               printable(other.substr(0, other.find('\0'))) +
               "', HDF5 external storage): " + only_this_file);
    }
    const int filters = H5Pget_nfilters(create.get());
    if (filters < 0) fail("H5Pget_nfilters of " + what);
    for (int n = 0; n < filters; ++n) {
        unsigned flags = 0;
        std::size_t values = 0;
        std::string filter(256, '\0');
        const H5Z_filter_t id =
            H5Pget_filter2(create.get(), static_cast<unsigned>(n), &flags, &values, nullptr,
                           filter.size() - 1, filter.data(), nullptr);
        if (id < 0) fail("H5Pget_filter2 of " + what);
        if (!built_into_hdf5(id)) {
            refuse(what + " is stored through filter " + std::to_string(id) + " ('" +
                   printable(filter.substr(0, filter.find('\0'))) +
                   "'), which is not built into HDF5: reading it would load a plugin library; "
                   "simrun reads values stored plainly or through HDF5's built-in filters");
        }
    }
    if (layout == H5D_CONTIGUOUS) require_contiguous_in_file(dataset, name);
}

// Contiguous values lie in one run of bytes of the file: they must lie inside it.
void Context::require_contiguous_in_file(hid_t dataset, const std::string& name) const {
    auto space = check(H5Dget_space(dataset), H5Sclose, "H5Dget_space of '" + name + "'");
    auto type = check(H5Dget_type(dataset), H5Tclose, "H5Dget_type of '" + name + "'");
    const hssize_t points = H5Sget_simple_extent_npoints(space.get());
    if (points < 0) fail("H5Sget_simple_extent_npoints of '" + name + "'");
    const double bytes = static_cast<double>(points) * static_cast<double>(H5Tget_size(type.get()));
    if (bytes == 0) return;
    const haddr_t offset = H5Dget_offset(dataset);
    H5Eclear2(H5E_DEFAULT);  // HADDR_UNDEF, where no storage was written, leaves an error
    hsize_t file_bytes = 0;
    {
        auto file = check(H5Iget_file_id(dataset), H5Fclose, "H5Iget_file_id of '" + name + "'");
        check(H5Fget_filesize(file.get(), &file_bytes), "H5Fget_filesize");
    }
    if (offset == HADDR_UNDEF ||
        static_cast<double>(offset) + bytes > static_cast<double>(file_bytes)) {
        std::string extent;
        for (const hsize_t length : dataset_extent(space.get(), name)) {
            extent += (extent.empty() ? "" : " x ") + std::to_string(length);
        }
        refuse("dataset '" + name + "' declares " + solvers::format_bytes(bytes) +
               " of contiguous values (" + extent + ") that the file's " +
               solvers::format_bytes(static_cast<double>(file_bytes)) +
               " do not hold: the file is corrupt or truncated");
    }
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

std::string Context::read_string_dataset(hid_t location, const char* name) const {
    const std::string what = std::string(" of dataset '") + name + "'";
    auto data = open_dataset(location, name, name);
    auto type = check(H5Dget_type(data.get()), H5Tclose, "H5Dget_type" + what);
    auto space = check(H5Dget_space(data.get()), H5Sclose, "H5Dget_space" + what);
    if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0 ||
        H5Sget_simple_extent_npoints(space.get()) != 1) {
        refuse(std::string("dataset '") + name + "' is not one fixed-length string");
    }
    const std::size_t length = H5Tget_size(type.get());
    require_memory(*this, static_cast<double>(length), std::string("dataset '") + name + "'");
    std::string text(length, '\0');
    check(H5Dread(data.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()),
          "H5Dread" + what);
    return text.substr(0, text.find('\0'));
}

std::vector<hsize_t> Context::dataset_dims(hid_t dataset, const std::string& name) const {
    require_values_in_file(dataset, name);
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

namespace {

// A link of a group: its name and what it is.
struct Link {
    std::string name;
    H5L_info_t info;
};

// A group's links, in name order (one pass over the group).
std::vector<Link> links_of(const Context& context, hid_t group, const std::string& path) {
    std::vector<Link> links;
    const herr_t status = H5Literate(
        group, H5_INDEX_NAME, H5_ITER_INC, nullptr,
        [](hid_t, const char* name, const H5L_info_t* info, void* out) -> herr_t {
            static_cast<std::vector<Link>*>(out)->push_back({name, *info});
            return 0;
        },
        &links);
    if (status < 0) context.fail("H5Literate in '" + path + "'");
    return links;
}

}  // namespace

Hdf5Handle open_for_reading(const Context& context, hid_t access) {
    auto file = context.check(H5Fopen(context.file().c_str(), H5F_ACC_RDONLY, access), H5Fclose,
                              "H5Fopen (read-only)");
    refuse_links_out_of_file(context, file.get());
    return file;
}

void refuse_links_out_of_file(const Context& context, hid_t file) {
    struct Found {
        std::string name;
        H5L_info_t info;
    };
    std::optional<Found> found;
    // Visits every link of every group reached through hard links: all a name can lead to.
    const herr_t stopped = H5Lvisit(
        file, H5_INDEX_NAME, H5_ITER_INC,
        [](hid_t, const char* name, const H5L_info_t* info, void* out) -> herr_t {
            if (info->type == H5L_TYPE_HARD || info->type == H5L_TYPE_SOFT) return 0;
            *static_cast<std::optional<Found>*>(out) = Found{name, *info};
            return 1;
        },
        &found);
    if (stopped < 0) context.fail("H5Lvisit");
    if (found) {
        context.refuse("'/" + printable(found->name) + "' is " +
                       link_description(context, file, found->name, found->info) +
                       ": simrun reads no run file with links out of it");
    }
}

std::vector<StoredStep> list_steps(const Context& context, hid_t file) {
    auto group = context.open_group(file, "/steps", "/steps");
    std::vector<StoredStep> steps;
    for (auto& [name, info] : links_of(context, group.get(), "/steps")) {
        const bool is_number =
            !name.empty() && name.size() <= 18 &&
            std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!is_number) continue;
        require_hard_link(context, group.get(), name, "/steps/" + name, "step's group", info);
        steps.push_back({std::stoll(name), std::move(name)});
    }
    std::sort(steps.begin(), steps.end(),
              [](const StoredStep& a, const StoredStep& b) { return a.step < b.step; });
    return steps;
}

namespace {

// Refuses a /grid that simrun's Grid would not make (Grid's own rules).
void require_simrun_grid(const Context& context, const StoredGrid& grid) {
    if (grid.dimension != 2 && grid.dimension != 3) {
        context.refuse("attribute 'dimension' of /grid is " + std::to_string(grid.dimension) +
                       "; a run file's grid has dimension 2 or 3");
    }
    const char* const axes = "xyz";
    double nodes = 1;
    for (int axis = 0; axis < 3; ++axis) {
        const auto a = static_cast<std::size_t>(axis);
        const std::string along = std::string(" along ") + axes[axis];
        const std::int64_t points = grid.points[a];
        if (axis < grid.dimension ? points < 3 : points != 1) {
            context.refuse("attribute 'points' of /grid is " + std::to_string(points) + along +
                           "; a run file's grid has at least 3 nodes along each of its " +
                           std::to_string(grid.dimension) + " axes" +
                           (grid.dimension == 2 ? " and 1 along z" : ""));
        }
        nodes *= static_cast<double>(points);
        if (axis >= grid.dimension) continue;
        if (!std::isfinite(grid.origin[a])) {
            context.refuse("attribute 'origin' of /grid is not finite" + along);
        }
        if (!(grid.spacing[a] > 0) || !std::isfinite(grid.spacing[a])) {
            context.refuse("attribute 'spacing' of /grid is " + std::to_string(grid.spacing[a]) +
                           along + "; a run file's grid spacing is positive and finite");
        }
    }
    if (nodes > std::numeric_limits<std::int32_t>::max()) {
        context.refuse(
            "attribute 'points' of /grid makes more than 2^31 nodes; simrun's grids "
            "have fewer");
    }
}

}  // namespace

StoredGrid read_grid(const Context& context, hid_t file) {
    auto group = context.open_group(file, "/grid", "/grid");
    StoredGrid grid;
    grid.dimension = context.read_scalar_attribute<int>(group.get(), "dimension", H5T_NATIVE_INT);
    grid.points =
        context.read_triple_attribute<std::int64_t>(group.get(), "points", H5T_NATIVE_INT64);
    grid.origin = context.read_triple_attribute<double>(group.get(), "origin", H5T_NATIVE_DOUBLE);
    grid.spacing = context.read_triple_attribute<double>(group.get(), "spacing", H5T_NATIVE_DOUBLE);
    require_simrun_grid(context, grid);
    return grid;
}

StepStatistics read_step_statistics(const Context& context, hid_t group,
                                    const std::string& group_path) {
    StepStatistics stats;
    stats.solver_iterations =
        context.read_scalar_attribute<std::int64_t>(group, "solver_iterations", H5T_NATIVE_INT64);
    stats.relative_residual =
        context.read_scalar_attribute<double>(group, "relative_residual", H5T_NATIVE_DOUBLE);
    stats.status = context.read_string_attribute(group, "status");
    if (context.attribute_exists(group, "method")) {
        stats.method = context.read_string_attribute(group, "method");
    }
    if (context.link_exists(group, "residual_history")) {
        const std::string history_path = group_path + "/residual_history";
        auto data = context.open_dataset(group, "residual_history", history_path);
        stats.residual_history = context.read_doubles(data.get(), history_path);
    }
    return stats;
}

double residual_history_values(const Context& context, hid_t group, const std::string& group_path) {
    if (!context.link_exists(group, "residual_history")) return 0;
    const std::string history_path = group_path + "/residual_history";
    auto data = context.open_dataset(group, "residual_history", history_path);
    double values = 1;
    for (const hsize_t extent : context.dataset_dims(data.get(), history_path)) {
        values *= static_cast<double>(extent);
    }
    return values;
}

void require_memory(const Context& context, double bytes, const std::string& what,
                    std::optional<double> limit) {
    const auto available = limit ? limit : solvers::available_host_memory();
    if (!available || bytes <= *available) return;
    throw std::runtime_error(
        "HDF5 file '" + context.file().string() + "': reading " + what + " needs about " +
        solvers::format_bytes(bytes) + " of memory, " +
        (limit ? "more than the " + solvers::format_bytes(*limit) + " it may use"
               : "the machine has " + solvers::format_bytes(*available) + " available"));
}

std::vector<std::string> field_names(const Context& context, hid_t group,
                                     const std::string& group_path, std::span<const hsize_t> dims) {
    std::vector<std::string> fields;
    for (auto& [name, info] : links_of(context, group, group_path)) {
        const std::string path = group_path + "/" + name;
        require_hard_link(context, group, name, path, "field's dataset", info);
        auto object = context.check(H5Oopen(group, name.c_str(), H5P_DEFAULT), H5Oclose,
                                    "H5Oopen of '" + path + "'");
        if (H5Iget_type(object.get()) != H5I_DATASET) continue;
        const auto extent = context.dataset_dims(object.get(), path);
        if (std::equal(extent.begin(), extent.end(), dims.begin(), dims.end())) {
            fields.push_back(std::move(name));
        }
    }
    return fields;
}

std::vector<hsize_t> field_dims(const Grid& grid) {
    std::vector<hsize_t> dims;
    for (int axis = grid.dimension() - 1; axis >= 0; --axis) {
        dims.push_back(static_cast<hsize_t>(grid.points(axis)));
    }
    return dims;
}

FieldPart field_part(const Grid& grid, const NodeBox& box) {
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

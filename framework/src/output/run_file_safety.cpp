#include "run_file_safety.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "hdf5_support.hpp"
#include "simrun/solvers/system/memory_budget.hpp"

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

// A link visitor that HDF5's C code calls (H5Literate, H5Lvisit): an exception that `visit`
// throws is kept, HDF5 is told to stop (-1), and the caller throws it again once HDF5 has
// returned. `visit` returns false to stop the pass without an error.
struct LinkVisitor {
    std::function<bool(const char* name, const H5L_info_t& info)> visit;
    std::exception_ptr error;

    static herr_t call(hid_t, const char* name, const H5L_info_t* info, void* self) noexcept {
        auto& visitor = *static_cast<LinkVisitor*>(self);
        try {
            return visitor.visit(name, *info) ? 0 : 1;
        } catch (...) {
            visitor.error = std::current_exception();
            return -1;
        }
    }
    // After the HDF5 call: the visitor's exception, or `context.fail` where HDF5 failed.
    void finish(const Context& context, herr_t status, const std::string& operation) const {
        if (error) {
            H5Eclear2(H5E_DEFAULT);  // the stop that the -1 made HDF5 record
            std::rethrow_exception(error);
        }
        if (status < 0) context.fail(operation);
    }
};

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

// A dataset's storage as its creation properties give it.
struct Storage {
    H5D_layout_t layout;
    int filters;
};

void refuse_storage_elsewhere(const Context& context, hid_t create, const std::string& what,
                              H5D_layout_t layout) {
    if (layout == H5D_VIRTUAL) {
        context.refuse(what + " is a virtual dataset (HDF5 reads its values from other files): " +
                       only_this_file);
    }
    const int external = H5Pget_external_count(create);
    if (external < 0) context.fail("H5Pget_external_count of " + what);
    if (external > 0) {
        std::string other(4096, '\0');
        off_t offset = 0;
        hsize_t size = 0;
        context.check(H5Pget_external(create, 0, other.size() - 1, other.data(), &offset, &size),
                      "H5Pget_external of " + what);
        context.refuse(what + " keeps its values in another file ('" +
                       printable(other.substr(0, other.find('\0'))) +
                       "', HDF5 external storage): " + only_this_file);
    }
}

// The number of filters of the dataset, each one built into HDF5 (refused otherwise).
int built_in_filters(const Context& context, hid_t create, const std::string& what) {
    const int filters = H5Pget_nfilters(create);
    if (filters < 0) context.fail("H5Pget_nfilters of " + what);
    for (int n = 0; n < filters; ++n) {
        unsigned flags = 0;
        std::size_t values = 0;
        std::string filter(256, '\0');
        const H5Z_filter_t id = H5Pget_filter2(create, static_cast<unsigned>(n), &flags, &values,
                                               nullptr, filter.size() - 1, filter.data(), nullptr);
        if (id < 0) context.fail("H5Pget_filter2 of " + what);
        if (!built_into_hdf5(id)) {
            context.refuse(
                what + " is stored through filter " + std::to_string(id) + " ('" +
                printable(filter.substr(0, filter.find('\0'))) +
                "'), which is not built into HDF5: reading it would load a plugin library; "
                "simrun reads values stored plainly or through HDF5's built-in filters");
        }
    }
    return filters;
}

Storage storage_of(const Context& context, hid_t dataset, const std::string& name) {
    const std::string what = "dataset '" + name + "'";
    auto create =
        context.check(H5Dget_create_plist(dataset), H5Pclose, "H5Dget_create_plist of " + what);
    const H5D_layout_t layout = H5Pget_layout(create.get());
    if (layout < 0) context.fail("H5Pget_layout of " + what);
    refuse_storage_elsewhere(context, create.get(), what, layout);
    return {layout, built_in_filters(context, create.get(), what)};
}

// A dataset's shape and the bytes of its values, as it declares them.
struct Declared {
    std::vector<hsize_t> dims;
    double bytes = 0;  // in double: a crafted extent may overflow any integer
};

Declared declared(const Context& context, hid_t dataset, const std::string& name) {
    auto space = context.check(H5Dget_space(dataset), H5Sclose, "H5Dget_space of '" + name + "'");
    auto type = context.check(H5Dget_type(dataset), H5Tclose, "H5Dget_type of '" + name + "'");
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0) context.fail("H5Sget_simple_extent_ndims of '" + name + "'");
    Declared result{std::vector<hsize_t>(static_cast<std::size_t>(rank)),
                    static_cast<double>(H5Tget_size(type.get()))};
    context.check(H5Sget_simple_extent_dims(space.get(), result.dims.data(), nullptr),
                  "H5Sget_simple_extent_dims of '" + name + "'");
    for (const hsize_t extent : result.dims) result.bytes *= static_cast<double>(extent);
    return result;
}

double file_bytes(const Context& context, hid_t dataset, const std::string& name) {
    hsize_t bytes = 0;
    auto file =
        context.check(H5Iget_file_id(dataset), H5Fclose, "H5Iget_file_id of '" + name + "'");
    context.check(H5Fget_filesize(file.get(), &bytes), "H5Fget_filesize");
    return static_cast<double>(bytes);
}

// Refuses values declared (`values`) that the file (`file`) does not hold: `how` says how they
// would be stored.
[[noreturn]] void refuse_values_not_held(const Context& context, const std::string& name,
                                         const Declared& values, const std::string& how,
                                         double file) {
    std::string extent;
    for (const hsize_t length : values.dims) {
        extent += (extent.empty() ? "" : " x ") + std::to_string(length);
    }
    context.refuse("dataset '" + name + "' declares " + solvers::format_bytes(values.bytes) +
                   " of " + how + " values (" + extent + ") that the file's " +
                   solvers::format_bytes(file) + " do not hold: the file is corrupt or truncated");
}

// Contiguous values lie in one run of bytes of the file: they must lie inside it.
void require_contiguous_in_file(const Context& context, hid_t dataset, const std::string& name) {
    const Declared values = declared(context, dataset, name);
    if (values.bytes == 0) return;
    const haddr_t offset = H5Dget_offset(dataset);
    H5Eclear2(H5E_DEFAULT);  // HADDR_UNDEF, where no storage was written, leaves an error
    const double file = file_bytes(context, dataset, name);
    if (offset == HADDR_UNDEF || static_cast<double>(offset) + values.bytes > file) {
        refuse_values_not_held(context, name, values, "contiguous", file);
    }
}

// Chunked values lie in chunks of the file, one per box of the chunk's shape: every box of the
// extent must have its chunk (a chunk never written reads as the fill value: a few bytes of file
// would claim any size), and their bytes must fit in the file. Filtered chunks hold fewer bytes
// than their values; what they decompress into is counted by the read's memory check (the
// extent's values, and one chunk: read_overhead_bytes).
void require_chunks_in_file(const Context& context, hid_t dataset, const std::string& name) {
    const Declared values = declared(context, dataset, name);
    if (values.bytes == 0) return;
    auto create = context.check(H5Dget_create_plist(dataset), H5Pclose,
                                "H5Dget_create_plist of '" + name + "'");
    std::vector<hsize_t> chunk(values.dims.size());
    if (H5Pget_chunk(create.get(), static_cast<int>(chunk.size()), chunk.data()) < 0) {
        context.fail("H5Pget_chunk of '" + name + "'");
    }
    double boxes = 1;
    for (std::size_t axis = 0; axis < chunk.size(); ++axis) {
        const double along = static_cast<double>(chunk[axis]);
        boxes *= std::ceil(static_cast<double>(values.dims[axis]) / along);
    }
    hsize_t written = 0;
    {
        auto all = context.check(H5Dget_space(dataset), H5Sclose, "H5Dget_space of '" + name + "'");
        context.check(H5Dget_num_chunks(dataset, all.get(), &written),
                      "H5Dget_num_chunks of '" + name + "'");
    }
    const double stored = static_cast<double>(H5Dget_storage_size(dataset));
    const double file = file_bytes(context, dataset, name);
    if (static_cast<double>(written) < boxes || stored > file) {
        refuse_values_not_held(context, name, values,
                               "chunked (" + std::to_string(written) + " of " +
                                   std::to_string(static_cast<std::uint64_t>(boxes)) +
                                   " chunks written)",
                               file);
    }
}

}  // namespace

void for_each_link(
    const Context& context, hid_t group, const std::string& path,
    const std::function<void(const std::string& name, const H5L_info_t& info)>& visit) {
    LinkVisitor visitor{[&](const char* name, const H5L_info_t& info) {
                            visit(name, info);
                            return true;
                        },
                        nullptr};
    const herr_t status =
        H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, &LinkVisitor::call, &visitor);
    visitor.finish(context, status, "H5Literate in '" + path + "'");
}

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

void require_hard_path(const Context& context, hid_t location, const std::string& name,
                       const std::string& path, const char* kind) {
    std::vector<std::string> prefixes;  // "/a", "/a/b", ...: each ends at one more link
    std::string prefix = name.starts_with('/') ? "/" : "";
    for (std::size_t begin = 0; begin < name.size();) {
        const std::size_t end = std::min(name.find('/', begin), name.size());
        if (end > begin) {
            if (!prefix.empty() && prefix.back() != '/') prefix += '/';
            prefix += name.substr(begin, end - begin);
            prefixes.push_back(prefix);
        }
        begin = end + 1;
    }
    // In order: HDF5 follows only links already checked to look up the next one.
    for (std::size_t i = 0; i < prefixes.size(); ++i) {
        const bool last = i + 1 == prefixes.size();
        require_hard_link(context, location, prefixes[i], last ? path : prefixes[i],
                          last ? kind : "group");
    }
}

void refuse_links_out_of_file(const Context& context, hid_t file) {
    std::optional<std::pair<std::string, H5L_info_t>> found;
    // Visits every link of every group reached through hard links: all a name can lead to.
    LinkVisitor visitor{[&](const char* name, const H5L_info_t& info) {
                            if (info.type == H5L_TYPE_HARD || info.type == H5L_TYPE_SOFT) {
                                return true;
                            }
                            found.emplace(name, info);
                            return false;
                        },
                        nullptr};
    const herr_t status = H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, &LinkVisitor::call, &visitor);
    visitor.finish(context, status, "H5Lvisit");
    if (found) {
        context.refuse("'/" + printable(found->first) + "' is " +
                       link_description(context, file, found->first, found->second) +
                       ": simrun reads no run file with links out of it");
    }
}

void require_values_in_file(const Context& context, hid_t dataset, const std::string& name) {
    const Storage storage = storage_of(context, dataset, name);
    if (storage.layout == H5D_CONTIGUOUS) require_contiguous_in_file(context, dataset, name);
    if (storage.layout == H5D_CHUNKED) require_chunks_in_file(context, dataset, name);
}

double read_overhead_bytes(const Context& context, hid_t dataset, const std::string& name) {
    const Storage storage = storage_of(context, dataset, name);
    if (storage.layout != H5D_CHUNKED || storage.filters == 0) return 0;
    auto create = context.check(H5Dget_create_plist(dataset), H5Pclose,
                                "H5Dget_create_plist of '" + name + "'");
    auto type = context.check(H5Dget_type(dataset), H5Tclose, "H5Dget_type of '" + name + "'");
    std::vector<hsize_t> chunk(H5S_MAX_RANK);
    const int rank = H5Pget_chunk(create.get(), H5S_MAX_RANK, chunk.data());
    if (rank < 0) context.fail("H5Pget_chunk of '" + name + "'");
    double bytes = static_cast<double>(H5Tget_size(type.get()));
    for (int axis = 0; axis < rank; ++axis) {
        bytes *= static_cast<double>(chunk[static_cast<std::size_t>(axis)]);
    }
    return bytes;
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

}  // namespace simrun::framework::hdf5

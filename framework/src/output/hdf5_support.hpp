#pragma once
// HDF5 helpers shared by the run file writer and the readers: checked calls whose exceptions
// name the file, the operation and HDF5's innermost message, and the run file's common pieces
// (the step list, the field shape, the crash-safe file access).
// Reading trusts nothing in the file: what would make HDF5 open another file (external links,
// user-defined links, external raw storage, virtual datasets) or load a plugin (filters not
// built into HDF5), values the file cannot hold, and strings or grids of the wrong shape are
// refused with InputError ("FILE: WHAT"), before HDF5 acts on them.
// HDF5's MPI build includes mpi.h: its C API only (Open MPI's and MPICH's C++ bindings need a
// library of their own).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <hdf5.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/framework/output/hdf5_run_writer.hpp"
#include "simrun/framework/output/run_file_reader.hpp"
#include "simrun/solvers/base/communicator.hpp"

namespace simrun::framework::hdf5 {

// A box of a field's dataset: its first index and its extent along each dimension, slowest
// first.
struct FieldPart {
    std::vector<hsize_t> start, count;
};

class Context {
public:
    // Turns off HDF5's printing of error stacks for the calling thread (a thread-safe HDF5
    // keeps one error stack per thread): failures become exceptions instead.
    explicit Context(const std::filesystem::path& file);

    // Throws std::runtime_error "HDF5 file 'FILE': OPERATION failed: DETAIL", DETAIL being the
    // innermost entry of HDF5's error stack (which carries the OS error for file failures).
    [[noreturn]] void fail(const std::string& operation) const;
    Hdf5Handle check(hid_t id, Hdf5Handle::Closer closer, const std::string& operation) const {
        if (id < 0) fail(operation);
        return Hdf5Handle(id, closer);
    }
    void check(herr_t status, const std::string& operation) const {
        if (status < 0) fail(operation);
    }
    bool check_exists(htri_t answer, const std::string& operation) const {
        if (answer < 0) fail(operation);
        return answer > 0;
    }

    // Over several ranks (a file that they opened collectively, where every rank takes part in
    // every write): rank 0 alone writes the small datasets (string_dataset, double_dataset),
    // each rank its rows of a field (field_dataset), all through `transfer` (collective).
    void share_writes(bool small, hid_t transfer) {
        writes_small_ = small;
        transfer_ = transfer;
    }

    Hdf5Handle scalar_space() const;
    Hdf5Handle simple_space(std::span<const hsize_t> dims) const;
    // Fixed-length UTF-8 string type; HDF5 forbids size 0, so an empty string gets one NUL.
    Hdf5Handle string_type(std::size_t length) const;

    void attribute(hid_t object, const char* name, hid_t type, hid_t space, const void* data) const;
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
    void string_attribute(hid_t object, const char* name, std::string_view text) const;
    void string_dataset(hid_t location, const char* name, std::string_view text) const;
    void double_dataset(hid_t location, const char* name, std::span<const hsize_t> dims,
                        std::span<const double> values) const;
    // A field shaped `dims` of which `values` are the box `part` (field_part: its start and
    // extent, slowest axis first), numbered within it: the whole field on one process, a
    // rank's box over several.
    void field_dataset(hid_t location, const char* name, std::span<const hsize_t> dims,
                       const FieldPart& part, std::span<const double> values) const;

    // Throws InputError "FILE: WHAT": the file is refused for what it holds.
    [[noreturn]] void refuse(const std::string& what) const;

    bool link_exists(hid_t location, const std::string& name) const;
    // Opens group or dataset `name` of `location` (`path` in messages) through a hard link
    // only (refused otherwise); a dataset whose values are not all in this file is refused
    // (require_values_in_file).
    Hdf5Handle open_group(hid_t location, const std::string& name, const std::string& path) const;
    Hdf5Handle open_dataset(hid_t location, const std::string& name, const std::string& path) const;
    // Refuses a dataset whose values HDF5 would take from elsewhere than this file (external
    // raw storage, a virtual dataset), through a filter not built into HDF5 (a plugin), or
    // that declares more contiguous values than the file can hold (corrupt or truncated).
    // Every read of a dataset's values or extent below checks it first.
    void require_values_in_file(hid_t dataset, const std::string& name) const;
    bool attribute_exists(hid_t object, const char* name) const;
    template <typename T>
    T read_scalar_attribute(hid_t object, const char* name, hid_t type) const {
        T value{};
        read_attribute(object, name, type, 1, &value);
        return value;
    }
    template <typename T>
    std::array<T, 3> read_triple_attribute(hid_t object, const char* name, hid_t type) const {
        std::array<T, 3> values{};
        read_attribute(object, name, type, 3, values.data());
        return values;
    }
    // A fixed-length string attribute of one value, without its padding.
    std::string read_string_attribute(hid_t object, const char* name) const;
    // A fixed-length string dataset of one value (string_dataset's), without its padding.
    std::string read_string_dataset(hid_t location, const char* name) const;
    // A double dataset's extent, slowest axis first (require_values_in_file first), and its
    // values.
    std::vector<hsize_t> dataset_dims(hid_t dataset, const std::string& name) const;
    std::vector<double> read_doubles(hid_t dataset, const std::string& name) const;
    // The box `part` of the dataset (field_part), numbered within it: a rank's box of a
    // stored field.
    std::vector<double> read_doubles(hid_t dataset, const std::string& name,
                                     const FieldPart& part) const;

    const std::filesystem::path& file() const { return file_; }

private:
    void require_contiguous_in_file(hid_t dataset, const std::string& name) const;
    std::vector<hsize_t> dataset_extent(hid_t space, const std::string& name) const;
    // Reads an attribute of exactly `count` elements (fails naming it otherwise).
    void read_attribute(hid_t object, const char* name, hid_t type, hsize_t count, void* out) const;

    // Creates dataset `name` and writes `values` to the part of it `file_part` selects
    // (modified here), or nothing where `write` is false.
    void write_dataset(hid_t location, const char* name, hid_t type, hid_t space,
                       const void* values, hsize_t count, bool write) const;

    std::filesystem::path file_;
    bool writes_small_ = true;
    hid_t transfer_ = H5P_DEFAULT;
};

// A step group of /steps: its index and its name.
struct StoredStep {
    std::int64_t step;
    std::string name;
};

// Opens the context's file read-only with `access`, and refuses it where any of its links
// leads out of it (refuse_links_out_of_file): the readers' way in.
Hdf5Handle open_for_reading(const Context& context, hid_t access);

// Refuses a file any of whose links, anywhere in it, is an external link (to another file) or
// a user-defined one (whose traversal runs code of the program's): links inside the file
// (hard and soft) are all that a reader then follows, whatever path it opens.
void refuse_links_out_of_file(const Context& context, hid_t file);

// The step groups under /steps in increasing step order (links whose names are not step
// numbers are skipped; a step that is not a hard link to a group is refused).
std::vector<StoredStep> list_steps(const Context& context, hid_t file);

// The names of the datasets in a group shaped like `dims` (the step's fields), in name order;
// a link other than a hard link is refused.
std::vector<std::string> field_names(const Context& context, hid_t group,
                                     const std::string& group_path, std::span<const hsize_t> dims);

// The file's /grid (its attributes, as the writer gives them), refused unless it is a grid
// that simrun makes: dimension 2 or 3, at least 3 nodes along each of its axes (1 beyond it),
// at most 2^31 nodes, finite origin and positive finite spacing.
StoredGrid read_grid(const Context& context, hid_t file);

// A step group's statistics (its attributes and its residual history); files written before
// `method` and `residual_history` existed lack them, and get the defaults.
StepStatistics read_step_statistics(const Context& context, hid_t group,
                                    const std::string& group_path);
// The number of values of a step group's residual history (0 where it has none), read from
// its extent alone.
double residual_history_values(const Context& context, hid_t group, const std::string& group_path);

// Refuses (std::runtime_error naming the file) reading `what` into `bytes` of memory where
// that is more than `limit`, or by default more than the host memory available.
void require_memory(const Context& context, double bytes, const std::string& what,
                    std::optional<double> limit = std::nullopt);

// The HDF5 extent of a field on `grid`, slowest axis first: [nz][ny][nx] or [ny][nx].
std::vector<hsize_t> field_dims(const Grid& grid);
// A box of the grid's nodes as a part of such a field.
FieldPart field_part(const Grid& grid, const NodeBox& box);

// File access whose metadata cache never evicts and never resizes, so dirty metadata reaches
// the file only when it is flushed: between flushes the file on disk stays the one of the last
// flush (new raw data goes to space that metadata does not reference yet).
Hdf5Handle crash_safe_file_access(const Context& context);

// File access for a file that every rank of `ranks` opens together (HDF5's MPI-IO driver), with
// the cache of crash_safe_file_access. Only in a build with HDF5's MPI build
// (H5_HAVE_PARALLEL); throws std::logic_error elsewhere.
Hdf5Handle collective_file_access(const Context& context, const solvers::Communicator& ranks);
// Data transfer that writes collectively (every rank calls each write), or H5P_DEFAULT.
Hdf5Handle collective_transfer(const Context& context);

// H5Fflush: the step is in the operating system's hands (safe from a killed process) before it
// is announced in the .xmf.
void flush_to_disk(const Context& context, hid_t file);

}  // namespace simrun::framework::hdf5

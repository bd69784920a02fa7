#pragma once
// HDF5 helpers shared by the run file writer and the readers: checked calls whose exceptions
// name the file, the operation and HDF5's innermost message, the field shape, and the file
// access (crash-safe, collective). Opening and reading a dataset or group applies the readers'
// checks (run_file_safety.hpp); strings of the wrong shape are refused with InputError.
// HDF5's MPI build includes mpi.h: its C API only (Open MPI's and MPICH's C++ bindings need a
// library of their own).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <hdf5.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/framework/output/hdf5_run_writer.hpp"
#include "simrun/solvers/base/communicator.hpp"

// For hdf5_run_writer.cpp, which calls refuse_links_out_of_file, list_steps and field_names:
// to be removed once it includes these two itself.
#include "run_file_layout.hpp"
#include "run_file_safety.hpp"

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
    // Opens group or dataset `name` of `location` (`path` in messages) through hard links
    // only (require_hard_path: each link on the path; refused otherwise); a dataset whose values
    // are not all in this file is refused (require_values_in_file).
    Hdf5Handle open_group(hid_t location, const std::string& name, const std::string& path) const;
    Hdf5Handle open_dataset(hid_t location, const std::string& name, const std::string& path) const;
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
    // The bytes of a fixed-length string dataset of one value (string_dataset's), found from
    // its type alone (refused where it is not one such string), and its text, without its
    // padding. The caller checks the memory (read_string_dataset holds the bytes).
    std::size_t string_dataset_bytes(hid_t location, const char* name) const;
    std::string read_string_dataset(hid_t location, const char* name) const;
    // A double dataset's extent, slowest axis first (require_values_in_file first), and its
    // values (require_memory first).
    std::vector<hsize_t> dataset_dims(hid_t dataset, const std::string& name) const;
    std::vector<double> read_doubles(hid_t dataset, const std::string& name) const;
    // The box `part` of the dataset (field_part), numbered within it: a rank's box of a
    // stored field.
    std::vector<double> read_doubles(hid_t dataset, const std::string& name,
                                     const FieldPart& part) const;

    const std::filesystem::path& file() const { return file_; }

private:
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

// Opens the context's file read-only with `access`: the readers' way in. What they open in it
// they open through Context's open_group and open_dataset, which check each link on the path.
Hdf5Handle open_for_reading(const Context& context, hid_t access);

// The HDF5 extent of a field on `grid`, slowest axis first: [nz][ny][nx] or [ny][nx].
std::vector<hsize_t> field_dims(const Grid& grid);
// A box of the grid's nodes as a part of such a field.
FieldPart field_part(const Grid& grid, const Box& box);

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

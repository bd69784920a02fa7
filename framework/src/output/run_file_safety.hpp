#pragma once
// What a reader of a run file trusts: nothing that the file says. Links that lead out of it
// (external, user-defined), values that HDF5 would take from elsewhere (external raw storage,
// virtual datasets) or through code it would load (filters not built into HDF5), values the file
// cannot hold (never written, past its end) are refused with InputError ("FILE: WHAT") before
// HDF5 acts on them; a read is checked whole against the memory it may use before any value of
// it is read.
// HDF5's MPI build includes mpi.h: its C API only.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <hdf5.h>

#include <functional>
#include <optional>
#include <string>

namespace simrun::framework::hdf5 {

class Context;

// Calls `visit(name, info)` for each link of `group` (`path` in messages), in name order, in one
// H5Literate pass. An exception thrown by `visit` stops the pass and reaches the caller as it
// was thrown, after HDF5 has returned (it never crosses HDF5's C frames).
void for_each_link(
    const Context& context, hid_t group, const std::string& path,
    const std::function<void(const std::string& name, const H5L_info_t& info)>& visit);

// Refuses link `name` of `location` (`info`: what it is; looked up where not given) unless it is
// a hard link: the only kind a run file's groups and datasets are reached through. `kind` names
// what the run file holds there ("group", "dataset").
void require_hard_link(const Context& context, hid_t location, const std::string& name,
                       const std::string& path, const char* kind, const H5L_info_t& info);
void require_hard_link(const Context& context, hid_t location, const std::string& name,
                       const std::string& path, const char* kind);

// Refuses `name` (a path relative to `location`, or absolute; `path` in messages) unless each
// link on it is a hard link: what opening it follows, checked link by link before HDF5 follows
// any of them. `kind` names what the last one leads to.
void require_hard_path(const Context& context, hid_t location, const std::string& name,
                       const std::string& path, const char* kind);

// Refuses a file any of whose links, anywhere in it, is an external link (to another file) or a
// user-defined one (whose traversal runs code of the program's): for a writer that keeps and
// extends the whole file (the readers check only the paths they open: require_hard_path).
void refuse_links_out_of_file(const Context& context, hid_t file);

// Refuses a dataset whose values HDF5 would take from elsewhere than this file (external raw
// storage, a virtual dataset), through a filter not built into HDF5 (a plugin), or that declares
// values the file does not hold: contiguous values beyond its end, chunks never written (fewer
// allocated than its extent covers) or more chunk bytes than the file has (corrupt or
// truncated).
void require_values_in_file(const Context& context, hid_t dataset, const std::string& name);

// The bytes that reading `dataset` holds beyond its values: a filtered chunk is decompressed
// whole (one chunk's bytes, whatever part of it is read; the chunk may be larger than the
// extent); 0 for values read straight into the caller's memory.
double read_overhead_bytes(const Context& context, hid_t dataset, const std::string& name);

// Refuses (std::runtime_error naming the file) reading `what` into `bytes` of memory where that
// is more than `limit`, or by default more than the host memory available.
void require_memory(const Context& context, double bytes, const std::string& what,
                    std::optional<double> limit = std::nullopt);

}  // namespace simrun::framework::hdf5

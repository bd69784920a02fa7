#pragma once
// The pieces of a run file (Hdf5RunWriter's layout) that its readers and the writer's append
// read back: the step list, a step's fields and statistics, the grid. Each is read through the
// readers' checks (run_file_safety.hpp): hard links only, values held by the file.
// HDF5's MPI build includes mpi.h: its C API only.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <hdf5.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "simrun/framework/output/hdf5_run_writer.hpp"
#include "simrun/framework/output/run_file_reader.hpp"

namespace simrun::framework::hdf5 {

class Context;

// A step group of /steps: its index and its name.
struct StoredStep {
    std::int64_t step;
    std::string name;
};

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

// The memory that reading a dataset holds, found from its extent and storage alone: its values
// (8 bytes each), and what HDF5 holds while reading it (read_overhead_bytes).
struct DatasetMemory {
    double values = 0;
    double overhead_bytes = 0;
};
// A step group's residual history's (none where it has none).
DatasetMemory residual_history_memory(const Context& context, hid_t group,
                                      const std::string& group_path);
// Dataset `name` of `group`'s (a field).
DatasetMemory dataset_memory(const Context& context, hid_t group, const std::string& name,
                             const std::string& path);

}  // namespace simrun::framework::hdf5

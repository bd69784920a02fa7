#pragma once
// A run's HDF5 file (Hdf5RunWriter's layout) read whole, for programs that analyse results
// rather than continue a run (the Python module's simrun.read): the grid, the input, and every
// stored step with its time, statistics and fields.
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "simrun/framework/output/hdf5_run_writer.hpp"

namespace simrun::framework {

// A run file's /grid.
struct StoredGrid {
    int dimension = 0;
    std::array<std::int64_t, 3> points{};  // nodes per axis (1 beyond the dimension)
    std::array<double, 3> origin{}, spacing{};
    std::int64_t num_points() const { return points[0] * points[1] * points[2]; }
};

struct StoredField {
    std::string name;
    std::vector<double> values;  // in grid node order (x fastest)
};

struct StoredRunStep {
    std::int64_t step = 0;
    double time = 0.0;
    StepStatistics statistics;
    // The step's datasets shaped like the grid, in name order; none where not asked for.
    std::vector<StoredField> fields;
};

struct StoredRunFile : StoredGrid {
    std::string input;             // the input text the run was started with
    std::string solver_decisions;  // the solver layer's reasons, as stored
    std::vector<StoredRunStep> steps;
};

// The memory a read may take, checked for the whole read (every chosen step's fields and
// residual histories, from their extents) before any value is read.
struct RunFileMemory {
    // The caller copies what it reads while the read is still held: each field stacked over
    // the steps read (one array [step, (z,) y, x] per field name, filled where a step lacks
    // the field) and each residual history (the Python module's simrun.read).
    bool stacked_copy = false;
    // At most this many bytes; by default the host memory available
    // (solvers::available_host_memory).
    std::optional<double> limit;
};

// Reads `path`. Throws std::runtime_error naming the file and the HDF5 operation that failed
// where the file is missing or no run file, and naming the file and the sizes where the read
// would take more memory than `memory` allows (nothing is read then). Throws InputError
// ("FILE: WHAT") for a file that is refused for what it holds: links out of the file,
// values stored in other files (external storage, virtual datasets) or through a filter that
// needs a plugin, contiguous values larger than the file, strings of several values, a grid
// that simrun would not make (no nodes along an axis, a spacing that is not positive).
// A file that a run is still writing reads as far as its last complete step.
// With `positions`, only those of the stored steps (0 the first, -1 the last), in that order;
// std::invalid_argument for a position outside them.
StoredRunFile read_run_file(const std::filesystem::path& path, bool with_fields = true,
                            std::optional<std::vector<std::int64_t>> positions = std::nullopt,
                            const RunFileMemory& memory = {});

}  // namespace simrun::framework

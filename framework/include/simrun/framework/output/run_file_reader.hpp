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

// Reads `path`. Throws std::runtime_error naming the file and the HDF5 operation that failed
// where the file is missing or no run file; reading more values than the machine's memory
// holds is refused before it is tried. A file that a run is still writing reads as far as its
// last complete step.
// With `positions`, only those of the stored steps (0 the first, -1 the last), in that order;
// std::invalid_argument for a position outside them.
StoredRunFile read_run_file(const std::filesystem::path& path, bool with_fields = true,
                            std::optional<std::vector<std::int64_t>> positions = std::nullopt);

}  // namespace simrun::framework

#pragma once
// The state a run continues from: the last step stored in an earlier run's HDF5 file (see
// Hdf5RunWriter), checked against the input so that the continuation computes the same steps,
// bit for bit, as the run it continues would have.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/framework/output/hdf5_run_writer.hpp"
#include "simrun/framework/problem/run_spec.hpp"

namespace simrun::framework {

struct RestartState {
    std::filesystem::path file;
    std::int64_t step = 0;
    double time = 0.0;          // step * dt, as stored
    std::vector<double> u;      // the field, in Grid node order
    StepStatistics statistics;  // as stored with the step
};

// Reads the last step of `h5_path`'s /steps. Throws InputError (message "--restart FILE: ...",
// or at time.dt for a different step) when the file is missing or is no readable run file,
// when the input is steady, when its grid differs from /grid (points, origin or spacing, bit
// for bit), when the stored time is not step * dt of the input bit for bit (naming both dt),
// when the field is not finite or not shaped like the grid, or when the step is at or beyond
// the input's last step, and (message "--restart FILE: refused: ...") for a file that
// read_run_file refuses for what it holds. With `box` (a rank's part of the grid) the field read is
// its alone: u holds the box's nodes, numbered within it.
RestartState read_restart_state(const std::filesystem::path& h5_path, const Grid& grid,
                                const TimeParameters& time,
                                std::optional<Box> box = std::nullopt);

}  // namespace simrun::framework

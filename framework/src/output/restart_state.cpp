#include "simrun/framework/output/restart_state.hpp"

#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "hdf5_support.hpp"
#include "run_file_layout.hpp"
#include "run_file_safety.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/output/xdmf_writer.hpp"

namespace simrun::framework {
namespace {

// The shortest "%.Ng" text that reads back as the same double, so that two values that differ
// print differently and equal ones print as the user wrote them.
std::string shortest(double value) {
    char buffer[32];
    for (int digits = 6; digits <= 17; ++digits) {
        std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
        if (std::strtod(buffer, nullptr) == value) break;
    }
    return buffer;
}

template <typename T>
std::string triple(const std::array<T, 3>& values, int dimension, const char* separator) {
    std::string text;
    for (int axis = 0; axis < dimension; ++axis) {
        const T value = values[static_cast<std::size_t>(axis)];
        if (axis > 0) text += separator;
        if constexpr (std::is_floating_point_v<T>) {
            text += shortest(value);
        } else {
            text += std::to_string(value);
        }
    }
    return text;
}

// `message` without the file it begins with ("FILE: " or "HDF5 file 'FILE': "): the place of a
// --restart error names it already.
std::string without_file(const std::string& message, const std::string& file) {
    for (const std::string& prefix : {file + ": ", "HDF5 file '" + file + "': "}) {
        if (message.starts_with(prefix)) return message.substr(prefix.size());
    }
    return message;
}

// What the file holds, read without judging it against the input.
struct StoredRun : StoredGrid {
    std::optional<RestartState> last;  // none when /steps is empty
    std::vector<hsize_t> u_dims;
};

// The last step's field is read only when shaped like `expected` (the input's grid): a file
// whose shape differs is refused on its shape, without reading what it claims to hold.
StoredRun read_stored_run(const std::filesystem::path& path, const std::vector<hsize_t>& expected,
                          const hdf5::FieldPart& part) {
    const hdf5::Context context(path);
    auto file = hdf5::open_for_reading(context, H5P_DEFAULT);
    StoredRun run;
    static_cast<StoredGrid&>(run) = hdf5::read_grid(context, file.get());
    const auto steps = hdf5::list_steps(context, file.get());
    if (steps.empty()) return run;

    const std::string group_path = "/steps/" + steps.back().name;
    auto group = context.open_group(file.get(), group_path, group_path);
    RestartState state;
    state.file = path;
    state.step = steps.back().step;
    state.time = context.read_scalar_attribute<double>(group.get(), "time", H5T_NATIVE_DOUBLE);
    {
        const std::string u_path = group_path + "/u";
        auto data = context.open_dataset(group.get(), "u", u_path);
        run.u_dims = context.dataset_dims(data.get(), u_path);
        if (run.u_dims == expected) {
            // Everything the read holds, counted before any of it is read.
            double part_values = 1;
            for (const hsize_t extent : part.count) part_values *= static_cast<double>(extent);
            const auto history = hdf5::residual_history_memory(context, group.get(), group_path);
            const double overhead = std::max(hdf5::read_overhead_bytes(context, data.get(), u_path),
                                             history.overhead_bytes);
            hdf5::require_memory(context, 8.0 * (part_values + history.values) + overhead,
                                 "the field and residual history of " + group_path);
            state.u = context.read_doubles(data.get(), u_path, part);
        }
    }
    // The statistics make the step's copy in a new file equal to this one.
    state.statistics = hdf5::read_step_statistics(context, group.get(), group_path);
    run.last = std::move(state);
    return run;
}

}  // namespace

RestartState read_restart_state(const std::filesystem::path& h5_path, const Grid& grid,
                                const TimeParameters& time, std::optional<Box> box) {
    const Box part = box.value_or(grid.box());
    const hdf5::FieldPart read = hdf5::field_part(grid, part);
    const std::string place = "--restart " + h5_path.string();
    const std::string name = h5_path.string();
    if (time.steady()) {
        throw InputError(place, "time.scheme",
                         "the input is steady: only a time-dependent run continues from a "
                         "stored step");
    }
    std::error_code error;
    if (!std::filesystem::is_regular_file(h5_path, error)) {
        throw InputError(place, "", "no such file");
    }
    StoredRun stored;
    try {
        stored = read_stored_run(h5_path, hdf5::field_dims(grid), read);
    } catch (const InputError& e) {
        throw InputError(place, "", "refused: " + without_file(e.what(), name));
    } catch (const std::runtime_error& e) {
        throw InputError(place, "",
                         "not a readable simrun run file (" + without_file(e.what(), name) + ")");
    }
    if (!stored.last) throw InputError(place, "", name + " holds no steps to continue from");
    RestartState& state = *stored.last;

    if (stored.dimension != grid.dimension() || stored.points != grid.points()) {
        const int shown = std::max(stored.dimension == 3 ? 3 : 2, grid.dimension());
        throw InputError(place, "grid",
                         name + " was written on a grid of " + triple(stored.points, shown, " x ") +
                             " nodes, the input has " + triple(grid.points(), shown, " x "));
    }
    if (stored.origin != grid.origin()) {
        throw InputError(place, "grid",
                         name + " was written with the grid's origin at (" +
                             triple(stored.origin, grid.dimension(), ", ") + "), the input has (" +
                             triple(grid.origin(), grid.dimension(), ", ") + ")");
    }
    if (stored.spacing != grid.spacing()) {
        throw InputError(place, "grid",
                         name + " was written with grid spacing (" +
                             triple(stored.spacing, grid.dimension(), ", ") + "), the input has (" +
                             triple(grid.spacing(), grid.dimension(), ", ") + ")");
    }
    const std::string step_text = "step " + std::to_string(state.step);
    if (stored.u_dims != hdf5::field_dims(grid)) {
        throw InputError(place, "",
                         name + ": " + step_group_path(state.step) +
                             "/u is not shaped like the grid /grid describes");
    }
    for (std::size_t i = 0; i < state.u.size(); ++i) {
        if (!std::isfinite(state.u[i])) {
            throw InputError(
                place, "",
                name + ": " + step_group_path(state.step) + "/u is not finite at node " +
                    std::to_string(std::apply([&](auto... index) { return grid.index(index...); },
                                              part.node(static_cast<std::int64_t>(i)))));
        }
    }

    // t = step dt, exactly as the integrator computes it, or the continuation differs.
    const double expected = static_cast<double>(state.step) * time.dt;
    if (state.time != expected) {
        const std::string written =
            state.step > 0 ? "dt = " + shortest(state.time / static_cast<double>(state.step))
                           : "a time other than 0";
        throw InputError(time.dt_place, "time.dt",
                         name + " was written with " + written + " (" + step_text + " at t = " +
                             shortest(state.time) + "), the input has dt = " + shortest(time.dt) +
                             " (" + step_text + " at t = " + shortest(expected) + ")");
    }
    if (state.step >= time.steps) {
        throw InputError(place, "time.end",
                         name + " ends at " + step_text + " (t = " + shortest(state.time) +
                             "), the input ends at step " + std::to_string(time.steps) +
                             " (t = " + shortest(time.end) +
                             "): nothing is left to run; raise time.end to go on");
    }
    return std::move(state);
}

}  // namespace simrun::framework

#include "simrun/framework/output/run_file_reader.hpp"

#include <optional>
#include <set>
#include <stdexcept>

#include "hdf5_support.hpp"

namespace simrun::framework {
namespace {

// A step chosen to be read, and what reading it holds: its fields (by name) and its residual
// history, found from their extents.
struct StepPlan {
    const hdf5::StoredStep* stored = nullptr;
    std::string group_path;
    std::vector<std::string> fields;
    double history_values = 0;
};

// The positions in `listed` that `positions` choose, in their order; all where none are given.
std::vector<std::size_t> chosen_positions(
    const std::filesystem::path& path, std::size_t listed,
    const std::optional<std::vector<std::int64_t>>& positions) {
    std::vector<std::size_t> chosen;
    if (!positions) {
        for (std::size_t i = 0; i < listed; ++i) chosen.push_back(i);
        return chosen;
    }
    const auto count = static_cast<std::int64_t>(listed);
    for (const std::int64_t position : *positions) {
        if (position < -count || position >= count) {
            throw std::invalid_argument("step position " + std::to_string(position) +
                                        " is outside the " + std::to_string(count) +
                                        " steps stored in '" + path.string() + "'");
        }
        chosen.push_back(static_cast<std::size_t>(position < 0 ? position + count : position));
    }
    return chosen;
}

// The bytes that reading `plans` holds (8 per value), with the caller's stacked copy: one
// array over every planned step per field name, and the histories again.
double bytes_held(const std::vector<StepPlan>& plans, double step_points, bool stacked_copy) {
    double fields = 0, histories = 0;
    std::set<std::string> names;
    for (const auto& plan : plans) {
        fields += static_cast<double>(plan.fields.size()) * step_points;
        histories += plan.history_values;
        names.insert(plan.fields.begin(), plan.fields.end());
    }
    double values = fields + histories;
    if (stacked_copy) {
        values += static_cast<double>(names.size() * plans.size()) * step_points + histories;
    }
    return 8.0 * values;
}

}  // namespace

StoredRunFile read_run_file(const std::filesystem::path& path, bool with_fields,
                            std::optional<std::vector<std::int64_t>> positions,
                            const RunFileMemory& memory) {
    const hdf5::Context context(path);
    // Without HDF5's file lock, so that a file a run is still writing can be read: the writer
    // flushes each step whole before it lists it (Hdf5RunWriter), and a step being written is
    // not yet linked under /steps.
    auto access = context.check(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate (file access)");
    context.check(H5Pset_file_locking(access.get(), false, true), "H5Pset_file_locking");
    auto file = hdf5::open_for_reading(context, access.get());
    StoredRunFile run;
    static_cast<StoredGrid&>(run) = hdf5::read_grid(context, file.get());
    run.input = context.read_string_dataset(file.get(), "/input");
    run.solver_decisions = context.read_string_dataset(file.get(), "/solver_decisions");

    // The fields' extent, slowest axis first, as the writer gives it.
    std::vector<hsize_t> dims;
    for (int axis = run.dimension - 1; axis >= 0; --axis) {
        dims.push_back(static_cast<hsize_t>(run.points[static_cast<std::size_t>(axis)]));
    }
    const auto listed = hdf5::list_steps(context, file.get());
    std::vector<StepPlan> plans;
    for (const std::size_t position : chosen_positions(path, listed.size(), positions)) {
        StepPlan plan{&listed[position], "/steps/" + listed[position].name, {}, 0};
        auto group = context.open_group(file.get(), plan.group_path, plan.group_path);
        if (with_fields)
            plan.fields = hdf5::field_names(context, group.get(), plan.group_path, dims);
        plan.history_values = hdf5::residual_history_values(context, group.get(), plan.group_path);
        plans.push_back(std::move(plan));
    }
    hdf5::require_memory(
        context, bytes_held(plans, static_cast<double>(run.num_points()), memory.stacked_copy),
        std::to_string(plans.size()) + " steps' " + (with_fields ? "fields and " : "") +
            "residual histories" + (memory.stacked_copy ? ", and copying them into arrays," : ""),
        memory.limit);

    for (const StepPlan& plan : plans) {
        auto group = context.open_group(file.get(), plan.group_path, plan.group_path);
        StoredRunStep step;
        step.step = plan.stored->step;
        step.time = context.read_scalar_attribute<double>(group.get(), "time", H5T_NATIVE_DOUBLE);
        step.statistics = hdf5::read_step_statistics(context, group.get(), plan.group_path);
        for (const std::string& name : plan.fields) {
            const std::string field_path = plan.group_path + "/" + name;
            auto data = context.open_dataset(group.get(), name, field_path);
            step.fields.push_back({name, context.read_doubles(data.get(), field_path)});
        }
        run.steps.push_back(std::move(step));
    }
    return run;
}

}  // namespace simrun::framework

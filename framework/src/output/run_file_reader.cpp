#include "simrun/framework/output/run_file_reader.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>

#include "hdf5_support.hpp"
#include "run_file_layout.hpp"
#include "run_file_safety.hpp"

namespace simrun::framework {
namespace {

// A step chosen to be read, and what reading it holds: its fields (by name), its residual
// history, and the most that HDF5 holds while reading one of them, found from their extents.
struct StepPlan {
    const hdf5::StoredStep* stored = nullptr;
    std::string group_path;
    std::vector<std::string> fields;
    double history_values = 0;
    double overhead_bytes = 0;
};

// Everything a read holds: the chosen steps, and the stored input and solver decisions.
struct ReadPlan {
    std::vector<StepPlan> steps;
    double text_bytes = 0;
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

// The bytes that reading `plan` holds (8 per value, the texts' bytes, and the largest of what
// HDF5 holds while reading one dataset), with the caller's copy: one array over every planned
// step per field name, the histories and the texts again. In double: no count overflows.
double bytes_held(const ReadPlan& plan, double step_points, bool stacked_copy) {
    double fields = 0, histories = 0, overhead = 0;
    std::set<std::string> names;
    for (const auto& step : plan.steps) {
        fields += static_cast<double>(step.fields.size()) * step_points;
        histories += step.history_values;
        overhead = std::max(overhead, step.overhead_bytes);
        names.insert(step.fields.begin(), step.fields.end());
    }
    double held = 8.0 * (fields + histories) + plan.text_bytes + overhead;
    if (stacked_copy) {
        const double stacked = static_cast<double>(names.size()) *
                               static_cast<double>(plan.steps.size()) * step_points;
        held += 8.0 * (stacked + histories) + plan.text_bytes;
    }
    return held;
}

// Plans the read of the step at `stored`: its fields shaped like `dims` (none without fields)
// and its residual history.
StepPlan plan_step(const hdf5::Context& context, hid_t file, const hdf5::StoredStep& stored,
                   std::span<const hsize_t> dims, bool with_fields) {
    StepPlan plan{&stored, "/steps/" + stored.name, {}, 0, 0};
    auto group = context.open_group(file, plan.group_path, plan.group_path);
    if (with_fields) plan.fields = hdf5::field_names(context, group.get(), plan.group_path, dims);
    for (const std::string& name : plan.fields) {
        const auto field =
            hdf5::dataset_memory(context, group.get(), name, plan.group_path + "/" + name);
        plan.overhead_bytes = std::max(plan.overhead_bytes, field.overhead_bytes);
    }
    const auto history = hdf5::residual_history_memory(context, group.get(), plan.group_path);
    plan.history_values = history.values;
    plan.overhead_bytes = std::max(plan.overhead_bytes, history.overhead_bytes);
    return plan;
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

    // The fields' extent, slowest axis first, as the writer gives it.
    std::vector<hsize_t> dims;
    for (int axis = run.dimension - 1; axis >= 0; --axis) {
        dims.push_back(static_cast<hsize_t>(run.points[static_cast<std::size_t>(axis)]));
    }
    const auto listed = hdf5::list_steps(context, file.get());
    ReadPlan plan;
    for (const char* text : {"/input", "/solver_decisions"}) {
        plan.text_bytes += static_cast<double>(context.string_dataset_bytes(file.get(), text));
    }
    for (const std::size_t position : chosen_positions(path, listed.size(), positions)) {
        plan.steps.push_back(plan_step(context, file.get(), listed[position], dims, with_fields));
    }
    hdf5::require_memory(
        context, bytes_held(plan, static_cast<double>(run.num_points()), memory.stacked_copy),
        std::to_string(plan.steps.size()) + " steps' " + (with_fields ? "fields and " : "") +
            "residual histories and the stored input and solver decisions" +
            (memory.stacked_copy ? ", and copying them," : ""),
        memory.limit);

    run.input = context.read_string_dataset(file.get(), "/input");
    run.solver_decisions = context.read_string_dataset(file.get(), "/solver_decisions");
    for (const StepPlan& step_plan : plan.steps) {
        auto group = context.open_group(file.get(), step_plan.group_path, step_plan.group_path);
        StoredRunStep step;
        step.step = step_plan.stored->step;
        step.time = context.read_scalar_attribute<double>(group.get(), "time", H5T_NATIVE_DOUBLE);
        step.statistics = hdf5::read_step_statistics(context, group.get(), step_plan.group_path);
        for (const std::string& name : step_plan.fields) {
            const std::string field_path = step_plan.group_path + "/" + name;
            auto data = context.open_dataset(group.get(), name, field_path);
            step.fields.push_back({name, context.read_doubles(data.get(), field_path)});
        }
        run.steps.push_back(std::move(step));
    }
    return run;
}

}  // namespace simrun::framework

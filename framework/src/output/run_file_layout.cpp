#include "run_file_layout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "hdf5_support.hpp"
#include "run_file_safety.hpp"

namespace simrun::framework::hdf5 {
namespace {

// A link of a group: its name and what it is.
struct Link {
    std::string name;
    H5L_info_t info;
};

// A group's links, in name order (one pass over the group).
std::vector<Link> links_of(const Context& context, hid_t group, const std::string& path) {
    std::vector<Link> links;
    for_each_link(context, group, path, [&](const std::string& name, const H5L_info_t& info) {
        links.push_back({name, info});
    });
    return links;
}

// Refuses a /grid that simrun's Grid would not make (Grid's own rules).
void require_simrun_grid(const Context& context, const StoredGrid& grid) {
    if (grid.dimension != 2 && grid.dimension != 3) {
        context.refuse("attribute 'dimension' of /grid is " + std::to_string(grid.dimension) +
                       "; a run file's grid has dimension 2 or 3");
    }
    const char* const axes = "xyz";
    double nodes = 1;
    for (int axis = 0; axis < 3; ++axis) {
        const auto a = static_cast<std::size_t>(axis);
        const std::string along = std::string(" along ") + axes[axis];
        const std::int64_t points = grid.points[a];
        if (axis < grid.dimension ? points < 3 : points != 1) {
            context.refuse("attribute 'points' of /grid is " + std::to_string(points) + along +
                           "; a run file's grid has at least 3 nodes along each of its " +
                           std::to_string(grid.dimension) + " axes" +
                           (grid.dimension == 2 ? " and 1 along z" : ""));
        }
        nodes *= static_cast<double>(points);
        if (axis >= grid.dimension) continue;
        if (!std::isfinite(grid.origin[a])) {
            context.refuse("attribute 'origin' of /grid is not finite" + along);
        }
        if (!(grid.spacing[a] > 0) || !std::isfinite(grid.spacing[a])) {
            context.refuse("attribute 'spacing' of /grid is " + std::to_string(grid.spacing[a]) +
                           along + "; a run file's grid spacing is positive and finite");
        }
    }
    if (nodes > std::numeric_limits<std::int32_t>::max()) {
        context.refuse(
            "attribute 'points' of /grid makes more than 2^31 nodes; simrun's grids "
            "have fewer");
    }
}

}  // namespace

std::vector<StoredStep> list_steps(const Context& context, hid_t file) {
    auto group = context.open_group(file, "/steps", "/steps");
    std::vector<StoredStep> steps;
    for (auto& [name, info] : links_of(context, group.get(), "/steps")) {
        const bool is_number =
            !name.empty() && name.size() <= 18 &&
            std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!is_number) continue;
        require_hard_link(context, group.get(), name, "/steps/" + name, "step's group", info);
        steps.push_back({std::stoll(name), std::move(name)});
    }
    std::sort(steps.begin(), steps.end(),
              [](const StoredStep& a, const StoredStep& b) { return a.step < b.step; });
    return steps;
}

std::vector<std::string> field_names(const Context& context, hid_t group,
                                     const std::string& group_path, std::span<const hsize_t> dims) {
    std::vector<std::string> fields;
    for (auto& [name, info] : links_of(context, group, group_path)) {
        const std::string path = group_path + "/" + name;
        require_hard_link(context, group, name, path, "field's dataset", info);
        auto object = context.check(H5Oopen(group, name.c_str(), H5P_DEFAULT), H5Oclose,
                                    "H5Oopen of '" + path + "'");
        if (H5Iget_type(object.get()) != H5I_DATASET) continue;
        const auto extent = context.dataset_dims(object.get(), path);
        if (std::equal(extent.begin(), extent.end(), dims.begin(), dims.end())) {
            fields.push_back(std::move(name));
        }
    }
    return fields;
}

StoredGrid read_grid(const Context& context, hid_t file) {
    auto group = context.open_group(file, "/grid", "/grid");
    StoredGrid grid;
    grid.dimension = context.read_scalar_attribute<int>(group.get(), "dimension", H5T_NATIVE_INT);
    grid.points =
        context.read_triple_attribute<std::int64_t>(group.get(), "points", H5T_NATIVE_INT64);
    grid.origin = context.read_triple_attribute<double>(group.get(), "origin", H5T_NATIVE_DOUBLE);
    grid.spacing = context.read_triple_attribute<double>(group.get(), "spacing", H5T_NATIVE_DOUBLE);
    require_simrun_grid(context, grid);
    return grid;
}

StepStatistics read_step_statistics(const Context& context, hid_t group,
                                    const std::string& group_path) {
    StepStatistics stats;
    stats.solver_iterations =
        context.read_scalar_attribute<std::int64_t>(group, "solver_iterations", H5T_NATIVE_INT64);
    stats.relative_residual =
        context.read_scalar_attribute<double>(group, "relative_residual", H5T_NATIVE_DOUBLE);
    stats.status = context.read_string_attribute(group, "status");
    if (context.attribute_exists(group, "method")) {
        stats.method = context.read_string_attribute(group, "method");
    }
    if (context.link_exists(group, "residual_history")) {
        const std::string history_path = group_path + "/residual_history";
        auto data = context.open_dataset(group, "residual_history", history_path);
        stats.residual_history = context.read_doubles(data.get(), history_path);
    }
    return stats;
}

DatasetMemory residual_history_memory(const Context& context, hid_t group,
                                      const std::string& group_path) {
    if (!context.link_exists(group, "residual_history")) return {};
    return dataset_memory(context, group, "residual_history", group_path + "/residual_history");
}

DatasetMemory dataset_memory(const Context& context, hid_t group, const std::string& name,
                             const std::string& path) {
    auto data = context.open_dataset(group, name, path);
    DatasetMemory memory{1, read_overhead_bytes(context, data.get(), path)};
    for (const hsize_t extent : context.dataset_dims(data.get(), path)) {
        memory.values *= static_cast<double>(extent);
    }
    return memory;
}

}  // namespace simrun::framework::hdf5

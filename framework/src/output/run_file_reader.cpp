#include "simrun/framework/output/run_file_reader.hpp"

#include <optional>
#include <stdexcept>

#include "hdf5_support.hpp"

namespace simrun::framework {

StoredRunFile read_run_file(const std::filesystem::path& path, bool with_fields,
                            std::optional<std::vector<std::int64_t>> positions) {
    const hdf5::Context context(path);
    // Without HDF5's file lock, so that a file a run is still writing can be read: the writer
    // flushes each step whole before it lists it (Hdf5RunWriter), and a step being written is
    // not yet linked under /steps.
    auto access = context.check(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate (file access)");
    context.check(H5Pset_file_locking(access.get(), false, true), "H5Pset_file_locking");
    auto file = context.check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get()), H5Fclose,
                              "H5Fopen (read-only)");
    StoredRunFile run;
    static_cast<StoredGrid&>(run) = hdf5::read_grid(context, file.get());
    if (run.dimension != 2 && run.dimension != 3) {
        throw std::runtime_error("HDF5 file '" + path.string() + "': /grid has dimension " +
                                 std::to_string(run.dimension) + "; a run file's is 2 or 3");
    }
    run.input = context.read_string_dataset(file.get(), "/input");
    run.solver_decisions = context.read_string_dataset(file.get(), "/solver_decisions");

    // The fields' extent, slowest axis first, as the writer gives it.
    std::vector<hsize_t> dims;
    for (int axis = run.dimension - 1; axis >= 0; --axis) {
        dims.push_back(static_cast<hsize_t>(run.points[static_cast<std::size_t>(axis)]));
    }
    const auto listed = hdf5::list_steps(context, file.get());
    std::vector<std::size_t> chosen;  // positions in `listed`, in the order asked for
    const auto count = static_cast<std::int64_t>(listed.size());
    for (const std::int64_t position : positions.value_or(std::vector<std::int64_t>{})) {
        if (position < -count || position >= count) {
            throw std::invalid_argument("step position " + std::to_string(position) +
                                        " is outside the " + std::to_string(count) +
                                        " steps stored in '" + path.string() + "'");
        }
        chosen.push_back(static_cast<std::size_t>(position < 0 ? position + count : position));
    }
    if (!positions) {
        for (std::size_t i = 0; i < listed.size(); ++i) chosen.push_back(i);
    }
    for (const std::size_t position : chosen) {
        const auto& stored = listed[position];
        const std::string group_path = "/steps/" + stored.name;
        auto group = context.check(H5Gopen2(file.get(), group_path.c_str(), H5P_DEFAULT), H5Gclose,
                                   "H5Gopen2 of group '" + group_path + "'");
        StoredRunStep step;
        step.step = stored.step;
        step.time = context.read_scalar_attribute<double>(group.get(), "time", H5T_NATIVE_DOUBLE);
        step.statistics = hdf5::read_step_statistics(context, group.get(), group_path);
        if (with_fields) {
            for (auto& name : hdf5::field_names(context, group.get(), group_path, dims)) {
                const std::string field_path = group_path + "/" + name;
                auto data = context.check(H5Dopen2(group.get(), name.c_str(), H5P_DEFAULT),
                                          H5Dclose, "H5Dopen2 of dataset '" + field_path + "'");
                step.fields.push_back(
                    {std::move(name), context.read_doubles(data.get(), field_path)});
            }
        }
        run.steps.push_back(std::move(step));
    }
    return run;
}

}  // namespace simrun::framework

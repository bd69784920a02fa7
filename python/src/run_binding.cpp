// _run and _verify: an input file run or verified as the command line does it (`simrun FILE`,
// `simrun verify FILE --json`), the input's keys set from Python's values, the GIL released
// while the run computes (a Ctrl-C ends a run between two steps).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bindings.hpp"
#include "simrun/framework/config/config.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/framework/run/simulation.hpp"
#include "simrun/framework/run/verification.hpp"
#include "simrun/solvers/base/enum_names.hpp"

namespace py = pybind11;

namespace simrun::python {
namespace {

using framework::Config;

// A key set from Python: a typed value (bool, int, float, str), or a TOML text (an array) that
// the front wrote, read as `--set KEY=TEXT` would be.
struct Setting {
    std::string key;
    Config::Value value;
    bool toml_text = false;
};

Config load(const std::string& path, const std::vector<Setting>& settings) {
    Config config = Config::from_file(path);
    for (const auto& setting : settings) {
        if (setting.toml_text) {
            config.apply_override(setting.key + "=" + std::get<std::string>(setting.value));
        } else {
            config.set(setting.key, setting.value, "set={'" + setting.key + "': ...}");
        }
    }
    return config;
}

std::vector<Setting> settings_of(const std::vector<py::tuple>& items) {
    std::vector<Setting> settings;
    for (const auto& item : items) {
        const auto key = item[0].cast<std::string>();
        Config::Value value;
        try {
            value = item[1].cast<Config::Value>();
        } catch (const py::cast_error&) {  // what simrun.run's front refuses, given to _run
            throw framework::InputError("set={'" + key + "': ...}", key,
                                        "the value " + py::repr(item[1]).cast<std::string>() +
                                            " is not a 64-bit integer, a float, a bool or a str");
        }
        settings.push_back({key, std::move(value), item[2].cast<bool>()});
    }
    return settings;
}

// A path argument (input, output, restart): a control character in it (a NUL would cut it
// short) is refused naming the argument.
void require_plain_path(const std::string& path, const char* argument) {
    if (const auto problem = framework::control_character_problem(path, false)) {
        throw framework::InputError(std::string(argument) + ": the path " + *problem);
    }
}

// An output's path, or None where the run wrote none.
py::object path_or_none(const std::filesystem::path& path) {
    return path.empty() ? py::object(py::none()) : py::object(py::str(path.string()));
}

py::dict run(const std::string& path, const std::vector<py::tuple>& items,
             std::optional<std::string> output, const std::string& backend, bool quiet,
             std::optional<std::string> restart) {
    require_plain_path(path, "input");
    if (output) require_plain_path(*output, "output");
    if (restart) require_plain_path(*restart, "restart");
    const std::vector<Setting> settings = settings_of(items);
    framework::RunOptions options;
    options.backend = solvers::parse_enum<solvers::BackendChoice>(backend, "backend");
    if (output) options.output_directory = *output;
    if (restart) options.restart_file = *restart;
    options.quiet = quiet;
    // Ctrl-C: Python's handler only marks the signal; look for it between steps, at most every
    // 0.1 s (the GIL is taken for it), and end the run with Python's KeyboardInterrupt.
    options.after_step = [last = std::chrono::steady_clock::now()]() mutable {
        const auto now = std::chrono::steady_clock::now();
        if (now - last < std::chrono::milliseconds(100)) return;
        last = now;
        const py::gil_scoped_acquire locked;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    };

    py::dict result;
    const py::gil_scoped_release unlocked;
    framework::Simulation simulation(framework::parse_run_spec(load(path, settings)), options);
    const framework::RunSummary summary = simulation.run();
    const py::gil_scoped_acquire locked;
    const framework::Grid& grid = simulation.grid();
    std::vector<std::int64_t> points;
    for (int axis = 0; axis < grid.dimension(); ++axis) points.push_back(grid.points(axis));
    result["problem"] = simulation.spec().problem->description();
    result["points"] = points;
    result["unknowns"] = grid.num_points();
    result["backend"] = std::string(solvers::to_string(simulation.backend().kind()));
    result["device"] = simulation.backend().description();
    result["backend_reason"] = simulation.backend_reason();
    if (const solvers::SolverPlan* plan = simulation.integrator().plan()) {
        result["solver"] = plan->first.reason;
        result["format"] = plan->format_reason;
    } else {
        result["solver"] = "none: explicit scheme";
    }
    result["steps"] = summary.steps;
    result["time"] = simulation.time();
    result["total_iterations"] = summary.total_iterations;
    result["mean_iterations"] = summary.mean_iterations();
    result["max_iterations"] = summary.max_iterations;
    result["fallbacks"] = summary.fallbacks;
    result["seconds"] = summary.seconds;
    result["solver_seconds"] = summary.solver_seconds;
    result["data_seconds"] = summary.data_seconds;
    result["output_handover_seconds"] = summary.output_handover_seconds;
    result["output_wait_seconds"] = summary.output_wait_seconds;
    result["removed_constant"] = summary.removed_constant;
    result["pvd"] = path_or_none(simulation.pvd_path());
    result["h5"] = path_or_none(simulation.h5_path());
    return result;
}

std::string verify(const std::string& path, const std::vector<py::tuple>& items, int levels,
                   const std::string& backend) {
    require_plain_path(path, "input");
    const std::vector<Setting> settings = settings_of(items);
    const auto choice = solvers::parse_enum<solvers::BackendChoice>(backend, "backend");
    const py::gil_scoped_release unlocked;
    return framework::format_json(
        framework::verify([&] { return load(path, settings); }, levels, choice));
}

}  // namespace

void bind_run(py::module_& module) {
    module.def("_run", &run, py::arg("path"), py::arg("settings"), py::arg("output"),
               py::arg("backend"), py::arg("quiet"), py::arg("restart"));
    module.def("_verify", &verify, py::arg("path"), py::arg("settings"), py::arg("levels"),
               py::arg("backend"));
}

}  // namespace simrun::python

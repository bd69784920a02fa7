// _read: a run's HDF5 file read whole (framework::read_run_file), handed to the front as NumPy
// arrays, each field's values shaped [(z,) y, x], the GIL released while the file is read.
// The arrays are copies made while the read is held: the reader's memory check counts them
// (RunFileMemory::stacked_copy) before anything is read.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "simrun/framework/output/run_file_reader.hpp"

namespace py = pybind11;

namespace simrun::python {
namespace {

py::array_t<double> array_of(const std::vector<double>& values, std::vector<py::ssize_t> shape) {
    py::array_t<double> array(std::move(shape));
    std::copy(values.begin(), values.end(), array.mutable_data());
    return array;
}

// Each field of the steps as one array [step, (z,) y, x], written once from the stored values;
// NaN at a step that lacks the field.
py::dict stacked_fields(const framework::StoredRunFile& run, std::vector<py::ssize_t> shape) {
    std::set<std::string> names;
    for (const auto& step : run.steps) {
        for (const auto& field : step.fields) names.insert(field.name);
    }
    shape.insert(shape.begin(), static_cast<py::ssize_t>(run.steps.size()));
    const auto points = static_cast<std::size_t>(run.num_points());
    py::dict fields;
    for (const auto& name : names) {
        py::array_t<double> array(shape);
        double* values = array.mutable_data();
        for (std::size_t i = 0; i < run.steps.size(); ++i) {
            const auto& stored = run.steps[i].fields;
            const auto field = std::find_if(stored.begin(), stored.end(),
                                            [&](const auto& f) { return f.name == name; });
            if (field == stored.end()) {
                std::fill_n(values + i * points, points, std::nan(""));
            } else {
                std::copy(field->values.begin(), field->values.end(), values + i * points);
            }
        }
        fields[py::str(name)] = std::move(array);
    }
    return fields;
}

// {"dimension", "points", "origin", "spacing", "input", "solver_decisions", "steps": [{"step",
// "time", "solver_iterations", "relative_residual", "status", "method", "residual_history"}],
// "fields": {name: array [step, (z,) y, x]}}
// memory_limit: at most this many bytes (tests); by default the host memory available.
py::dict read(const std::string& path, bool with_fields,
              std::optional<std::vector<std::int64_t>> positions,
              std::optional<double> memory_limit) {
    framework::StoredRunFile run;
    {
        const py::gil_scoped_release unlocked;
        run = framework::read_run_file(path, with_fields, std::move(positions),
                                       {.stacked_copy = true, .limit = memory_limit});
    }
    std::vector<py::ssize_t> shape;
    for (int axis = run.dimension - 1; axis >= 0; --axis) {
        shape.push_back(static_cast<py::ssize_t>(run.points[static_cast<std::size_t>(axis)]));
    }
    py::list steps;
    for (const auto& stored : run.steps) {
        py::dict step;
        step["step"] = stored.step;
        step["time"] = stored.time;
        step["solver_iterations"] = stored.statistics.solver_iterations;
        step["relative_residual"] = stored.statistics.relative_residual;
        step["status"] = stored.statistics.status;
        step["method"] = stored.statistics.method;
        const auto& history = stored.statistics.residual_history;
        step["residual_history"] = array_of(history, {static_cast<py::ssize_t>(history.size())});
        steps.append(step);
    }
    py::dict result;
    result["dimension"] = run.dimension;
    result["points"] =
        std::vector<std::int64_t>(run.points.begin(), run.points.begin() + run.dimension);
    result["origin"] = std::vector<double>(run.origin.begin(), run.origin.begin() + run.dimension);
    result["spacing"] =
        std::vector<double>(run.spacing.begin(), run.spacing.begin() + run.dimension);
    result["input"] = run.input;
    result["solver_decisions"] = run.solver_decisions;
    result["steps"] = steps;
    result["fields"] = stacked_fields(run, std::move(shape));
    return result;
}

}  // namespace

void bind_read(py::module_& module) {
    module.def("_read", &read, py::arg("path"), py::arg("with_fields"),
               py::arg("positions") = std::nullopt, py::arg("memory_limit") = std::nullopt);
}

}  // namespace simrun::python

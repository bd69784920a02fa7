// simrun._simrun: the extension under the Python package `simrun` (python/simrun/), which
// checks and converts the arguments and calls these functions. C++ exceptions become the
// package's exception classes (simrun/errors.py) by the framework's one classification of
// failures (framework/distributed/failure_kind.hpp), which the command line's exit codes read:
//   input (exit 2)                    -> simrun.InputError (a ValueError; the place and key of
//                                        an input file's error as attributes)
//   usage (exit 2)                    -> simrun.UsageError
//   failure (exit 1): a run's failed solve (framework::SolveFailure) -> simrun.SolveFailure,
//                     any other exception pybind11's own translation (a RuntimeError for a
//                     std::exception)
#include <pybind11/pybind11.h>

#include <exception>
#include <stdexcept>
#include <string>

#include "bindings.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/distributed/failure_kind.hpp"
#include "simrun/framework/run/simulation.hpp"
#include "simrun/version.hpp"

namespace py = pybind11;

namespace {

// Raises simrun.errors.NAME(args...).
template <typename... Args>
void raise(const char* name, Args&&... args) {
    const py::object type = py::module_::import("simrun.errors").attr(name);
    const py::object error = type(std::forward<Args>(args)...);
    PyErr_SetObject(type.ptr(), error.ptr());
}

void translate(std::exception_ptr error) {
    using simrun::framework::FailureKind;
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        switch (simrun::framework::classify(e)) {
            case FailureKind::input:
                if (const auto* placed = dynamic_cast<const simrun::framework::InputError*>(&e)) {
                    raise("InputError", e.what(), placed->place(), placed->key());
                } else {
                    raise("InputError", e.what());
                }
                return;
            case FailureKind::usage:
                raise("UsageError", e.what());
                return;
            case FailureKind::failure:
                if (dynamic_cast<const simrun::framework::SolveFailure*>(&e) != nullptr) {
                    raise("SolveFailure", e.what());
                    return;
                }
                throw;  // pybind11's own translation
        }
    }
}

// pybind11 before 2.12 reads NumPy 1's array descriptors: under NumPy 2 its arrays would hold
// wrong strides (a vector returned as its first value repeated). Refused at import instead.
void check_numpy_layout() {
#if PYBIND11_VERSION_HEX < 0x020C0000
    const std::string version =
        py::module_::import("numpy").attr("__version__").cast<std::string>();
    if (version.rfind("1.", 0) != 0) {
        throw py::import_error("simrun was built with pybind11 " +
                               std::to_string(PYBIND11_VERSION_MAJOR) + "." +
                               std::to_string(PYBIND11_VERSION_MINOR) +
                               ", which predates NumPy 2's array layout, and NumPy " + version +
                               " is loaded: build simrun with pybind11 2.12 or later, or use "
                               "NumPy 1");
    }
#endif
}

}  // namespace

PYBIND11_MODULE(_simrun, module) {
    check_numpy_layout();
    module.doc() = "simrun's solver layer, runs and run files (use the package simrun)";
    module.attr("__version__") = SIMRUN_VERSION_STRING;
    py::register_exception_translator(translate);
    simrun::python::bind_solve(module);
    simrun::python::bind_run(module);
    simrun::python::bind_read(module);
}

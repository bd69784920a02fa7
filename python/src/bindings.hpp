#pragma once
// The parts of the extension simrun._simrun, each adding its functions to the module.
#include <pybind11/pybind11.h>

namespace simrun::python {

void bind_solve(pybind11::module_& module);  // _SystemSolver
void bind_run(pybind11::module_& module);    // _run, _verify
void bind_read(pybind11::module_& module);   // _read

}  // namespace simrun::python

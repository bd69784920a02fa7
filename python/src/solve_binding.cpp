// _SystemSolver: a CSR matrix from NumPy arrays analysed and its solver built once
// (front_end::SystemSolver, as `simrun solve` solves a Matrix Market system), then solves for
// vectors from NumPy, or in the GPU's memory given by address (CuPy's), the GIL released while it
// works.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bindings.hpp"
#include "front_end/solve_settings.hpp"
#include "front_end/solver_words.hpp"
#include "front_end/system_solve.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/solvers/base/enum_names.hpp"
#include "simrun/solvers/methods/gmres.hpp"

namespace py = pybind11;

namespace simrun::python {
namespace {

template <typename T>
using Vector = py::array_t<T, py::array::c_style | py::array::forcecast>;

template <typename T>
std::vector<T> copied(const Vector<T>& array) {
    return std::vector<T>(array.data(), array.data() + array.size());
}

// An integer keyword argument (checked to be an integer by the front), or InputError naming
// it, what it must be (`range`) and its value where it does not even fit in 64 bits (its
// range is checked with the other settings otherwise).
std::optional<long long> integer(const py::dict& options, const char* key, std::string_view range) {
    const py::object value = options[key];
    if (value.is_none()) return std::nullopt;
    const long long result = PyLong_AsLongLong(value.ptr());
    if (result == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        throw framework::InputError(std::string(key) + " must be " + std::string(range) + ", got " +
                                    py::str(value).cast<std::string>());
    }
    return result;
}

// simrun.solve's keyword arguments (checked for their types by the front) as the front end's
// settings, checked as the command line's options are.
front_end::SolveSettings settings_of(const py::dict& options) {
    using front_end::SettingNames;
    const auto word = [&](const char* key) { return options[key].cast<std::string>(); };
    front_end::SolveSettings settings;
    settings.solver.request =
        front_end::parse_solver_request(word("method"), word("preconditioner"), word("format"));
    if (const std::string grid = word("grid"); !grid.empty()) {
        front_end::set_grid(settings, grid, SettingNames::keywords);
    }
    settings.precision = solvers::parse_enum<solvers::Precision>(word("precision"), "precision");
    settings.backend = solvers::parse_enum<solvers::BackendChoice>(word("backend"), "backend");
    if (const auto rtol = options["rtol"].cast<std::optional<double>>()) settings.set_rtol(*rtol);
    settings.solver.method.criteria.absolute_tolerance = options["atol"].cast<double>();
    if (const auto limit =
            integer(options, "max_iterations",
                    "in [1, " + std::to_string(std::numeric_limits<std::int64_t>::max()) + "]")) {
        settings.set_max_iterations(*limit);
    }
    settings.solver.method.omega = options["omega"].cast<double>();
    const long long restart =
        *integer(options, "restart", "in [1, " + std::to_string(solvers::max_gmres_restart) + "]");
    settings.solver.method.compensated_dots = options["compensated"].cast<bool>();
    front_end::check_settings(settings, restart, SettingNames::keywords);
    return settings;
}

// A's canonical CSR arrays (the front made them so), the index structure checked again here,
// as a bad one would read outside the arrays. Indices as SciPy gives them: 32 or 64 bits.
template <typename Index>
solvers::CsrData<double> csr_from(std::int64_t rows, const Vector<Index>& indptr,
                                  const Vector<Index>& indices, const Vector<double>& data) {
    const auto nnz = static_cast<std::int64_t>(indices.size());
    if (rows < 0 || rows > solvers::max_csr_index || nnz > solvers::max_csr_index ||
        indptr.size() != rows + 1 || data.size() != nnz) {
        throw std::invalid_argument("A's CSR arrays do not describe a matrix of " +
                                    std::to_string(rows) + " rows");
    }
    solvers::CsrData<double> a;
    a.rows = a.cols = static_cast<std::int32_t>(rows);
    a.row_ptr.resize(static_cast<std::size_t>(rows + 1));
    const Index* pointer = indptr.data();
    for (std::int64_t i = 0; i <= rows; ++i) {
        const auto at = static_cast<std::int64_t>(pointer[i]);
        if (at < 0 || at > nnz || (i > 0 && at < pointer[i - 1]) || (i == 0 && at != 0) ||
            (i == rows && at != nnz)) {
            throw std::invalid_argument("A's row pointer does not rise from 0 to nnz");
        }
        a.row_ptr[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(at);
    }
    a.col.resize(static_cast<std::size_t>(nnz));
    const Index* column = indices.data();
    for (std::int64_t k = 0; k < nnz; ++k) {
        if (column[k] < 0 || column[k] >= rows) {
            throw std::invalid_argument("A's column index " + std::to_string(column[k]) +
                                        " is outside 0 .. " + std::to_string(rows - 1));
        }
        a.col[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(column[k]);
    }
    a.values = copied(data);
    return a;
}

solvers::CsrData<double> csr_of(std::int64_t rows, const py::array& indptr,
                                const py::array& indices, const Vector<double>& data) {
    if (py::isinstance<py::array_t<std::int32_t>>(indptr) &&
        py::isinstance<py::array_t<std::int32_t>>(indices)) {
        return csr_from<std::int32_t>(rows, Vector<std::int32_t>::ensure(indptr),
                                      Vector<std::int32_t>::ensure(indices), data);
    }
    return csr_from<std::int64_t>(rows, Vector<std::int64_t>::ensure(indptr),
                                  Vector<std::int64_t>::ensure(indices), data);
}

// A matrix analysed and its solver built once (front_end::SystemSolver), for vectors on the host
// or, with `device_vectors`, in the GPU's memory.
std::unique_ptr<front_end::SystemSolver> make_solver(std::int64_t rows, const py::array& indptr,
                                                     const py::array& indices,
                                                     const Vector<double>& data,
                                                     const py::dict& options, bool device_vectors) {
    const front_end::SolveSettings settings = settings_of(options);
    solvers::CsrData<double> a = csr_of(rows, indptr, indices, data);
    front_end::check_grid(settings, rows, front_end::SettingNames::keywords);
    const py::gil_scoped_release unlocked;
    return std::make_unique<front_end::SystemSolver>(std::move(a), settings, device_vectors);
}

// New values for the solver's matrix on its pattern (front_end::SystemSolver::update); returns
// the seconds it took, as {"seconds", "operator_seconds", "setup_seconds"}.
py::dict update(front_end::SystemSolver& solver, std::int64_t rows, const py::array& indptr,
                const py::array& indices, const Vector<double>& data) {
    solvers::CsrData<double> a = csr_of(rows, indptr, indices, data);
    front_end::SystemSolver::UpdateSeconds spent;
    {
        const py::gil_scoped_release unlocked;
        spent = solver.update(std::move(a));
    }
    py::dict seconds;
    seconds["seconds"] = spent.seconds;
    seconds["operator_seconds"] = spent.operator_seconds;
    seconds["setup_seconds"] = spent.setup_seconds;
    return seconds;
}

// The solve's interrupt hook: Python's signal handlers run between batches of iterations, at
// most every 50 ms (the GIL taken briefly; on the main thread only, as Python runs them). One
// that raises (Ctrl-C: KeyboardInterrupt) stops the solve; its exception stays set on this
// thread, for the caller to raise once the solve has returned (raise_if_interrupted).
class PythonSignals {
public:
    bool operator()() {
        if (raised_) return true;
        const auto now = std::chrono::steady_clock::now();
        if (now < next_) return false;
        next_ = now + interval;
        const py::gil_scoped_acquire locked;
        raised_ = PyErr_CheckSignals() != 0;
        return raised_;
    }
    // With the GIL held, after the solve.
    void raise_if_interrupted() const {
        if (raised_) throw py::error_already_set();
    }

private:
    static constexpr std::chrono::milliseconds interval{50};
    bool raised_ = false;
    std::chrono::steady_clock::time_point next_ = std::chrono::steady_clock::now() + interval;
};

// Returns (x, the report as JSON text).
py::tuple solve(const front_end::SystemSolver& solver, const Vector<double>& b,
                const Vector<double>& x0) {
    const std::vector<double> b_values = copied(b), x0_values = copied(x0);
    front_end::SystemSolution solution;
    PythonSignals signals;
    {
        const py::gil_scoped_release unlocked;
        solution = solver.solve(b_values, x0_values, std::ref(signals));
    }
    signals.raise_if_interrupted();
    Vector<double> x(static_cast<py::ssize_t>(solution.x.size()));
    std::copy(solution.x.begin(), solution.x.end(), x.mutable_data());
    return py::make_tuple(std::move(x), solution.json.dump());
}

// b and x: addresses of the solver's rows values (double, or float in single precision) in the
// GPU's memory; x holds x0 and takes the solution. Returns the report as JSON text.
std::string solve_on_device(const front_end::SystemSolver& solver, std::uintptr_t b,
                            std::uintptr_t x) {
    PythonSignals signals;
    std::string report;
    {
        const py::gil_scoped_release unlocked;
        report = solver
                     .solve_on_device(reinterpret_cast<const void*>(b), reinterpret_cast<void*>(x),
                                      std::ref(signals))
                     .json.dump();
    }
    signals.raise_if_interrupted();
    return report;
}

}  // namespace

void bind_solve(py::module_& module) {
    py::class_<front_end::SystemSolver>(module, "_SystemSolver")
        .def(py::init(&make_solver), py::arg("rows"), py::arg("indptr"), py::arg("indices"),
             py::arg("data"), py::arg("options"), py::arg("device_vectors"))
        .def("solve", &solve, py::arg("b"), py::arg("x0"))
        .def("update", &update, py::arg("rows"), py::arg("indptr"), py::arg("indices"),
             py::arg("data"))
        .def("solve_on_device", &solve_on_device, py::arg("b"), py::arg("x"))
        .def_property_readonly("rows", &front_end::SystemSolver::rows)
        .def_property_readonly("analysis_seconds", &front_end::SystemSolver::analysis_seconds)
        .def_property_readonly("setup_seconds", &front_end::SystemSolver::setup_seconds);
}

}  // namespace simrun::python

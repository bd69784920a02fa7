// _SystemSolver: a CSR matrix from NumPy arrays analysed and its solver built once
// (front_end::SystemSolver, as `simrun solve` solves a Matrix Market system), then solves for
// vectors from NumPy, or in the GPU's memory given by address (CuPy's), the GIL released while it
// works.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bindings.hpp"
#include "front_end/solve_settings.hpp"
#include "front_end/solver_words.hpp"
#include "front_end/system_solve.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/solvers/base/enum_names.hpp"
#include "simrun/solvers/matrices/first_touch.hpp"
#include "simrun/solvers/methods/gmres.hpp"

namespace py = pybind11;

namespace simrun::python {
namespace {

template <typename T>
using Vector = py::array_t<T, py::array::c_style | py::array::forcecast>;

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

// What copy_csr found in A's arrays.
struct CsrFindings {
    bool pointers_rise = true;  // from 0 to nnz, never falling
    std::int64_t outside = 0;   // the first entry whose column lies outside the matrix (nnz: none)
    bool canonical = true;      // each row's columns strictly increase
    bool finite = true;
};

// A's CSR arrays copied once (indices as SciPy gives them: 32 or 64 bits), checked as they are
// copied, a row at a time on every core (the pages first touched by the threads that fill
// them). Where the pointers do not rise from 0 to nnz nothing is copied (what is found says
// so). The sizes are checked first: std::invalid_argument.
template <typename Index>
solvers::CsrData<double> copy_csr(std::int64_t rows, const Vector<Index>& indptr,
                                  const Vector<Index>& indices, const Vector<double>& data,
                                  CsrFindings& found) {
    const auto nnz = static_cast<std::int64_t>(indices.size());
    if (rows < 0 || rows > solvers::max_csr_index || nnz > solvers::max_csr_index ||
        indptr.size() != rows + 1 || data.size() != nnz) {
        throw std::invalid_argument("A's CSR arrays do not describe a matrix of " +
                                    std::to_string(rows) + " rows");
    }
    solvers::CsrData<double> a;
    a.rows = a.cols = static_cast<std::int32_t>(rows);
    a.row_ptr.clear();
    solvers::resize_first_touched(a.row_ptr, static_cast<std::size_t>(rows + 1));
    solvers::resize_first_touched(a.col, static_cast<std::size_t>(nnz));
    solvers::resize_first_touched(a.values, static_cast<std::size_t>(nnz));
    const Index* pointer = indptr.data();
    const Index* column = indices.data();
    const double* value = data.data();
    bool rising = pointer[0] == 0 && pointer[rows] == nnz, canonical = true, finite = true;
    std::int64_t outside = nnz;
    // The pointers first: rows that overlap would be copied by two threads at once.
#pragma omp parallel for schedule(static) reduction(&& : rising)
    for (std::int64_t i = 0; i < rows; ++i) {
        const auto begin = static_cast<std::int64_t>(pointer[i]);
        const auto end = static_cast<std::int64_t>(pointer[i + 1]);
        rising = rising && begin >= 0 && begin <= end && end <= nnz;
    }
    if (!rising) {
        found = {false, nnz, canonical, finite};
        return a;
    }
    a.row_ptr[0] = 0;
#pragma omp parallel for schedule(static) reduction(&& : canonical, finite) reduction(min : outside)
    for (std::int64_t i = 0; i < rows; ++i) {
        const auto begin = static_cast<std::int64_t>(pointer[i]);
        const auto end = static_cast<std::int64_t>(pointer[i + 1]);
        a.row_ptr[static_cast<std::size_t>(i + 1)] = static_cast<std::int32_t>(end);
        for (std::int64_t k = begin; k < end; ++k) {
            if (column[k] < 0 || column[k] >= rows) outside = std::min(outside, k);
            canonical = canonical && (k == begin || column[k] > column[k - 1]);
            finite = finite && std::isfinite(value[k]);
            a.col[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(column[k]);
            a.values[static_cast<std::size_t>(k)] = value[k];
        }
    }
    found = {rising, rising ? outside : nnz, canonical, finite};
    return a;
}

// Calls f(Vector<Index> indptr, Vector<Index> indices) with the index arrays as 32-bit integers
// where both are, as 64-bit ones otherwise.
template <typename F>
decltype(auto) with_indices(const py::array& indptr, const py::array& indices, F&& f) {
    if (py::isinstance<py::array_t<std::int32_t>>(indptr) &&
        py::isinstance<py::array_t<std::int32_t>>(indices)) {
        return f(Vector<std::int32_t>::ensure(indptr), Vector<std::int32_t>::ensure(indices));
    }
    return f(Vector<std::int64_t>::ensure(indptr), Vector<std::int64_t>::ensure(indices));
}

// A's canonical CSR arrays (the front made them so), the index structure checked again here,
// as a bad one would read outside the arrays: the first bad pointer, then the first bad column,
// named.
solvers::CsrData<double> csr_of(std::int64_t rows, const py::array& indptr,
                                const py::array& indices, const Vector<double>& data) {
    return with_indices(indptr, indices, [&](const auto& pointers, const auto& columns) {
        CsrFindings found;
        solvers::CsrData<double> a = copy_csr(rows, pointers, columns, data, found);
        if (!found.pointers_rise) {
            throw std::invalid_argument("A's row pointer does not rise from 0 to nnz");
        }
        if (found.outside < a.nnz()) {
            throw std::invalid_argument("A's column index " +
                                        std::to_string(columns.data()[found.outside]) +
                                        " is outside 0 .. " + std::to_string(rows - 1));
        }
        return a;
    });
}

// A square matrix's CSR arrays copied and checked in one pass (the front's fast path): valid
// where they describe it in canonical form (pointers rising from 0 to nnz, each row's columns
// in the matrix and strictly increasing) with finite values; then the copy is kept, for the
// first solver made (which takes it) or update. Otherwise nothing is kept, and the front
// checks A in Python, which says what is wrong or makes it canonical.
struct CheckedCsr {
    std::optional<solvers::CsrData<double>> rows;

    CheckedCsr(std::int64_t n, const py::array& indptr, const py::array& indices,
               const Vector<double>& data) {
        with_indices(indptr, indices, [&](const auto& pointers, const auto& columns) {
            CsrFindings found;
            solvers::CsrData<double> a;
            {
                const py::gil_scoped_release unlocked;
                a = copy_csr(n, pointers, columns, data, found);
            }
            if (found.pointers_rise && found.outside == a.nnz() && found.canonical &&
                found.finite) {
                rows = std::move(a);
            }
        });
    }
    bool valid() const { return rows.has_value(); }
    // The copy, given to a solver (once).
    solvers::CsrData<double> take() {
        if (!rows) throw std::logic_error("_CheckedCsr: the rows were given away already");
        solvers::CsrData<double> a = std::move(*rows);
        rows.reset();
        return a;
    }
};

// A matrix analysed and its solver built once (front_end::SystemSolver), for vectors on the host
// or, with `device_vectors`, in the GPU's memory.
std::unique_ptr<front_end::SystemSolver> solver_of(solvers::CsrData<double> a,
                                                   const front_end::SolveSettings& settings,
                                                   bool device_vectors) {
    front_end::check_grid(settings, a.rows, front_end::SettingNames::keywords);
    const py::gil_scoped_release unlocked;
    return std::make_unique<front_end::SystemSolver>(std::move(a), settings, device_vectors);
}

std::unique_ptr<front_end::SystemSolver> make_solver(std::int64_t rows, const py::array& indptr,
                                                     const py::array& indices,
                                                     const Vector<double>& data,
                                                     const py::dict& options, bool device_vectors) {
    const front_end::SolveSettings settings = settings_of(options);
    return solver_of(csr_of(rows, indptr, indices, data), settings, device_vectors);
}

// The same from the rows the front checked (CheckedCsr), which the solver takes.
std::unique_ptr<front_end::SystemSolver> make_checked_solver(CheckedCsr& checked,
                                                             const py::dict& options,
                                                             bool device_vectors) {
    const front_end::SolveSettings settings = settings_of(options);
    return solver_of(checked.take(), settings, device_vectors);
}

// New values for the solver's matrix on its pattern (front_end::SystemSolver::update); returns
// the seconds it took, as {"seconds", "operator_seconds", "setup_seconds"}.
py::dict update_with(front_end::SystemSolver& solver, solvers::CsrData<double> a) {
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

py::dict update(front_end::SystemSolver& solver, std::int64_t rows, const py::array& indptr,
                const py::array& indices, const Vector<double>& data) {
    return update_with(solver, csr_of(rows, indptr, indices, data));
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

// Returns (x, the report as JSON text). b and x0 are read where they lie; x is the solver's
// vector, handed to NumPy (no copy).
py::tuple solve(const front_end::SystemSolver& solver, const Vector<double>& b,
                const Vector<double>& x0) {
    const std::span<const double> b_values(b.data(), static_cast<std::size_t>(b.size()));
    const std::span<const double> x0_values(x0.data(), static_cast<std::size_t>(x0.size()));
    front_end::SystemSolution solution;
    PythonSignals signals;
    {
        const py::gil_scoped_release unlocked;
        solution = solver.solve(b_values, x0_values, std::ref(signals));
    }
    signals.raise_if_interrupted();
    auto* values = new std::vector<double>(std::move(solution.x));
    const py::capsule owner(values,
                            [](void* kept) { delete static_cast<std::vector<double>*>(kept); });
    Vector<double> x(static_cast<py::ssize_t>(values->size()), values->data(), owner);
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
    py::class_<CheckedCsr>(module, "_CheckedCsr")
        .def(py::init<std::int64_t, const py::array&, const py::array&, const Vector<double>&>(),
             py::arg("rows"), py::arg("indptr"), py::arg("indices"), py::arg("data"))
        .def_property_readonly("valid", &CheckedCsr::valid);
    py::class_<front_end::SystemSolver>(module, "_SystemSolver")
        .def(py::init(&make_solver), py::arg("rows"), py::arg("indptr"), py::arg("indices"),
             py::arg("data"), py::arg("options"), py::arg("device_vectors"))
        .def(py::init(&make_checked_solver), py::arg("checked"), py::arg("options"),
             py::arg("device_vectors"))
        .def("solve", &solve, py::arg("b"), py::arg("x0"))
        .def("update", &update, py::arg("rows"), py::arg("indptr"), py::arg("indices"),
             py::arg("data"))
        .def(
            "update_checked",
            [](front_end::SystemSolver& solver, CheckedCsr& checked) {
                return update_with(solver, checked.take());
            },
            py::arg("checked"))
        .def("solve_on_device", &solve_on_device, py::arg("b"), py::arg("x"))
        .def_property_readonly("broken", &front_end::SystemSolver::broken)
        .def_property_readonly("rows", &front_end::SystemSolver::rows)
        .def_property_readonly("analysis_seconds", &front_end::SystemSolver::analysis_seconds)
        .def_property_readonly("setup_seconds", &front_end::SystemSolver::setup_seconds);
}

}  // namespace simrun::python

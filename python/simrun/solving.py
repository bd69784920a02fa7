"""simrun.solve: a sparse system solved by simrun's solver layer, as `simrun solve` does."""

import json
import math
import numbers

import numpy as np

from . import _simrun
from .errors import InputError


def _is_cupy(value):
    return type(value).__module__.split(".")[0] in ("cupy", "cupyx")


def _check_structure(A):
    """Refuses a SciPy matrix whose index arrays do not describe it (changed by hand after it
    was made), before SciPy's own routines, which trust them, read them: InputError naming
    what is wrong."""
    kind = getattr(A, "format", type(A).__name__)
    try:
        if kind in ("csr", "csc"):
            # The indices' range in simrun's words (SciPy's name the axis in some versions only).
            axis, size = ("column", A.shape[1]) if kind == "csr" else ("row", A.shape[0])
            indices = np.asarray(A.indices)
            if indices.ndim == 1 and indices.size and (indices.min() < 0 or
                                                       indices.max() >= size):
                bad = indices.min() if indices.min() < 0 else indices.max()
                raise ValueError(f"{axis} index {int(bad)} lies outside 0 .. {size - 1}")
        if hasattr(A, "check_format"):  # CSR, CSC, BSR: pointers, indices and their ranges
            A.check_format(full_check=True)
        elif kind == "coo":
            rows, cols = A.shape
            row, col = np.asarray(A.row), np.asarray(A.col)
            if not row.shape == col.shape == np.shape(A.data) or row.ndim != 1:
                raise ValueError("row, col and data differ in length")
            if row.size and (row.min() < 0 or row.max() >= rows or col.min() < 0 or
                             col.max() >= cols):
                raise ValueError(f"an index lies outside the {rows} x {cols} matrix")
    except ValueError as error:
        raise InputError(f"A's {str(kind).upper()} arrays do not describe a matrix: {error}") \
            from None


_MAX_CSR_INDEX = 2**31 - 1  # the extension's CSR holds 32-bit indices


def _fast_csr(A):
    """A's arrays and their checked copy, (rows, indptr, indices, data), _CheckedCsr, where A is
    a square SciPy CSR matrix of float64 values and indices of one type, which one parallel
    pass of the extension finds canonical and finite as it copies them; otherwise None (the
    checks in Python then say what is wrong, or make A canonical)."""
    if getattr(A, "format", None) != "csr" or not all(
            hasattr(A, name) for name in ("indptr", "indices", "data", "shape")):
        return None
    indptr, indices, data = A.indptr, A.indices, A.data
    arrays = (indptr, indices, data)
    if (not all(isinstance(v, np.ndarray) and v.ndim == 1 and v.flags.c_contiguous and
                v.dtype.isnative for v in arrays) or
            data.dtype != np.float64 or indices.dtype != indptr.dtype or
            indptr.dtype not in (np.int32, np.int64)):
        return None
    shape = A.shape
    if len(shape) != 2 or shape[0] != shape[1] or indptr.size != shape[0] + 1 or \
            indices.size != data.size or max(shape[0], data.size) > _MAX_CSR_INDEX:
        return None
    checked = _simrun._CheckedCsr(shape[0], indptr, indices, data)
    return ((shape[0], indptr, indices, data), checked) if checked.valid else None


def _csr(A, checked=False):
    """A as canonical CSR arrays on the host: (rows, indptr, indices, data); with `checked`,
    also their copy checked by the extension (a _CheckedCsr), or None where A took the checks
    in Python."""
    if _is_cupy(A) and hasattr(A, "get"):
        # A CuPy sparse matrix: simrun analyses a matrix and converts it to its format on the
        # host, so the matrix (not b, x0 or x) is copied there once.
        A = A.get()
    if not hasattr(A, "tocsr"):
        raise TypeError("A must be a SciPy sparse matrix or have tocsr(); got "
                        f"{type(A).__name__}")
    fast = _fast_csr(A)
    if fast is not None:
        return fast if checked else fast[0]
    arrays = _checked_in_python(A)
    return (arrays, None) if checked else arrays


def _checked_in_python(A):
    """_csr's checks and canonical form in Python (SciPy's own checks)."""
    _check_structure(A)
    csr = A.tocsr()
    if len(csr.shape) != 2 or csr.shape[0] != csr.shape[1]:
        shape = " x ".join(str(n) for n in csr.shape)
        raise InputError(f"the matrix is {shape}; a linear system needs a square matrix")
    if np.iscomplexobj(csr.data):
        raise TypeError("A has complex values; simrun solves real systems")
    if not csr.has_canonical_format:
        csr = csr.copy()
        csr.sum_duplicates()  # sorted indices, duplicates summed
    data = np.asarray(csr.data, dtype=np.float64)
    finite = np.isfinite(data)
    if not finite.all():
        row = int(np.searchsorted(csr.indptr, int(np.argmin(finite)), side="right")) - 1
        raise InputError(f"A has a value that is not finite in row {row}")
    # 32-bit indices pass as they are (SciPy's own for all but huge matrices).
    index = np.int32 if csr.indptr.dtype == np.int32 and csr.indices.dtype == np.int32 \
        else np.int64
    return (csr.shape[0], np.ascontiguousarray(csr.indptr, dtype=index),
            np.ascontiguousarray(csr.indices, dtype=index), data)


def _vector(v, n, what, name):
    """v as a float64 vector of n entries (shape (n,) or (n, 1)), checked finite."""
    if _is_cupy(v):
        v = v.get()
    if isinstance(v, (str, bytes)) or not hasattr(v, "__len__") and not hasattr(v, "__array__"):
        raise TypeError(f"{name} must be an array of {n} numbers; got {type(v).__name__}")
    array = np.asarray(v)
    if np.iscomplexobj(array):
        raise TypeError(f"{name} has complex values; simrun solves real systems")
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers; got an array of {array.dtype}")
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        raise InputError(f"{what} is shaped {array.shape}; it must be a vector of {n} entries")
    if array.shape[0] != n:
        raise InputError(f"{what} has {array.shape[0]} entries, the matrix has {n} rows")
    array = np.ascontiguousarray(array, dtype=np.float64)
    # A finite sum has finite terms (one pass, nothing allocated); a sum that is not (a value
    # that is not finite, or an overflow) has each entry checked.
    if not math.isfinite(float(np.add.reduce(array))):
        finite = np.isfinite(array)
        if not finite.all():
            raise InputError(f"{what} has a value that is not finite at index "
                             f"{int(np.argmin(finite))}")
    return array


def _word(value, name):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string; got {type(value).__name__}")
    return value


def _grid(grid):
    """grid=(nx, ny[, nz]) or "NXxNY[xNZ]" as the command line's text."""
    if grid is None:
        return ""
    if isinstance(grid, str):
        return grid
    if (isinstance(grid, (tuple, list)) and
            all(isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in grid)):
        return "x".join(str(int(n)) for n in grid)
    raise TypeError(f"grid must be (nx, ny) or (nx, ny, nz), or 'NXxNY[xNZ]'; got {grid!r}")


def _number(value, name, kind, optional=False):
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, kind):
        raise TypeError(f"{name} must be a number; got {type(value).__name__}")
    return value


def _options(method, preconditioner, format, rtol, atol, max_iterations, backend, precision,
             grid, omega, restart, compensated):
    return {
        "method": _word(method, "method"),
        "preconditioner": _word(preconditioner, "preconditioner"),
        "format": _word(format, "format"), "backend": _word(backend, "backend"),
        "precision": _word(precision, "precision"), "grid": _grid(grid),
        "rtol": _number(rtol, "rtol", numbers.Real, optional=True),
        "atol": _number(atol, "atol", numbers.Real),
        "max_iterations": _number(max_iterations, "max_iterations", numbers.Integral,
                                  optional=True),
        "omega": _number(omega, "omega", numbers.Real),
        "restart": _number(restart, "restart", numbers.Integral),
        "compensated": bool(compensated)}


class Solver:
    """A matrix analysed and its solver built once, for many right-hand sides:

        solver = simrun.Solver(A, grid=(m, m))
        for b in right_hand_sides:
            x, info = solver.solve(b)

    The arguments are simrun.solve's. The matrix is analysed, and the operator and the
    preconditioner built, at the first solve with vectors of a kind (NumPy, or CuPy on the GPU);
    that solve's info counts them (analysis_seconds, setup_seconds), later ones do not. A later
    change to A is not seen: give the new values to update() (the same pattern), or make a new
    Solver for another matrix.
    """

    def __init__(self, A, *, method="auto", preconditioner="auto", format="auto", rtol=None,
                 atol=0.0, max_iterations=None, backend="auto", precision="double", grid=None,
                 omega=1.0, restart=30, compensated=False):
        self._options = _options(method, preconditioner, format, rtol, atol, max_iterations,
                                 backend, precision, grid, omega, restart, compensated)
        self._matrix = A
        # The arrays, and the extension's checked copy of them until a solver takes it.
        self._csr, self._checked = _csr(A, checked=True)
        self._built = {}  # device_vectors -> simrun._simrun._SystemSolver
        self._matrix_on_device = None  # for the true residual of solutions on the GPU

    @property
    def rows(self):
        return self._csr[0]

    def _solver(self, device_vectors):
        """(the extension's solver for these vectors, whether it was made now)."""
        if device_vectors in self._built:
            return self._built[device_vectors], False
        if self._checked is not None:
            checked, self._checked = self._checked, None
            solver = _simrun._SystemSolver(checked, self._options, device_vectors)
        else:
            solver = _simrun._SystemSolver(*self._csr, self._options, device_vectors)
        self._built[device_vectors] = solver
        return solver, True

    @staticmethod
    def _info(text, solver, made_now):
        info = json.loads(text)
        if made_now:
            info["analysis_seconds"] = solver.analysis_seconds
            info["setup_seconds"] += solver.setup_seconds
        return info

    def update(self, A):
        """New values for A on the same pattern (its shape and the places of its entries), as
        a time step of another size gives (I/dt - L): the analysis and the plan stay (method,
        preconditioner, format), and the solvers made so far take the values, a multigrid
        hierarchy made again as it was decided (nothing measured again). The new values are
        analysed for what the plan rests on (symmetry, a positive diagonal, rows summing to
        zero, empty rows). Returns the seconds it took, summed over the solvers made so far
        (one for NumPy vectors, one for CuPy's): {"seconds", "operator_seconds" (A in the
        solver's format, uploaded), "setup_seconds" (its preconditioner and method)}.
        InputError where A is not on the pattern or changes what the plan rests on (the Solver
        unchanged); where a solver's set-up fails on the new values, the Solver keeps the old
        ones and makes its solvers again at the next solve (from the arrays of the A it was
        given last, which it reads where they lie: changed in place since, they are analysed
        and planned for anew)."""
        csr, checked = _csr(A, checked=True)
        rows, indptr, indices, _ = self._csr
        if csr[0] != rows or not (np.array_equal(csr[1], indptr) and
                                  np.array_equal(csr[2], indices)):
            raise InputError(f"A's new values are not on the pattern the Solver was made with "
                             f"({rows} rows, {indices.size} entries at the same places): make "
                             f"a new Solver for another matrix")
        seconds = {"seconds": 0.0, "operator_seconds": 0.0, "setup_seconds": 0.0}
        updated = []
        try:
            for solver in self._built.values():
                if checked is not None:  # the checked copy, to the first solver
                    spent, checked = solver.update_checked(checked), None
                else:
                    spent = solver.update(*csr)
                updated.append(solver)
                for key, value in spent.items():
                    seconds[key] += value
        except Exception:
            # The solvers that took the new values, or failed inside with them, are made again
            # from the old values at the next solve; one that refused them keeps the old ones.
            self._built = {kind: solver for kind, solver in self._built.items()
                           if not solver.broken and all(solver is not u for u in updated)}
            raise
        self._matrix, self._csr, self._matrix_on_device = A, csr, None
        if not self._built:
            self._checked = checked
        return seconds

    def solve(self, b, x0=None):
        """Solves A x = b from x0 (zeros by default). Returns (x, info), as simrun.solve."""
        if _is_cupy(b) or (x0 is not None and _is_cupy(x0)):
            from .on_device import solve_on_device
            return solve_on_device(self, b, x0)
        rows = self.rows
        b = _vector(b, rows, "the right-hand side", "b")
        x0 = np.zeros(rows) if x0 is None else _vector(x0, rows, "the initial guess", "x0")
        solver, made_now = self._solver(False)
        x, text = solver.solve(b, x0)
        return x, self._info(text, solver, made_now)


def solve(A, b, x0=None, *, method="auto", preconditioner="auto", format="auto", rtol=None,
          atol=0.0, max_iterations=None, backend="auto", precision="double", grid=None,
          omega=1.0, restart=30, compensated=False):
    """Solves A x = b with simrun's solver layer. Returns (x, info).

    A: a SciPy sparse matrix (CSR, COO, DIA...) or anything with tocsr(), square and real; or
    a CuPy sparse matrix (analysed and converted to simrun's format on the host: the matrix
    alone is copied there, once).
    b, x0: vectors of A's size (x0 defaults to zeros): NumPy arrays, or CuPy arrays, which the
    GPU reads and writes where they lie (no copy through the host; x is then a CuPy array).
    method: auto|jacobi|sor|cg|pcg|bicg|bicgstab|gmres; preconditioner: auto|none|jacobi|
    ssor|ilu0|multigrid; format: auto|dia|stencil|ell|csr|coo (the words of `simrun solve`).
    rtol: relative tolerance ||r|| / ||b|| (default 1e-8, 1e-6 in float); atol: absolute
    tolerance; max_iterations: default twice the size within [1000, 10000].
    backend: auto|cpu|cuda; precision: double|float.
    grid: (nx, ny[, nz]) when the rows are the points of that box, x fastest (so multigrid
    applies).

    info holds the keys of `simrun solve --json`: method, preconditioner, format, backend,
    reason, status, iterations, relative_residual (true ||b - A x|| / ||b||, recomputed),
    residual_history, attempts, seconds... A solve that does not converge is reported in
    info["status"], never raised. The GIL is released while the system is solved. For many
    right-hand sides with one matrix, simrun.Solver does the analysis and set-up once.
    """
    return Solver(A, method=method, preconditioner=preconditioner, format=format, rtol=rtol,
                  atol=atol, max_iterations=max_iterations, backend=backend,
                  precision=precision, grid=grid, omega=omega, restart=restart,
                  compensated=compensated).solve(b, x0)

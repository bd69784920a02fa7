"""simrun.solve on CuPy vectors: b, x0 and x stay in the GPU's memory, read and written there
by simrun's CUDA back-end (no copy through the host); the matrix is analysed on the host."""

import math

from .errors import InputError


def _device_vector(v, n, dtype, what, cupy):
    if not isinstance(v, cupy.ndarray):
        raise TypeError(f"{what} must be a CuPy array when the other vector is one; got "
                        f"{type(v).__name__}")
    if v.dtype.kind not in "biuf":
        raise TypeError(f"{what} must hold real numbers; got an array of {v.dtype}")
    if v.ndim == 2 and v.shape[1] == 1:
        v = v[:, 0]
    if v.ndim != 1 or v.shape[0] != n:
        raise InputError(f"{what} has {v.size} entries, the matrix has {n} rows")
    if v.device.id != 0:
        raise InputError(f"{what} is on GPU {v.device.id}; simrun solves on GPU 0")
    return cupy.ascontiguousarray(v, dtype=dtype)  # a copy on the device only where needed


def solve_on_device(solver, b, x0):
    """simrun.Solver.solve for CuPy vectors."""
    import cupy
    import cupyx.scipy.sparse as cusparse

    rows, indptr, indices, data = solver._csr
    dtype = cupy.float32 if solver._options["precision"] == "float" else cupy.float64
    b = _device_vector(b, rows, dtype, "the right-hand side", cupy)
    if not bool(cupy.isfinite(b).all()):
        raise InputError("the right-hand side has a value that is not finite")
    if x0 is None:
        x = cupy.zeros(rows, dtype=dtype)
    else:
        x = _device_vector(x0, rows, dtype, "the initial guess", cupy).copy()  # x0 unchanged
        if not bool(cupy.isfinite(x).all()):
            raise InputError("the initial guess has a value that is not finite")
    device_solver, made_now = solver._solver(True)
    cupy.cuda.get_current_stream().synchronize()  # CuPy's work on b and x is done
    info = solver._info(device_solver.solve_on_device(b.data.ptr, x.data.ptr), device_solver,
                        made_now)
    # The true residual, where x lies: b - A x with cuSPARSE (through CuPy), in double.
    if solver._matrix_on_device is None:
        a = solver._matrix
        solver._matrix_on_device = (a if cusparse.issparse(a) else cusparse.csr_matrix(
            (cupy.asarray(data), cupy.asarray(indices), cupy.asarray(indptr)),
            shape=(rows, rows))).astype(cupy.float64)
    b64 = b.astype(cupy.float64, copy=False)  # a copy only in single precision
    r = b64 - solver._matrix_on_device @ x.astype(cupy.float64, copy=False)
    norm_b = _norm(b64, cupy)
    norm_r = _norm(r, cupy)
    info["relative_residual"] = norm_r / norm_b if norm_b > 0 else norm_r
    if not bool(cupy.isfinite(x).all()) and info["status"] == "converged":
        _demote(info, "non_finite")
    elif info["status"] == "converged" and not _meets_tolerance(solver._options, norm_r, norm_b):
        # As on the host: the solver's verdict, not confirmed by b - A x in double.
        _demote(info, "stagnated")
    return x, info


def _norm(v, cupy):
    """||v|| with no square leaving the range: v scaled by its largest magnitude first."""
    largest = float(cupy.abs(v).max()) if v.size else 0.0
    if largest == 0.0 or not math.isfinite(largest):
        return largest
    return largest * float(cupy.linalg.norm(v / largest))


def _meets_tolerance(options, norm_r, norm_b):
    """||b - A x|| within rtol ||b|| or atol (the solve's defaults where not given)."""
    rtol = options["rtol"]
    if rtol is None:
        rtol = 1e-6 if options["precision"] == "float" else 1e-8
    return norm_r <= rtol * norm_b or norm_r <= options["atol"]


def _demote(info, status):
    info["status"] = status
    if info.get("attempts"):
        info["attempts"][-1]["status"] = status

"""simrun.solve on CuPy arrays (GPU machine): b, x0 and x never pass through the host, and the
results are those of the same solve from NumPy arrays."""

import numpy as np
import pytest
import scipy.sparse as sp

import simrun
from conftest import poisson_2d

cupy = pytest.importorskip("cupy", reason="CuPy is not installed (the GPU machine has it)")
cusparse = pytest.importorskip("cupyx.scipy.sparse")

try:
    simrun.solve(sp.identity(2, format="csr"), np.ones(2), backend="cuda")
except simrun.UsageError as error:
    pytest.skip(f"no CUDA back-end here: {error}", allow_module_level=True)


@pytest.mark.parametrize("precision", ["double", "float"])
def test_cupy_vectors_stay_on_the_device_and_match_numpy(precision):
    a = poisson_2d(64)
    rng = np.random.default_rng(5)
    b = rng.standard_normal(a.shape[0])
    x0 = rng.standard_normal(a.shape[0])
    x_host, info_host = simrun.solve(a, b, x0=x0, backend="cuda", precision=precision)

    dtype = cupy.float32 if precision == "float" else cupy.float64
    b_dev, x0_dev = cupy.asarray(b, dtype=dtype), cupy.asarray(x0, dtype=dtype)
    x0_before = x0_dev.copy()
    pool = cupy.get_default_memory_pool()
    get = cupy.ndarray.get

    def get_small(array, *args, **kwargs):  # a reduction's value or CuPy's own bounds, no vector
        assert array.size < a.shape[0] // 2, f"{array.size} values were copied to the host"
        return get(array, *args, **kwargs)

    def refuse(*args, **kwargs):
        raise AssertionError("a CuPy vector was copied to the host")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cupy.ndarray, "get", get_small)
        patch.setattr(cupy, "asnumpy", refuse)
        x_dev, info = simrun.solve(a, b_dev, x0=x0_dev, backend="auto", precision=precision)
    assert isinstance(x_dev, cupy.ndarray) and x_dev.dtype == dtype
    assert pool.used_bytes() > 0  # x lives in CuPy's pool
    assert cupy.array_equal(x0_dev, x0_before)  # x0 is not overwritten
    assert info["backend"] == "cuda"
    assert (info["method"], info["preconditioner"], info["status"], info["iterations"]) == \
        (info_host["method"], info_host["preconditioner"], info_host["status"],
         info_host["iterations"])
    # The same kernels on the same values: the same iterates, to the vectors' last bits.
    np.testing.assert_allclose(cupy.asnumpy(x_dev), x_host, rtol=0,
                               atol=1e-12 if precision == "double" else 1e-5)
    assert info["relative_residual"] == pytest.approx(info_host["relative_residual"], rel=1e-3)


def test_a_cupy_sparse_matrix_gives_the_same_solution():
    a = poisson_2d(48)
    b = cupy.ones(a.shape[0])
    x_scipy, _ = simrun.solve(a, b)
    x_cupy, info = simrun.solve(cusparse.csr_matrix(a), b)
    assert cupy.array_equal(x_scipy, x_cupy)
    assert info["relative_residual"] <= 1e-8


def test_cupy_vectors_need_the_gpu_back_end():
    a = poisson_2d(8)
    with pytest.raises(ValueError, match="backend must be auto or cuda"):
        simrun.solve(a, cupy.ones(64), backend="cpu")
    with pytest.raises(simrun.InputError, match="has 10 entries, the matrix has 64 rows"):
        simrun.solve(a, cupy.ones(10))
    with pytest.raises(simrun.InputError, match="not finite"):
        simrun.solve(a, cupy.full(64, cupy.nan))


def test_a_solver_serves_numpy_and_cupy_vectors_alike():
    a = poisson_2d(96)
    solver = simrun.Solver(a, grid=(96, 96), backend="cuda")
    b = np.random.default_rng(3).standard_normal(a.shape[0])
    x_host, info_host = solver.solve(b)
    for k in range(2):
        x_dev, info = solver.solve(cupy.asarray(b))
        assert info["iterations"] == info_host["iterations"]
        np.testing.assert_allclose(cupy.asnumpy(x_dev), x_host, rtol=0, atol=1e-12)
        assert (info["analysis_seconds"] > 0) == (k == 0)  # its own solver, made once

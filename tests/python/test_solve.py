"""simrun.solve against SciPy's direct solver, the command line's report, and bad input."""

import os
import threading
import time

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import simrun
from conftest import poisson_2d, simrun_json

REPORT_KEYS = {"method", "preconditioner", "format", "backend", "reason", "status", "iterations",
               "relative_residual", "residual_history", "attempts", "seconds"}


def random_spd(n, seed):
    """A sparse SPD matrix: B B^T + n I for a random sparse B (about 5 entries per row)."""
    rng = np.random.default_rng(seed)
    b = sp.random(n, n, density=5.0 / n, random_state=rng)
    return (b @ b.T + n * sp.identity(n)).tocsr()


def random_nonsymmetric(n, seed):
    """A sparse nonsymmetric matrix with a dominant diagonal: random entries, and a diagonal
    of 1 + the row's absolute sum."""
    rng = np.random.default_rng(seed)
    off = sp.random(n, n, density=6.0 / n, random_state=rng, data_rvs=lambda k: rng.uniform(-1, 1, k))
    off = off - sp.diags(off.diagonal())
    return (off + sp.diags(1.0 + np.abs(off).sum(axis=1).A1)).tocsr()


def error_bound(a, rtol):
    """||x - x*|| / ||x*|| <= cond_2(A) ||r|| / ||b||: the tolerance times A's condition."""
    return np.linalg.cond(a.toarray()) * rtol


@pytest.mark.parametrize("seed", [1, 2])
def test_random_spd_system_matches_spsolve(seed):
    a = random_spd(300, seed)
    b = np.random.default_rng(seed + 10).standard_normal(300)
    x, info = simrun.solve(a, b, rtol=1e-10, backend="cpu")
    reference = spla.spsolve(a.tocsc(), b)
    assert info["status"] == "converged"
    assert info["method"] == "cg"  # symmetric positive diagonal: CG is the first choice
    assert REPORT_KEYS <= info.keys()
    assert info["relative_residual"] <= 1e-10
    assert np.linalg.norm(x - reference) <= error_bound(a, 1e-10) * np.linalg.norm(reference)
    assert len(info["residual_history"]) == info["iterations"] + 1


@pytest.mark.parametrize("seed", [3, 4])
def test_random_nonsymmetric_system_matches_spsolve(seed):
    a = random_nonsymmetric(400, seed)
    b = np.random.default_rng(seed).standard_normal(400)
    x, info = simrun.solve(a, b, rtol=1e-10, backend="cpu")
    reference = spla.spsolve(a.tocsc(), b)
    assert info["status"] == "converged"
    assert info["method"] in ("bicgstab", "gmres", "bicg")
    assert np.linalg.norm(x - reference) <= error_bound(a, 1e-10) * np.linalg.norm(reference)


def test_every_scipy_form_gives_the_same_bits():
    a = poisson_2d(20)
    b = np.ones(a.shape[0])
    x_csr, info = simrun.solve(a, b, backend="cpu")
    for form in (a.tocoo(), a.todia(), a.tocsc(), sp.csr_array(a)):
        x, other = simrun.solve(form, b, backend="cpu")
        assert np.array_equal(x, x_csr), type(form).__name__
        assert other["iterations"] == info["iterations"]
    # Duplicates summed and indices unsorted, as SciPy's canonical form does.
    coo = a.tocoo()
    doubled = sp.coo_matrix((np.concatenate([coo.data / 2, coo.data / 2]),
                             (np.concatenate([coo.row, coo.row]),
                              np.concatenate([coo.col, coo.col]))), shape=a.shape)
    x, _ = simrun.solve(doubled, b, backend="cpu")
    np.testing.assert_allclose(x, x_csr, rtol=1e-12, atol=0)


def test_the_report_is_the_command_lines(tmp_path):
    a = random_spd(200, 7)
    b = np.random.default_rng(8).standard_normal(200)
    scipy.io.mmwrite(str(tmp_path / "a.mtx"), a, precision=17)
    scipy.io.mmwrite(str(tmp_path / "b.mtx"), b.reshape(-1, 1), precision=17)
    command = simrun_json("solve", "a.mtx", "--rhs", "b.mtx", "--backend", "cpu",
                          cwd=tmp_path)
    x, info = simrun.solve(a, b, backend="cpu")
    for key in ("method", "preconditioner", "format", "backend", "reason", "status",
                "iterations", "format_reason", "residual_history", "attempts"):
        assert info[key] == command[key], key
    assert info["relative_residual"] == pytest.approx(command["relative_residual"], rel=1e-6)


def test_named_method_preconditioner_format_and_precision():
    a = poisson_2d(16)
    b = np.ones(a.shape[0])
    x, info = simrun.solve(a, b, method="pcg", preconditioner="ssor", format="csr",
                           precision="float", rtol=1e-5, backend="cpu")
    assert (info["method"], info["preconditioner"], info["format"], info["precision"]) == \
        ("cg", "ssor", "csr", "float")
    assert info["status"] == "converged" and info["relative_residual"] <= 1.5e-5
    # A box of 128^2: CG + Jacobi would take more iterations than 10 multigrid cycles cost.
    a = poisson_2d(128)
    x, info = simrun.solve(a, np.ones(a.shape[0]), grid=(128, 128), backend="cpu")
    assert info["preconditioner"] == "multigrid" and "multigrid" in info
    assert info["status"] == "converged" and info["relative_residual"] <= 1e-8
    assert info["iterations"] <= 20


def test_a_solver_is_set_up_once_for_many_right_hand_sides():
    a = poisson_2d(100)
    solver = simrun.Solver(a, grid=(100, 100), backend="cpu")
    assert solver.rows == 10000
    rng = np.random.default_rng(11)
    for k in range(3):
        b = rng.standard_normal(a.shape[0])
        x, info = solver.solve(b)
        x_once, info_once = simrun.solve(a, b, grid=(100, 100), backend="cpu")
        # The same solver on the same values: the same iterates, to the last bit.
        np.testing.assert_array_equal(x, x_once)
        assert (info["preconditioner"], info["iterations"]) == \
            (info_once["preconditioner"], info_once["iterations"])
        assert info["relative_residual"] <= 1e-8
        # The analysis is paid (and reported) by the first solve only.
        assert (info["analysis_seconds"] > 0) == (k == 0)
    with pytest.raises(simrun.InputError, match="the right-hand side has 3 entries"):
        solver.solve(np.ones(3))


def test_a_solver_takes_new_values_on_its_pattern():
    # A time step of another size: I + dt A on A's pattern (A has its diagonal).
    m = 64
    a = poisson_2d(m)
    eye = sp.identity(a.shape[0], format="csr")
    before, after = (eye + 1e-3 * a).tocsr(), (eye + 1e-1 * a).tocsr()
    b = np.random.default_rng(5).standard_normal(a.shape[0])
    # (Multigrid named: the refresh of its hierarchy is what is tested.)
    solver = simrun.Solver(before, grid=(m, m), backend="cpu", rtol=1e-10, method="cg",
                           preconditioner="multigrid")
    _, first = solver.solve(b)
    assert first["preconditioner"] == "multigrid"
    seconds = solver.update(after)
    assert seconds["seconds"] >= seconds["operator_seconds"] + seconds["setup_seconds"] > 0
    x, info = solver.solve(b)
    # The plan stays; the solve is a new solver's with that plan on the new values, to the bit.
    assert (info["method"], info["preconditioner"], info["format"]) == \
        (first["method"], first["preconditioner"], first["format"])
    x_new, info_new = simrun.solve(after, b, grid=(m, m), backend="cpu", rtol=1e-10,
                                   method=first["method"], preconditioner=first["preconditioner"],
                                   format=first["format"])
    np.testing.assert_array_equal(x, x_new)
    assert info["iterations"] == info_new["iterations"]
    exact = spla.spsolve(after.tocsc(), b)
    assert np.linalg.norm(x - exact) <= error_bound(after, 1e-10) * np.linalg.norm(exact)
    # Another pattern is refused, and the solver keeps its values.
    with pytest.raises(simrun.InputError, match="not on the pattern"):
        solver.update(poisson_2d(32))
    with pytest.raises(simrun.InputError, match="not on the pattern"):
        solver.update((after + sp.csr_matrix(([1.0], ([0], [5])), shape=after.shape)).tocsr())
    # Values on the pattern that change what the plan rests on (symmetry, for CG) are refused.
    skew = after.copy()
    skew.data = skew.data * (1.0 + 0.1 * (skew.indices > np.repeat(np.arange(m * m),
                                                                  np.diff(skew.indptr))))
    with pytest.raises(simrun.InputError, match="symmetric -> not symmetric"):
        solver.update(skew)
    x_again, _ = solver.solve(b)
    np.testing.assert_array_equal(x_again, x)


def test_new_values_that_the_stencil_format_cannot_hold_are_refused():
    # Stencil storage holds constant coefficients: a varying diagonal on the same pattern
    # (still symmetric, positive, no zero row sums) is refused, and the solver goes on.
    a = poisson_2d(32)
    b = np.ones(a.shape[0])
    solver = simrun.Solver(a, grid=(32, 32), backend="cpu", format="stencil")
    x, info = solver.solve(b)
    assert info["format"] == "stencil"
    with pytest.raises(simrun.InputError, match="constant coefficients"):
        solver.update((a + sp.diags(np.linspace(1, 2, a.shape[0]))).tocsr())
    x_again, _ = solver.solve(b)
    np.testing.assert_array_equal(x_again, x)


def test_a_float_solver_refuses_new_values_beyond_single_precision():
    a = poisson_2d(16)
    b = np.ones(a.shape[0])
    solver = simrun.Solver(a, backend="cpu", precision="float")
    x, info = solver.solve(b)
    # Finite in double, but not in float at the scale the first values set.
    with pytest.raises(simrun.InputError, match="do not fit single precision"):
        solver.update((1e39 * a).tocsr())
    # The old values stay: the same solve.
    x_again, info_again = solver.solve(b)
    assert info_again["status"] == info["status"]
    np.testing.assert_array_equal(x_again, x)


def test_initial_guess_is_used():
    a = poisson_2d(12)
    b = np.ones(a.shape[0])
    exact = spla.spsolve(a.tocsc(), b)
    x, info = simrun.solve(a, b, x0=exact, backend="cpu")
    assert info["iterations"] == 0 and info["status"] == "converged"
    np.testing.assert_array_equal(x, exact)


# Every outcome a solve can have is reported in info["status"], never raised.
def test_converged_and_max_iterations():
    a = poisson_2d(30)
    b = np.ones(a.shape[0])
    _, info = simrun.solve(a, b, method="cg", max_iterations=3, backend="cpu")
    assert info["status"] == "max_iterations" and info["iterations"] == 3
    _, info = simrun.solve(a, b, method="cg", backend="cpu")
    assert info["status"] == "converged"


def test_stagnated_below_the_precisions_reach():
    # float's unit roundoff is 6e-8: CG on a 40^2 Laplacian (condition ~700) cannot confirm a
    # true residual of 1e-7 (the command line's test shows the same on nos3).
    a = poisson_2d(40)
    _, info = simrun.solve(a, np.ones(a.shape[0]), method="cg", preconditioner="none",
                           precision="float", rtol=1e-7, backend="cpu")
    assert info["status"] == "stagnated"
    assert info["relative_residual"] > 1e-7


def test_structurally_singular_is_named():
    # Only entry (0, 0): rows 1 and 2 are empty.
    a = sp.csr_matrix(([2.0], ([0], [0])), shape=(3, 3))
    x, info = simrun.solve(a, np.array([2.0, 0.0, 0.0]), backend="cpu")
    assert info["status"] == "singular"
    assert "2 empty rows (the first: row 1)" in info["singular"]


@pytest.mark.parametrize("name, matrix, b, method, status", [
    # p^T A p = 1 - 2 < 0 at CG's first step with p = b = (1, 1).
    ("indefinite", [[1.0, 0.0], [0.0, -2.0]], [1.0, 1.0], "cg", "indefinite"),
    # Jacobi's iteration matrix -D^-1 (A - D) has spectral radius 2.
    ("no dominance", [[1.0, 2.0], [2.0, 1.0]], [1.0, 1.0], "jacobi", "diverged"),
    # BiCGStab: A r0 = (0, 1) is orthogonal to the shadow residual r0 = (1, 0).
    ("a swap", [[0.0, 1.0], [1.0, 0.0]], [1.0, 0.0], "bicgstab", "breakdown"),
])
def test_failures_are_reported_not_raised(name, matrix, b, method, status):
    x, info = simrun.solve(sp.csr_matrix(np.array(matrix)), np.array(b), method=method,
                           preconditioner="none", backend="cpu")
    assert info["status"] == status, name
    assert [attempt["status"] for attempt in info["attempts"]] == [status]
    assert x.shape == (2,)


def test_a_stalled_step_of_the_fallback_chain_is_reported():
    # The Neumann Laplacian (rows summing to 0) with b outside its range: no method can bring
    # the residual below b's part along the constants; the chain's steps end, one by its
    # progress window (no_progress), and the last one's status is the outcome.
    n = 30
    diagonal = np.full(n, 2.0)
    diagonal[0] = diagonal[-1] = 1.0
    a = sp.diags([-np.ones(n - 1), diagonal, -np.ones(n - 1)], [-1, 0, 1]).tocsr()
    b = np.random.default_rng(34).uniform(0.5, 1.5, n)
    x, info = simrun.solve(a, b, backend="cpu")
    statuses = [attempt["status"] for attempt in info["attempts"]]
    assert "no_progress" in statuses, statuses
    assert info["status"] == statuses[-1] != "converged"
    assert len(info["fallbacks"]) == len(statuses) - 1


# Bad input: TypeError for the wrong kind of argument, simrun.InputError (a ValueError) with the
# command line's message for a wrong value.
def test_bad_arguments():
    a = poisson_2d(4)
    b = np.ones(16)
    with pytest.raises(TypeError, match="SciPy sparse matrix"):
        simrun.solve([[1.0]], [1.0])
    with pytest.raises(simrun.InputError, match="the matrix is 3 x 4; a linear system needs"):
        simrun.solve(sp.random(3, 4, density=0.5, format="csr"), np.ones(3))
    with pytest.raises(simrun.InputError,
                       match="the right-hand side has 5 entries, the matrix has 16 rows"):
        simrun.solve(a, np.ones(5))
    with pytest.raises(simrun.InputError, match="the initial guess has 3 entries"):
        simrun.solve(a, b, x0=np.ones(3))
    with pytest.raises(TypeError, match="complex"):
        simrun.solve(a.astype(complex), b)
    with pytest.raises(TypeError, match="b must be an array"):
        simrun.solve(a, "ones")
    bad = a.copy()
    bad.data[5] = np.nan
    with pytest.raises(simrun.InputError, match="not finite in row 1"):
        simrun.solve(bad, b)
    with pytest.raises(simrun.InputError, match="right-hand side has a value that is not finite"):
        simrun.solve(a, np.full(16, np.inf))
    with pytest.raises(ValueError, match="method"):
        simrun.solve(a, b, method="conjugate")
    with pytest.raises(simrun.InputError, match="rtol must be in \\[0, 1\\)"):
        simrun.solve(a, b, rtol=-1.0)
    with pytest.raises(simrun.InputError, match="max_iterations must be >= 1"):
        simrun.solve(a, b, max_iterations=0)
    with pytest.raises(simrun.InputError, match="pcg needs a preconditioner"):
        simrun.solve(a, b, method="pcg", preconditioner="none")
    # A box that is not the matrix's rows, whatever the method (it was ignored but for
    # multigrid).
    for options in ({"preconditioner": "multigrid"}, {}, {"method": "cg"},
                    {"method": "jacobi"}):
        with pytest.raises(simrun.InputError,
                           match="grid 4x5 has 20 points, but the matrix has 16 rows"):
            simrun.solve(a, b, grid=(4, 5), **options)
    # Integers beyond 64 bits: the setting's range, not a cast error.
    for key, limits in (("restart", "\\[1, 128\\]"),
                        ("max_iterations", "\\[1, 9223372036854775807\\]")):
        for value in (2**70, -2**70):
            with pytest.raises(simrun.InputError,
                               match=f"{key} must be in {limits}, got {value}$"):
                simrun.solve(a, b, **{key: value})
    with pytest.raises(TypeError, match="grid must be"):
        simrun.solve(a, b, grid=4.5)
    with pytest.raises(TypeError, match="rtol must be a number"):
        simrun.solve(a, b, rtol="small")


def test_cuda_back_end_or_a_usage_error():
    a = poisson_2d(8)
    try:
        _, info = simrun.solve(a, np.ones(64), backend="cuda")
    except simrun.UsageError as error:
        assert "cuda" in str(error).lower() or "gpu" in str(error).lower()
    else:
        assert info["backend"] == "cuda" and info["status"] == "converged"


def test_the_gil_is_released_while_solving():
    """Another Python thread runs on while a solve takes at least half a second."""
    a = poisson_2d(400)
    b = np.ones(a.shape[0])
    result = {}

    def solve():
        start = time.perf_counter()
        result["x"], result["info"] = simrun.solve(a, b, method="cg", preconditioner="none",
                                                   rtol=1e-12, backend="cpu")
        result["seconds"] = time.perf_counter() - start

    worker = threading.Thread(target=solve)
    longest_gap = 0.0
    last = time.perf_counter()
    worker.start()
    while worker.is_alive():
        now = time.perf_counter()
        longest_gap = max(longest_gap, now - last)
        last = now
        time.sleep(0.001)
    worker.join()
    solve_seconds = result["info"]["seconds"]
    assert solve_seconds >= 0.2, "the solve is too short to tell"
    # Held, the GIL would stop this thread for the whole solve.
    assert longest_gap < 0.5 * solve_seconds, (longest_gap, solve_seconds)


def index_words(axis):
    """SciPy's words for an index out of range, which its versions put differently ("column
    index values must be >= 0" in Debian's 1.10, other words in later ones): the axis and the
    index are named either way."""
    return f"{axis} ind(ex|ices)"


# SciPy's words for an index pointer array that is not non-decreasing, in its versions.
pointer_words = "non-decreasing|index pointer|indptr"


def corrupt_forms():
    """Matrices whose index arrays were changed by hand after they were made, each with the
    words of what is wrong (SciPy's own routines, which trust them, failed on them with
    vector::_M_default_append or corrupted the heap)."""
    a = poisson_2d(4)
    forms = []
    for change, words in ((lambda m: m.indptr.__setitem__(3, 100), pointer_words),
                          (lambda m: m.indptr.__setitem__(3, -5), pointer_words),
                          (lambda m: m.indices.__setitem__(3, -1), index_words("column")),
                          (lambda m: m.indices.__setitem__(3, 16), index_words("column")),
                          (lambda m: setattr(m, "data", m.data[:-2]), "size|length")):
        m = a.copy()
        change(m)
        forms.append(("CSR", m, words))
    coo = a.tocoo()
    coo.row[2] = 99
    forms.append(("COO", coo, "an index lies outside the 16 x 16 matrix"))
    csc = a.tocsc()
    csc.indices[2] = 99
    forms.append(("CSC", csc, index_words("row")))
    return forms


@pytest.mark.parametrize("kind, matrix, words", corrupt_forms())
def test_a_corrupt_matrix_is_refused_with_what_is_wrong(kind, matrix, words):
    with pytest.raises(simrun.InputError,
                       match=f"A's {kind} arrays do not describe a matrix: .*(?:{words})"):
        simrun.solve(matrix, np.ones(16))


@pytest.mark.parametrize("scale, precision, rtol", [(1e-300, "double", 1e-8),
                                                    (1e300, "double", 1e-8),
                                                    (1e-20, "float", 1e-6),
                                                    (1e20, "float", 1e-6)])
def test_a_system_far_from_the_unit_scale_is_solved_as_the_unit_one(scale, precision, rtol):
    """1e-300 times the 20 x 20 Laplacian, b = A 1 (||b||^2 underflowed: "converged" after 0
    iterations at a true residual of 1)."""
    a = (poisson_2d(20) * scale).tocsr()
    b = a @ np.ones(400)
    x, info = simrun.solve(a, b, precision=precision, rtol=rtol, backend="cpu")
    assert info["status"] == "converged", info
    # The true residual, its norms taken at the unit scale (where squares neither underflow
    # nor overflow).
    residual = np.linalg.norm((b - a @ x) / scale) / np.linalg.norm(b / scale)
    assert residual <= rtol
    assert info["relative_residual"] == pytest.approx(residual, rel=1e-3)
    assert np.max(np.abs(x - 1)) <= 200 * rtol  # the condition number is about 180


def test_ctrl_c_stops_a_solve_between_batches():
    """SIGINT 0.5 s into a solve that would take minutes raises KeyboardInterrupt within a
    second or so (Python's handlers run between batches of iterations); it was raised only
    once the solve had returned."""
    import signal
    a = poisson_2d(200)
    b = np.ones(a.shape[0])
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            simrun.solve(a, b, method="jacobi", rtol=1e-12, max_iterations=10**7, backend="cpu")
    finally:
        timer.cancel()
    assert time.perf_counter() - start < 5.0
    # The module goes on solving afterwards.
    x, info = simrun.solve(poisson_2d(8), np.ones(64))
    assert info["status"] == "converged"

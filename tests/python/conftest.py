"""Shared fixtures of the Python module's tests (run by CTest: tests/CMakeLists.txt sets
PYTHONPATH to the build tree's python/ and names the simrun executable and the sources)."""

import json
import os
import subprocess

import scipy.sparse as sp

SOURCE_DIR = os.environ.get("SIMRUN_SOURCE_DIR",
                            os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
SIMRUN = os.environ.get("SIMRUN_EXECUTABLE", "simrun")


def source(*parts):
    return os.path.join(SOURCE_DIR, *parts)


def simrun_command(*arguments, cwd=None):
    """Runs the simrun executable; returns (exit code, stdout, stderr)."""
    done = subprocess.run([SIMRUN, *arguments], cwd=cwd, capture_output=True, text=True,
                          timeout=600)
    return done.returncode, done.stdout, done.stderr


def simrun_json(*arguments, cwd=None):
    code, out, err = simrun_command(*arguments, "--json", cwd=cwd)
    assert code in (0, 1), err
    return json.loads(out)


def poisson_2d(m):
    """The 5-point Laplacian on an m x m box of interior points, x fastest (CSR)."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    a = (sp.kron(sp.identity(m), t) + sp.kron(t, sp.identity(m))).tocsr()
    a.eliminate_zeros()  # kron keeps its blocks' zeros
    return a

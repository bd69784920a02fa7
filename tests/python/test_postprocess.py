"""The postprocess scripts that read run files through simrun.read_steps."""

import os
import subprocess
import sys

import pytest

import simrun
from conftest import source

pytest.importorskip("matplotlib")


def test_plot_residuals_draws_a_run(tmp_path):
    summary = simrun.run(source("inputs", "heat.toml"), output=tmp_path, backend="cpu",
                         set={"grid.nx": 33, "grid.ny": 33, "time.end": 0.2})
    out = tmp_path / "residuals.png"
    done = subprocess.run([sys.executable, source("postprocess", "plot_residuals.py"),
                           str(tmp_path), "-o", str(out)], capture_output=True, text=True,
                          env={**os.environ, "MPLBACKEND": "Agg"}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 10000
    assert open(out, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    assert summary["h5"]


def test_plot_residuals_names_a_file_that_is_no_run(tmp_path):
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not hdf5")
    done = subprocess.run([sys.executable, source("postprocess", "plot_residuals.py"), str(bad)],
                          capture_output=True, text=True, env={**os.environ, "MPLBACKEND": "Agg"},
                          timeout=300)
    assert done.returncode == 2
    assert "not a readable simrun run file" in done.stderr

"""simrun.run, simrun.read and simrun.verify against the command line and the inputs' own
definitions (initial conditions, time steps, the schemes' orders)."""

import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import simrun
from conftest import simrun_command, simrun_json, source

HEAT = source("inputs", "heat.toml")
HEAT_3D = source("inputs", "heat_3d.toml")
SMALL_HEAT = {"grid.nx": 33, "grid.ny": 33, "time.end": 0.2}


def test_run_and_read_give_the_command_lines_file(tmp_path):
    code, _, err = simrun_command(HEAT, "--backend", "cpu", "--quiet", "--output",
                                  str(tmp_path / "cli"),
                                  *[f"--set={k}={v}" for k, v in SMALL_HEAT.items()])
    assert code == 0, err
    summary = simrun.run(HEAT, set=SMALL_HEAT, output=tmp_path / "py", backend="cpu")
    assert summary["steps"] == 20  # end / dt = 0.2 / 0.01
    assert summary["time"] == pytest.approx(0.2)
    assert summary["points"] == [33, 33]
    assert summary["h5"].endswith("heat.h5") and summary["pvd"].endswith("heat.pvd")

    times, fields, grid = simrun.read(summary["h5"])
    cli_times, cli_fields, cli_grid = simrun.read(tmp_path / "cli" / "heat.h5")
    np.testing.assert_array_equal(times, cli_times)
    assert fields.keys() == cli_fields.keys() == {"u"}
    np.testing.assert_array_equal(fields["u"], cli_fields["u"])
    np.testing.assert_array_equal(grid["x"], cli_grid["x"])

    # Every 10th step of dt = 0.01 from t = 0, on the input's 33 x 33 nodes of [0, 1]^2.
    np.testing.assert_allclose(times, [0.0, 0.1, 0.2], rtol=0, atol=1e-15)
    assert fields["u"].shape == (3, 33, 33)
    np.testing.assert_allclose(grid["x"], np.linspace(0, 1, 33), rtol=0, atol=1e-15)
    assert list(grid["steps"]) == [0, 10, 20]
    assert "[problem]" in grid["input"]
    # Step 0 is the input's initial condition (the boundary nodes take the boundary values).
    x, y = np.meshgrid(grid["x"], grid["y"])  # [y, x]
    initial = (np.exp(-80 * ((x - 0.3) ** 2 + (y - 0.35) ** 2)) +
               0.6 * np.exp(-120 * ((x - 0.65) ** 2 + (y - 0.6) ** 2)))
    np.testing.assert_allclose(fields["u"][0][1:-1, 1:-1], initial[1:-1, 1:-1], rtol=1e-13,
                               atol=1e-15)

    # Chosen steps only: by position, as in times.
    last_times, last_fields, _ = simrun.read(summary["h5"], steps=-1)
    np.testing.assert_array_equal(last_times, times[-1:])
    np.testing.assert_array_equal(last_fields["u"], fields["u"][-1:])
    ends, end_fields, end_grid = simrun.read(summary["h5"], steps=[-1, 0])
    np.testing.assert_array_equal(ends, [times[-1], times[0]])
    np.testing.assert_array_equal(end_fields["u"][1], fields["u"][0])
    assert list(end_grid["steps"]) == [20, 0]
    with pytest.raises(simrun.InputError, match="step position 3 is outside the 3 steps"):
        simrun.read(summary["h5"], steps=3)
    with pytest.raises(TypeError, match="steps must be"):
        simrun.read(summary["h5"], steps="last")

    steps = simrun.read_steps(tmp_path / "py")  # the run directory's one .h5
    assert [s["step"] for s in steps] == [0, 10, 20]
    assert steps[0]["status"] == "initial"
    assert steps[1]["status"] == "converged" and steps[1]["solver_iterations"] > 0
    assert len(steps[1]["residual_history"]) >= 2


def test_read_orders_3d_fields_z_y_x(tmp_path):
    summary = simrun.run(HEAT_3D, output=tmp_path, backend="cpu",
                         set={"grid.nx": 9, "grid.ny": 7, "grid.nz": 5, "time.end": 0.04,
                              "output.every": 1, "problem.initial": "x + 10*y + 100*z"})
    times, fields, grid = simrun.read(summary["h5"])
    assert fields["u"].shape == (3, 5, 7, 9)
    z, y, x = np.meshgrid(grid["z"], grid["y"], grid["x"], indexing="ij")
    expected = x + 10 * y + 100 * z
    np.testing.assert_allclose(fields["u"][0][1:-1, 1:-1, 1:-1], expected[1:-1, 1:-1, 1:-1],
                               rtol=1e-14)
    np.testing.assert_allclose(times, [0.0, 0.02, 0.04], atol=1e-15)


def test_set_values_are_typed_and_checked(tmp_path):
    summary = simrun.run(HEAT, output=tmp_path, backend="cpu",
                         set={"grid.nx": np.int64(17), "grid.ny": 17, "time.end": 0.05,
                              "time.scheme": "crank_nicolson", "grid.x": [0.0, 2.0]})
    assert summary["points"] == [17, 17] and summary["steps"] == 5
    _, _, grid = simrun.read(summary["h5"])
    assert grid["x"][-1] == 2.0
    with pytest.raises(simrun.InputError) as error:
        simrun.run(HEAT, set={"grid.nxx": 5}, output=tmp_path)
    assert error.value.key == "grid.nxx"
    with pytest.raises(simrun.InputError, match="grid.nx"):
        simrun.run(HEAT, set={"grid.nx": 1}, output=tmp_path)
    with pytest.raises(TypeError, match="set="):
        simrun.run(HEAT, set={"grid.nx": object()})
    with pytest.raises(TypeError, match="set must be a dict"):
        simrun.run(HEAT, set=["grid.nx=5"])


def test_input_file_errors_carry_file_line_column_and_key(tmp_path):
    text = open(HEAT).read().replace("nx = 129", 'nx = "many"')
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    line_number = next(i for i, line in enumerate(text.splitlines(), 1) if '"many"' in line)
    column = text.splitlines()[line_number - 1].index('"many"') + 1
    with pytest.raises(simrun.InputError) as error:
        simrun.run(bad, output=tmp_path)
    assert (error.value.file, error.value.line, error.value.column, error.value.key) == \
        (str(bad), line_number, column, "grid.nx")
    code, _, err = simrun_command("check", str(bad))
    assert code == 2
    assert err.strip() == f"simrun: input error: {error.value}"
    with pytest.raises(FileNotFoundError):
        simrun.read(tmp_path / "none.h5")
    with pytest.raises(simrun.InputError, match="cannot read the input file"):
        simrun.run(tmp_path / "none.toml")


def test_a_failed_solve_raises_solve_failure(tmp_path):
    with pytest.raises(simrun.SolveFailure):
        simrun.run(HEAT, output=tmp_path, backend="cpu",
                   set={"grid.nx": 33, "grid.ny": 33, "solver.max_iterations": 1,
                        "solver.method": "cg", "solver.preconditioner": "none"})


def test_verify_is_the_command_lines_and_second_order():
    file = source("inputs", "verify", "poisson_2d.toml")
    report = simrun.verify(file, levels=3, backend="cpu")
    command = simrun_json("verify", file, "--levels", "3", "--backend", "cpu")
    assert report == command
    # Central differences: the error falls like h^2 (the convergence tests' bound).
    assert report["observed_order_space"] >= 2.0 - 0.1


def test_ctrl_c_ends_a_run_between_steps_with_its_steps_readable(tmp_path):
    """SIGINT to a Python process inside simrun.run: KeyboardInterrupt within seconds, and the
    run file holds the steps written before, readable."""
    script = f"""
import simrun
simrun.run({HEAT!r}, output={str(tmp_path)!r}, backend="cpu",
           set={{"grid.nx": 65, "grid.ny": 65, "time.end": 1000.0, "output.every": 5}})
"""
    process = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "heat.xmf").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert process.poll() is None, process.stderr.read()
        time.sleep(0.5)
        interrupted = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode != 0
    assert "KeyboardInterrupt" in err, err
    assert time.monotonic() - interrupted < 30
    times, fields, _ = simrun.read(tmp_path / "heat.h5")
    assert len(times) >= 1 and np.isfinite(fields["u"]).all()
    assert len(times) < 1000 * 100 // 5  # it did not run to the end


def test_values_and_paths_python_cannot_pass_are_input_errors(tmp_path):
    """An int past 64 bits (it was a pybind11 cast error), a NUL in an expression (it cut the
    expression short) or in a path (it gave the message "a"): simrun.InputError naming the key
    or the argument, before anything is written."""
    for key in ("solver.restart", "solver.max_iterations"):
        with pytest.raises(simrun.InputError, match="is past the range of a 64-bit") as error:
            simrun.run(HEAT, set={key: 2**70}, output=tmp_path / "out", backend="cpu")
        assert error.value.key == key
    with pytest.raises(simrun.InputError, match="U\\+0000 at position 1") as error:
        simrun.run(HEAT, set={"problem.source": "x\x00+1"}, output=tmp_path / "out",
                   backend="cpu")
    assert error.value.key == "problem.source"
    for path in ("a\x00b", "a\nb"):
        with pytest.raises(simrun.InputError, match="^output: the path holds the control"):
            simrun.run(HEAT, output=tmp_path / path, backend="cpu")
        with pytest.raises(simrun.InputError, match="key 'output.directory'"):
            simrun.run(HEAT, set={"output.directory": str(tmp_path / path)}, backend="cpu")
    with pytest.raises(simrun.InputError, match="far outside"):
        simrun.verify(source("inputs", "verify", "poisson_2d.toml"), levels=2**70)
    assert list(tmp_path.iterdir()) == []


def test_data_turning_non_finite_mid_run_is_a_failure_not_an_input_error(tmp_path):
    """Steps were written: the run failed (the command line's exit 1), its input was not refused
    (exit 2); the steps before the one whose data are not finite stay readable."""
    with pytest.raises(RuntimeError, match="key 'boundary'.* at t = 0.04") as error:
        simrun.run(HEAT, output=tmp_path, backend="cpu",
                   set={"grid.nx": 9, "grid.ny": 9, "time.dt": 0.01, "time.end": 0.1,
                        "output.every": 1, "boundary.top": "t > 0.035 ? 1/0 : 0"})
    assert not isinstance(error.value, simrun.InputError)
    times, fields, _ = simrun.read(tmp_path / "heat.h5")
    np.testing.assert_allclose(times, [0.0, 0.01, 0.02, 0.03], rtol=0, atol=1e-15)
    assert np.isfinite(fields["u"]).all()

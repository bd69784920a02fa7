"""simrun.read, read_steps and read_input: a run's HDF5 file as NumPy arrays and dicts (a file
that a run is still writing reads as far as its last complete step)."""

import numbers
import os

import numpy as np

from . import _simrun


def _positions(steps):
    """read's steps= as a list of positions (None: all)."""
    if steps is None:
        return None
    if isinstance(steps, numbers.Integral) and not isinstance(steps, bool):
        return [int(steps)]
    if isinstance(steps, (list, tuple, range)) and all(
            isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in steps):
        return [int(s) for s in steps]
    raise TypeError(f"steps must be a position or a list of positions among the stored steps "
                    f"(-1: the last); got {steps!r}")


def _stored(path, with_fields, positions=None):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a path; got {type(path).__name__}")
    path = os.fspath(path)
    if os.path.isdir(path):
        found = sorted(name for name in os.listdir(path) if name.endswith(".h5"))
        if len(found) != 1:
            raise FileNotFoundError(f"{path}: a run directory holds one .h5 file; found "
                                    f"{len(found)}")
        path = os.path.join(path, found[0])
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    return _simrun._read(path, with_fields, positions)


def read(path, steps=None):
    """Reads a run's HDF5 file (or the one .h5 in a run directory).

    steps: which of the stored steps, by position as in `times` (0 the first, -1 the last), a
    position or a list of them; all by default. Only those are read, so the last step of a long
    run costs one step's memory: read(path, steps=-1).

    Returns (times, fields, grid):
      times   the stored steps' times, shape [steps];
      fields  {name: array [step, (z,) y, x]} for each stored field ("u"); a field that a
              step lacks is NaN there;
      grid    {"dimension", "points" (nx, ny[, nz]), "origin", "spacing", "x", "y"[, "z"]
              (the nodes' coordinates per axis), "steps" (the step numbers), "input" (the
              input file's text)}.

    Raises simrun.InputError for a file refused for what it holds (links or values in other
    files, filters that need a plugin, values the file cannot hold, a grid of no nodes), and
    RuntimeError, before reading anything, where the values and these arrays would take more
    memory than the machine has available.
    """
    stored = _stored(path, True, _positions(steps))
    steps = stored["steps"]
    times = np.array([step["time"] for step in steps], dtype=np.float64)
    fields = stored["fields"]
    grid = {key: stored[key] for key in ("dimension", "points", "origin", "spacing", "input")}
    for axis, name in enumerate("xyz"[: stored["dimension"]]):
        grid[name] = stored["origin"][axis] + stored["spacing"][axis] * np.arange(
            stored["points"][axis])
    grid["steps"] = np.array([step["step"] for step in steps], dtype=np.int64)
    return times, fields, grid


def read_input(path):
    """The run's input text and the solver layer's decisions, as stored in its run file:
    (input, solver_decisions)."""
    stored = _stored(path, False)
    return stored["input"], stored["solver_decisions"]


def read_steps(path):
    """The stored steps' solver statistics, without their fields: a list of dicts with step,
    time, solver_iterations, relative_residual, status, method and residual_history (||r_k||,
    empty without a linear solve)."""
    return _stored(path, False)["steps"]

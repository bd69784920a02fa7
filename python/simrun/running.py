"""simrun.run and simrun.verify: an input file run or verified as the command line does it."""

import json
import numbers
import os

from . import _simrun
from .errors import InputError


def _toml(value):
    """A Python value as TOML text (the arrays that set= may give)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string reads JSON's escapes
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    raise TypeError(f"a value of set= must be a bool, int, float, str or a list of them; got "
                    f"{type(value).__name__}")


def _settings(set):
    """set={key: value} as (key, value, is_toml_text) in the order given."""
    if set is None:
        return []
    if not isinstance(set, dict):
        raise TypeError(f"set must be a dict of input keys to values; got {type(set).__name__}")
    settings = []
    for key, value in set.items():
        if not isinstance(key, str):
            raise TypeError(f"the keys of set= are dotted input keys ('grid.nx'); got {key!r}")
        if hasattr(value, "item") and not isinstance(value, (list, tuple)):
            value = value.item()  # a NumPy scalar
        if isinstance(value, (list, tuple)):
            settings.append((key, _toml(value), True))
        elif isinstance(value, bool):
            settings.append((key, value, False))
        elif isinstance(value, numbers.Integral):
            if not -2**63 <= int(value) < 2**63:  # C++ would read it as a float, or fail
                place = f"set={{'{key}': ...}}"
                raise InputError(f"{place}: key '{key}': {int(value)} is past the range of a "
                                 f"64-bit integer", place, key)
            settings.append((key, int(value), False))
        elif isinstance(value, numbers.Real):
            settings.append((key, float(value), False))
        elif isinstance(value, str):
            settings.append((key, value, False))
        else:
            _toml(value)  # raises the TypeError
    return settings


def _path(value, name):
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path; got {type(value).__name__}")
    return os.fspath(value)


def _backend(backend):
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a string; got {type(backend).__name__}")
    return backend


def run(input, set=None, output=None, backend="auto", quiet=True, restart=None):
    """Runs an input file as `simrun INPUT [--set K=V]... [--output DIR]` does.

    set: {"grid.nx": 257, "time.scheme": "crank_nicolson", ...}: input keys overridden, with
    the strictness of the input file (an unknown key is an error). output: the output
    directory (default: the input's [output] directory). restart: a run file to continue from.
    quiet=False prints the progress.

    Returns the summary as a dict: problem, points, unknowns, backend, device, solver, format,
    steps, time, total_iterations, mean_iterations, max_iterations, fallbacks, seconds,
    solver_seconds, data_seconds, removed_constant, pvd and h5 (the outputs' paths, or None).
    Raises simrun.InputError (with file, line, column and key) for input errors, found before
    anything is written, simrun.SolveFailure where a step's solve fails, and RuntimeError where
    a later step's data or field turn non-finite (the steps written before stay readable).
    """
    return _simrun._run(_path(input, "input"), _settings(set),
                        None if output is None else _path(output, "output"),
                        _backend(backend), bool(quiet),
                        None if restart is None else _path(restart, "restart"))


def verify(input, levels=3, set=None, backend="auto"):
    """The convergence study of `simrun verify INPUT --levels L --json`, as a dict: the
    problem, its schemes, each level's h, dt, nodes and error norms, and the observed orders."""
    if isinstance(levels, bool) or not isinstance(levels, numbers.Integral):
        raise TypeError(f"levels must be an integer; got {type(levels).__name__}")
    if not -2**31 <= levels < 2**31:
        raise InputError(f"levels = {levels} is far outside what verify takes (at least 2, a "
                         f"few: each level has 4 (2D) or 8 (3D) times the nodes of the one before)")
    return json.loads(_simrun._verify(_path(input, "input"), _settings(set), int(levels),
                                      _backend(backend)))

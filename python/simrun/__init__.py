"""simrun from Python: the solver layer on SciPy and NumPy systems, runs of input files, and
their results as NumPy arrays.

    x, info = simrun.solve(A, b)            # A: SciPy sparse (or anything with tocsr())
    solver = simrun.Solver(A); x, info = solver.solve(b)   # many b: set up once
    summary = simrun.run("inputs/heat.toml", set={"grid.nx": 257}, output="out/")
    times, fields, grid = simrun.read("out/heat.h5")
    report = simrun.verify("inputs/poisson.toml", levels=3)

The same choices, messages and reports as the command line (`simrun solve --json`, `simrun
FILE.toml`, `simrun verify --json`); bad arguments raise simrun.InputError (a ValueError) or
TypeError, and a solve that does not converge says so in info["status"].
"""

from ._simrun import __version__
from .errors import InputError, SolveFailure, UsageError
from .reading import read, read_input, read_steps
from .running import run, verify
from .solving import Solver, solve

__all__ = ["solve", "Solver", "run", "verify", "read", "read_steps", "read_input", "InputError", "UsageError",
           "SolveFailure", "__version__"]

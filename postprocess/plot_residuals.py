#!/usr/bin/python3
"""Plot the solver behaviour of a simrun run from its HDF5 file.

Usage:
    postprocess/plot_residuals.py RUN.h5 [-o out.png] [--steps N]

Reads every group under /steps of RUN.h5 (attributes `time`, `solver_iterations`,
`relative_residual`, `status`, `method`, and the dataset `residual_history`, the norms
||r_k|| of the step's last solve, k = 0 .. iterations). Draws two panels:
  (a) the residual histories ||r_k|| / ||r_0|| of up to N output steps (default 8, spread
      evenly over the run, coloured by time), semi-log;
  (b) the solver iterations of every output step against time.
Steps without a history (explicit schemes, the initial step) are left out of (a).

Exit status: 0 written; 1 the PNG could not be written; 2 usage error or a missing or
malformed input file. Needs Debian's python3 with python3-matplotlib, python3-numpy and
python3-h5py (not a pyenv python).
"""

import argparse
import os
import sys


def fail(message, code=2):
    print(f"plot_residuals.py: {message}", file=sys.stderr)
    sys.exit(code)


def text(value):
    """An HDF5 string attribute as str (h5py gives fixed-length strings as bytes)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace").rstrip("\x00")
    return str(value)


def read_steps(path):
    import h5py

    if not os.path.isfile(path):
        fail(f"{path}: no such file")
    try:
        with h5py.File(path, "r") as f:
            if "steps" not in f:
                fail(f"{path}: not a simrun run file (no /steps group)")
            steps = []
            for name in sorted(f["steps"].keys()):
                group = f["steps"][name]
                attributes = group.attrs
                history = group["residual_history"][...] if "residual_history" in group else None
                steps.append({
                    "step": int(name),
                    "time": float(attributes.get("time", 0.0)),
                    "iterations": int(attributes.get("solver_iterations", 0)),
                    "status": text(attributes.get("status", "")),
                    "method": text(attributes.get("method", "")),
                    "history": history,
                })
            return steps
    except OSError as error:
        fail(f"{path}: cannot read it as HDF5 ({error})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="the run's .h5 file")
    parser.add_argument("-o", "--output", help="PNG to write (default: RUN_residuals.png)")
    parser.add_argument("--steps", type=int, default=8, help="histories to draw (default 8)")
    arguments = parser.parse_args()
    if arguments.steps < 1:
        fail("--steps must be at least 1")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    steps = read_steps(arguments.run)
    output = arguments.output or os.path.splitext(arguments.run)[0] + "_residuals.png"
    with_history = [s for s in steps if s["history"] is not None and len(s["history"]) > 0]

    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    if with_history:
        picks = np.unique(np.linspace(0, len(with_history) - 1,
                                      min(arguments.steps, len(with_history))).round().astype(int))
        times = [s["time"] for s in with_history]
        colours = plt.cm.viridis
        low, high = min(times), max(times)
        for index in picks:
            s = with_history[index]
            history = np.asarray(s["history"], dtype=float)
            relative = history / history[0] if history[0] > 0 else history
            shade = 0.0 if high == low else (s["time"] - low) / (high - low)
            left.semilogy(np.arange(len(relative)), relative, color=colours(shade),
                          label=f"step {s['step']}, t = {s['time']:.4g}")
        left.set_xlabel("iteration k")
        left.set_ylabel("||r_k|| / ||r_0||")
        left.set_title(f"residual histories ({with_history[-1]['method'] or 'solver'})")
        left.grid(True, which="both", alpha=0.3)
        left.legend(fontsize=8)
    else:
        left.text(0.5, 0.5, "no residual histories in this file\n(explicit scheme or older file)",
                  ha="center", va="center", transform=left.transAxes)
        left.set_axis_off()

    solved = [s for s in steps if s["status"] not in ("initial", "explicit")]
    if solved:
        right.plot([s["time"] for s in solved], [s["iterations"] for s in solved], "o-",
                   markersize=3)
    right.set_xlabel("time t")
    right.set_ylabel("solver iterations per step")
    right.set_title("iterations of the output steps")
    right.grid(True, alpha=0.3)
    figure.suptitle(os.path.basename(arguments.run))
    try:
        figure.savefig(output, dpi=120)
    except OSError as error:
        fail(f"{output}: cannot write the PNG ({error})", 1)
    print(output)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Plot the linear-solver behaviour of a simrun run from its HDF5 file.

Usage:
    postprocess/plot_residuals.py RUN.h5 [-o out.png] [--steps N]
    postprocess/plot_residuals.py output/heat            # the one .h5 in a run directory

Reads every group /steps/<step> of the file simrun writes (attributes `time`,
`solver_iterations`, `relative_residual`, `status`; optionally a dataset
`residual_history` = ||r_k||, k = 0..iterations, and a string attribute `method`) and
draws two panels:

  (a) the residual histories ||r_k|| / ||r_0|| of up to N output steps (default 8, evenly
      spread over the steps that have one), coloured by simulation time, semi-log;
  (b) solver iterations per output step against time, with the final true relative
      residual ||b - Ax|| / ||b|| on a second (log) axis; steps whose solve did not
      converge are marked with a red cross.

Files without `residual_history` (older runs, explicit schemes) still give panel (b);
panel (a) then says why it is empty. Note that simrun stops a solve when
||r_k|| <= max(rtol * ||b||, atol), so the level a history reaches relative to ||r_0||
depends on how good the initial guess (the previous time step) was.

Exit status: 0 written; 1 the PNG could not be written; 2 usage error or a missing or
malformed input file.

Needs Debian's python3 with python3-matplotlib and python3-numpy, and simrun's Python module
(simrun.read_steps; found installed, on PYTHONPATH, or in this checkout's build/python).
"""

import argparse
import glob
import math
import os
import re
import sys

PROG = "plot_residuals.py"
NOT_A_SOLVE = {"initial", "explicit"}  # statuses of steps that ran no linear solve


class InputError(Exception):
    """A user error: missing or malformed input. Reported without a traceback, exit 2."""


def fail(message, code=2):
    print(f"{PROG}: error: {message}", file=sys.stderr)
    sys.exit(code)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Plot a simrun run's linear-solver residual histories (panel a) and "
        "iterations per output step (panel b) from its HDF5 file.",
        epilog=f"Example: simrun inputs/heat.toml --output /tmp/heat --quiet && "
        f"{PROG} /tmp/heat/heat.h5 -o heat_residuals.png",
    )
    p.add_argument("run", metavar="RUN.h5",
                   help="the run's HDF5 file (NAME.h5), or a run directory holding exactly one")
    p.add_argument("-o", "--output", metavar="OUT.png",
                   help="PNG to write (default: NAME_residuals.png next to RUN.h5)")
    p.add_argument("--steps", type=int, default=8, metavar="N",
                   help="residual histories to draw, evenly spread over the output steps "
                   "(default 8; 0 draws all)")
    p.add_argument("--title", help="replace the automatic title")
    p.add_argument("--dpi", type=int, default=150, help="resolution of the PNG (default 150)")
    args = p.parse_args(argv)
    if args.steps < 0:
        p.error("--steps must be >= 0")
    if args.dpi < 20 or args.dpi > 1200:
        p.error("--dpi must be between 20 and 1200")
    return args


def resolve_run(path):
    if os.path.isdir(path):
        found = sorted(glob.glob(os.path.join(path, "*.h5")))
        if len(found) != 1:
            raise InputError(f"{path}: a directory with {len(found)} .h5 files; name the file")
        return found[0]
    if not os.path.exists(path):
        stem, ext = os.path.splitext(path)
        hint = f" (try {stem}.h5)" if ext in (".xmf", ".pvd") and os.path.exists(stem + ".h5") \
            else ""
        raise InputError(f"{path}: no such file{hint}")
    if path.endswith((".xmf", ".pvd", ".vti")):
        stem = os.path.splitext(path)[0]
        hint = f" (try {stem}.h5)" if os.path.exists(stem + ".h5") else ""
        raise InputError(f"{path}: expected the run's .h5 file, not a "
                         f"{os.path.splitext(path)[1]}{hint}")
    return path


def parse_decisions(text):
    """`key = value` lines of /solver_decisions (first value of each key)."""
    out = {}
    for line in (text or "").splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() not in out:
            out[key.strip()] = value.strip()
    return out


def import_simrun():
    """The simrun module: installed, on PYTHONPATH, or in this checkout's build/python."""
    try:
        import simrun
    except ImportError:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                        "build", "python"))
        import simrun
    return simrun


def read_run(path):
    simrun = import_simrun()
    try:
        records = simrun.read_steps(path)
        input_text, decisions_text = simrun.read_input(path)
    except (RuntimeError, ValueError, OSError) as exc:
        raise InputError(f"{path}: not a readable simrun run file ({exc})")
    steps = [{
        "name": str(r["step"]),
        "index": r["step"],
        "time": r["time"],
        "iterations": r["solver_iterations"],
        "relres": r["relative_residual"],
        "status": r["status"] or "unknown",
        "method": None if r["method"] in ("", "none") else r["method"],  # e.g. "cg + jacobi"
        "history": r["residual_history"] if len(r["residual_history"]) else None,
    } for r in records]
    if not steps:
        raise InputError(f"{path}: /steps is empty (did the run write any output step?)")
    steps.sort(key=lambda s: (s["time"], s["index"]))
    return steps, parse_decisions(decisions_text), read_rtol(input_text)


def read_rtol(text):
    """[solver] rtol of the effective input (default 1e-8), or None if unreadable."""
    if not text:
        return None
    try:
        import tomllib
        data = tomllib.loads(text)
        solver = data.get("solver", {})
        return float(solver.get("rtol", 1e-8))
    except Exception:  # no tomllib (Python < 3.11) or odd TOML: just leave it out
        m = re.search(r"^\s*rtol\s*=\s*([0-9.eE+-]+)", text, re.M)
        return float(m.group(1)) if m else None


def pick_evenly(items, n):
    if n == 0 or len(items) <= n:
        return list(items)
    idx = sorted({round(i * (len(items) - 1) / (n - 1)) for i in range(n)}) if n > 1 \
        else [len(items) - 1]
    return [items[i] for i in idx]


def method_text(decisions):
    method = decisions.get("method")
    if not method:
        solver = decisions.get("solver")
        return solver or "unknown"
    pre = decisions.get("preconditioner")
    return f"{method} + {pre}" if pre and pre != "none" else method


def plot(steps, decisions, rtol, run_path, n_steps, title, out_path, dpi):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.lines import Line2D

    plt.rcParams.update({"font.size": 12, "axes.titlesize": 13, "legend.fontsize": 10})
    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(14, 5.8), layout="constrained")

    times = np.array([s["time"] for s in steps])
    t_lo, t_hi = float(times.min()), float(times.max())
    if t_hi <= t_lo:
        t_hi = t_lo + 1.0
    cmap = plt.get_cmap("viridis")
    norm = matplotlib.colors.Normalize(t_lo, t_hi)
    scheme = decisions.get("scheme", "")

    # (a) residual histories
    with_hist = [s for s in steps if s["history"] is not None and s["history"].size > 0]
    usable = []
    for s in with_hist:
        h = s["history"]
        if h[0] > 0 and math.isfinite(h[0]):
            usable.append(s)
    ax_a.set_title("(a) residual history per output step")
    ax_a.set_xlabel("iteration k")
    ax_a.set_ylabel("\u2016r\u2096\u2016 / \u2016r\u2080\u2016")
    if usable:
        chosen = pick_evenly(usable, n_steps)
        h_times = [s["time"] for s in usable]
        one_time = max(h_times) <= min(h_times)
        if not one_time:  # colour over the steps that have a history
            norm = matplotlib.colors.Normalize(min(h_times), max(h_times))
        methods = sorted({s["method"] or method_text(decisions) for s in chosen})
        styles = dict(zip(methods, ["-", "--", ":", "-."] * 4))
        kmax = 1
        for s in chosen:
            h = s["history"] / s["history"][0]
            k = np.arange(h.size)
            ok = np.isfinite(h) & (h > 0)
            colour = "tab:blue" if one_time else cmap(norm(s["time"]))
            ax_a.semilogy(k[ok], h[ok], styles[s["method"] or method_text(decisions)],
                          color=colour, lw=1.8,
                          marker="o" if h.size <= 30 and len(chosen) <= 12 else None, ms=3)
            if s["status"] not in ("converged",) and ok.any():
                last = np.flatnonzero(ok)[-1]
                ax_a.semilogy([k[last]], [h[last]], "x", color="crimson", ms=10, mew=2.5)
            kmax = max(kmax, h.size - 1)
        ax_a.set_xlim(0, kmax * 1.02 + 0.5)
        ax_a.xaxis.get_major_locator().set_params(integer=True)
        ax_a.grid(True, which="major", alpha=0.45)
        ax_a.grid(True, which="minor", alpha=0.12)
        if not one_time:
            sm = matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap)
            fig.colorbar(sm, ax=ax_a, label="time t of the output step", pad=0.01)
        legend = [Line2D([], [], color="0.3", ls=styles[m], lw=1.8, label=f"method: {m}")
                  for m in methods]
        if any(s["status"] != "converged" for s in chosen):
            legend.append(Line2D([], [], ls="none", marker="x", color="crimson", ms=9, mew=2.5,
                                 label="did not converge"))
        stop = "stop: \u2016r\u2016 \u2264 max(rtol\u00b7\u2016b\u2016, atol)"
        if rtol is not None:
            stop += f", rtol = {rtol:g}"
        legend.append(Line2D([], [], ls="none", label=stop))
        if one_time:
            legend.append(Line2D([], [], ls="none", label=f"t = {h_times[0]:g}"
                                 + (f", {len(usable)} solves" if len(usable) > 1 else "")))
        else:
            legend.append(Line2D([], [], ls="none",
                                 label=f"{len(chosen)} of {len(usable)} steps with a history"))
        ax_a.legend(handles=legend, loc="upper right", framealpha=0.92, fontsize=9.5)
    else:
        ax_a.set_xticks([])
        ax_a.set_yticks([])
        if with_hist:
            why = "every recorded history starts at \u2016r\u2080\u2016 = 0\n(initial guess exact)"
        elif (decisions.get("solver", "").startswith("none") or scheme.startswith("explicit")
              or all(s["status"] in NOT_A_SOLVE for s in steps)):
            why = (f"no residual histories: explicit scheme ({scheme or 'no linear solves'})"
                   "\nruns no linear solver")
        else:
            why = ("no residual histories in this file\n(/steps/*/residual_history absent: "
                   "written by an older simrun)")
        ax_a.text(0.5, 0.5, why, transform=ax_a.transAxes, ha="center", va="center",
                  fontsize=12, color="0.25",
                  bbox=dict(boxstyle="round,pad=0.6", fc="0.96", ec="0.7"))
        ax_a.grid(True, alpha=0.3)

    # (b) iterations per output step
    solves = [s for s in steps if s["status"] not in NOT_A_SOLVE]
    ax_b.set_title("(b) solver iterations per output step")
    ax_b.set_xlabel("time t")
    ax_b.set_ylabel("iterations of the step's linear solve", color="tab:blue")
    ax_b.tick_params(axis="y", colors="tab:blue")
    ax_b.grid(True, alpha=0.35)
    if solves:
        t = np.array([s["time"] for s in solves])
        its = np.array([s["iterations"] for s in solves])
        rel = np.array([s["relres"] for s in solves])
        bad = np.array([s["status"] != "converged" for s in solves])
        ax_b.plot(t, its, "-", color="tab:blue", lw=1.2, alpha=0.6)
        ax_b.plot(t[~bad], its[~bad], "o", color="tab:blue", ms=6, label="iterations")
        handles = [Line2D([], [], color="tab:blue", marker="o", lw=1.2, label="iterations")]
        if bad.any():
            ax_b.plot(t[bad], its[bad], "X", color="crimson", ms=11, zorder=5)
            kinds = sorted({s["status"] for s in solves if s["status"] != "converged"})
            handles.append(Line2D([], [], ls="none", marker="X", color="crimson", ms=10,
                                  label="not converged: " + ", ".join(kinds)))
        finite = its[np.isfinite(its)]
        top = float(finite.max()) if finite.size else 1.0
        ax_b.set_ylim(0, max(1.0, top) * 1.15)
        ax_b.yaxis.get_major_locator().set_params(integer=True)
        good = np.isfinite(rel) & (rel > 0)
        if good.any():
            ax_r = ax_b.twinx()
            ax_r.semilogy(t[good], rel[good], "s", color="tab:orange", ms=4.5, alpha=0.85)
            ax_r.set_ylabel("final \u2016b \u2212 Ax\u2016 / \u2016b\u2016", color="tab:orange")
            ax_r.tick_params(axis="y", which="both", colors="tab:orange")
            handles.append(Line2D([], [], ls="none", marker="s", color="tab:orange", ms=5,
                                  label="final relative residual (right axis)"))
            if rtol is not None:
                ax_r.axhline(rtol, color="tab:orange", ls="--", lw=1)
                handles.append(Line2D([], [], color="tab:orange", ls="--", lw=1,
                                      label=f"rtol = {rtol:g}"))
                lo = min(float(rel[good].min()), rtol)
                hi = max(float(rel[good].max()), rtol)
                ax_r.set_ylim(lo / 10, hi * 10)
        if len(solves) == 1:
            ax_b.set_xlim(solves[0]["time"] - 1, solves[0]["time"] + 1)
            if scheme == "steady":
                handles.append(Line2D([], [], ls="none", label="steady problem: one solve"))
        ax_b.legend(handles=handles, loc="lower right", framealpha=0.92, fontsize=9.5)
    else:
        t = times
        ax_b.plot(t, np.zeros_like(t), "o", color="0.6", ms=5)
        ax_b.set_ylim(-0.5, 5)
        ax_b.text(0.5, 0.55, f"no linear solves in {len(steps)} output steps\n"
                  f"({'explicit scheme: ' + scheme if scheme.startswith('explicit') else 'every step has status initial'})",
                  transform=ax_b.transAxes, ha="center", va="center", fontsize=12, color="0.25",
                  bbox=dict(boxstyle="round,pad=0.6", fc="0.96", ec="0.7"))
        pad = 0.03 * (t_hi - t_lo)
        ax_b.set_xlim(t_lo - pad, t_hi + pad)

    if title is None:
        base = os.path.basename(run_path)
        parts = [f"{base}"]
        if scheme:
            parts.append(f"scheme {scheme}")
        parts.append(f"solver {method_text(decisions)}")
        if decisions.get("format"):
            parts.append(f"format {decisions['format']}")
        if decisions.get("backend"):
            parts.append(decisions["backend"].split(" (")[0])
        title = "Linear solver: " + ", ".join(parts)
    fig.suptitle(title, fontsize=14)
    fig.savefig(out_path, dpi=dpi)
    plt.close(fig)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        import matplotlib  # noqa: F401
        import numpy  # noqa: F401
        import_simrun()
    except ImportError as exc:
        fail(f"{exc.name} is missing: run this script with Debian's /usr/bin/python3 "
             "(apt-get install python3-matplotlib python3-numpy) and simrun's Python module "
             "(built by tools/setup in build/python, or installed)", 2)
    try:
        run = resolve_run(args.run)
        try:
            steps, decisions, rtol = read_run(run)
        except (KeyError, TypeError, ValueError, OSError) as exc:  # damaged or foreign layout
            raise InputError(f"{run}: malformed simrun run file ({type(exc).__name__}: {exc})")
        out = args.output or os.path.splitext(run)[0] + "_residuals.png"
        if os.path.isdir(out):
            raise InputError(f"-o {out}: is a directory, expected a .png file name")
    except InputError as exc:
        fail(str(exc), 2)
    try:
        plot(steps, decisions, rtol, run, args.steps, args.title, out, args.dpi)
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}", 1)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

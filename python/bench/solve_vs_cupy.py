#!/usr/bin/env python3
"""simrun.solve against CuPy's CG, from Python, on the GPU: 2D Poisson (5-point) on m x m
unknowns, b = ones, to a relative residual of 1e-8.

For each m it times, wall clock around the Python call (the GPU synchronised), the median of
--repeat calls after a warm-up call:
  cupy cg      cupyx.scipy.sparse.linalg.cg(A, b, rtol=1e-8) on a CuPy CSR matrix (cuSPARSE SpMV)
  simrun cg    simrun.solve(A, b, method="cg", preconditioner="none"): the same method and
               iteration count, so the ratio is that of the iterations' speed
  simrun auto  simrun.solve(A, b, grid=(m, m)): simrun's own choice (multigrid-preconditioned
               CG), the time to a solution a user gets
  Solver again simrun.Solver(A, grid=(m, m)).solve(b) once the Solver has solved before: the
               analysis and set-up paid once, as for many right-hand sides
with b (and x) CuPy arrays, so no vector passes through the host; A is a SciPy matrix for simrun,
which analyses and converts it on the host in each call (its analysis and set-up, reported
apart: the rest of a call is the arrays' checks and copies into the extension). The true
relative residual of every solution is recomputed with CuPy.

  python3 python/bench/solve_vs_cupy.py [--sizes 1023 4095] [--repeat 3] [--json out.json]
(PYTHONPATH must reach the simrun package.)
"""

import argparse
import json
import sys
import time

import cupy
import cupyx.scipy.sparse as cusparse
import cupyx.scipy.sparse.linalg as cusparse_linalg
import numpy as np
import scipy.sparse as sp

import simrun


def poisson(m):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m), format="csr")
    a = (sp.kron(sp.identity(m, format="csr"), t, format="csr") +
         sp.kron(t, sp.identity(m, format="csr"), format="csr")).tocsr()
    a.eliminate_zeros()
    a.sort_indices()
    return a


def timed(call, repeat):
    """(seconds, result) of the median one of `repeat` calls after one warm-up call, so that its
    report's parts (analysis, set-up, solve) belong to the time shown."""
    call()
    cupy.cuda.Device().synchronize()
    calls = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        cupy.cuda.Device().synchronize()
        calls.append((time.perf_counter() - start, result))
    calls.sort(key=lambda c: c[0])
    return calls[(len(calls) - 1) // 2]


def relative_residual(a, b, x):
    return float(cupy.linalg.norm(b - a @ x) / cupy.linalg.norm(b))


def cupy_cg(a, b, rtol, max_iterations):
    iterations = [0]

    def count(_):
        iterations[0] += 1
    try:
        x, info = cusparse_linalg.cg(a, b, rtol=rtol, maxiter=max_iterations, callback=count)
    except TypeError:  # CuPy before 13 names it tol
        x, info = cusparse_linalg.cg(a, b, tol=rtol, maxiter=max_iterations, callback=count)
    return x, info, iterations[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1023, 4095])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    rtol = 1e-8
    gpu = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"GPU: {gpu}; CuPy {cupy.__version__}; simrun {simrun.__version__}")
    rows = []
    for m in args.sizes:
        a = poisson(m)
        a_gpu = cusparse.csr_matrix(a)
        b = cupy.ones(m * m)
        max_iterations = 20 * m
        t_cupy, (x, status, its_cupy) = timed(lambda: cupy_cg(a_gpu, b, rtol, max_iterations),
                                               args.repeat)
        r_cupy = relative_residual(a_gpu, b, x)
        t_cg, (x, info_cg) = timed(lambda: simrun.solve(
            a, b, method="cg", preconditioner="none", rtol=rtol,
            max_iterations=max_iterations), args.repeat)
        t_auto, (x, info_auto) = timed(lambda: simrun.solve(a, b, grid=(m, m), rtol=rtol),
                                       args.repeat)
        solver = simrun.Solver(a, grid=(m, m), rtol=rtol)  # set up by timed's warm-up call
        t_again, (x, info_again) = timed(lambda: solver.solve(b), args.repeat)
        row = {
            "m": m, "unknowns": m * m, "gpu": gpu,
            "cupy_cg": {"seconds": t_cupy, "iterations": its_cupy, "status": int(status),
                        "relative_residual": r_cupy},
            "simrun_cg": {"seconds": t_cg, "iterations": info_cg["iterations"],
                          "solve_seconds": info_cg["seconds"],
                          "analysis_seconds": info_cg["analysis_seconds"],
                          "setup_seconds": info_cg["setup_seconds"],
                          "status": info_cg["status"], "format": info_cg["format"],
                          "relative_residual": info_cg["relative_residual"]},
            "simrun_auto": {"seconds": t_auto, "iterations": info_auto["iterations"],
                            "solve_seconds": info_auto["seconds"],
                            "analysis_seconds": info_auto["analysis_seconds"],
                            "setup_seconds": info_auto["setup_seconds"],
                            "method": f'{info_auto["method"]} + {info_auto["preconditioner"]}',
                            "status": info_auto["status"],
                            "relative_residual": info_auto["relative_residual"]},
            "simrun_solver_again": {"seconds": t_again, "iterations": info_again["iterations"],
                                    "solve_seconds": info_again["seconds"],
                                    "analysis_seconds": info_again["analysis_seconds"],
                                    "setup_seconds": info_again["setup_seconds"],
                                    "status": info_again["status"],
                                    "relative_residual": info_again["relative_residual"]},
        }
        rows.append(row)
        c, s, u, g = (row["cupy_cg"], row["simrun_cg"], row["simrun_auto"],
                      row["simrun_solver_again"])
        print(f"\n{m}^2 = {m * m} unknowns, to ||r||/||b|| <= {rtol:g}")
        print(f"  {'':12} {'s per call':>10} {'its':>6} {'solve s':>8} {'analysis s':>10} "
              f"{'set-up s':>8} {'true rel. res.':>14} {'CuPy / this':>11}")
        print(f"  {'cupy cg':12} {c['seconds']:10.3f} {c['iterations']:6d} {'':>8} {'':>10} "
              f"{'':>8} {c['relative_residual']:14.2e} {1.0:11.2f}")
        for name, r in (("simrun cg", s), ("simrun auto", u), ("Solver again", g)):
            print(f"  {name:12} {r['seconds']:10.3f} {r['iterations']:6d} "
                  f"{r['solve_seconds']:8.3f} {r['analysis_seconds']:10.3f} "
                  f"{r['setup_seconds']:8.3f} {r['relative_residual']:14.2e} "
                  f"{c['seconds'] / r['seconds']:11.2f}")
        print(f"  simrun auto: {u['method']}; simrun cg per iteration "
              f"{1e6 * s['solve_seconds'] / max(s['iterations'], 1):.1f} us against CuPy's "
              f"{1e6 * c['seconds'] / max(c['iterations'], 1):.1f} us (whole call)")
        bad = [name for name, r in (("cupy", c), ("simrun cg", s), ("simrun auto", u),
                                    ("Solver again", g))
               if not r["relative_residual"] <= 1.01 * rtol]
        if bad:
            print(f"  NOT CONVERGED: {', '.join(bad)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Plot a simrun grid-convergence study (the JSON of `simrun verify FILE.toml --json`).

Usage:
    postprocess/plot_convergence.py VERIFY.json [MORE.json ...] [-o out.png]
    simrun verify inputs/verify/heat_crank_nicolson_2d.toml --json | \\
        postprocess/plot_convergence.py - -o heat_cn.png

Each input is one object with the keys `problem`, `scheme_space`, `scheme_time`,
`levels` (a list of {h, dt, nodes, error_l2, error_max}), `observed_order_space` and
`observed_order_time` (null for steady problems). The plot is log-log: error_l2 (solid,
circles) and error_max (dash-dot, squares) against the grid spacing h, with dashed
reference slopes of the expected order (central differences 2, upwind 1; in time
backward/explicit Euler 1, Crank-Nicolson 2, converted to a slope in h through the
refinement dt ~ h^r that the levels use). The references are anchored at the finest level,
a factor 2 below its smallest error, so they do not hide the data.
The legend gives the observed orders: the L2 one is the JSON's `observed_order_space`, the
max-norm one is computed here from the two finest levels the same way.

Several JSON files give one curve set (one colour) per file, to compare schemes.

Exit status: 0 written; 1 the PNG could not be written; 2 usage error or a missing or
malformed input file.

Needs Debian's python3 with python3-matplotlib and python3-numpy (not a pyenv python).
"""

import argparse
import json
import math
import os
import sys

EXPECTED_SPACE = {"central": 2.0, "upwind": 1.0}
EXPECTED_TIME = {
    "backward_euler": 1.0,
    "explicit_euler": 1.0,
    "forward_euler": 1.0,
    "crank_nicolson": 2.0,
    "bdf2": 2.0,
}
PRETTY = {
    "central": "central differences",
    "upwind": "upwind",
    "backward_euler": "backward Euler",
    "explicit_euler": "explicit Euler",
    "forward_euler": "forward Euler",
    "crank_nicolson": "Crank\u2013Nicolson",
    "steady": "steady",
}
SUPERSCRIPT = str.maketrans("0123456789.-", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u22c5\u207b")

PROG = "plot_convergence.py"


class InputError(Exception):
    """A user error: missing or malformed input. Reported without a traceback, exit 2."""


def fail(message, code=2):
    print(f"{PROG}: error: {message}", file=sys.stderr)
    sys.exit(code)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Plot the grid-convergence study printed by `simrun verify FILE.toml --json`: "
        "error_l2 and error_max against h on log-log axes, with reference slopes of the "
        "expected orders and the observed orders in the legend.",
        epilog="Example: simrun verify inputs/verify/poisson_2d.toml --json > p.json && "
        f"{PROG} p.json -o p.png.  Several files are drawn on one plot, one colour each.",
    )
    p.add_argument("inputs", nargs="+", metavar="VERIFY.json",
                   help="JSON from `simrun verify ... --json`; '-' reads standard input")
    p.add_argument("-o", "--output", metavar="OUT.png",
                   help="PNG to write (default: the input's name with .png, or "
                   "convergence.png for standard input or several inputs)")
    p.add_argument("--label", action="append", default=[], metavar="TEXT",
                   help="legend name of each input, in order (repeat once per input; "
                   "default: the schemes, plus the file name where they coincide)")
    p.add_argument("--title", help="replace the automatic title")
    p.add_argument("--dpi", type=int, default=150, help="resolution of the PNG (default 150)")
    args = p.parse_args(argv)
    if args.inputs.count("-") > 1:
        p.error("standard input ('-') can be read only once")
    if args.label and len(args.label) != len(args.inputs):
        p.error(f"--label given {len(args.label)} times for {len(args.inputs)} inputs")
    if args.dpi < 20 or args.dpi > 1200:
        p.error("--dpi must be between 20 and 1200")
    return args


def _number(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{what} must be a finite number, got {json.dumps(value)}")
    return float(value)


def load_study(path):
    """Read and validate one verify JSON; return a dict with the fields the plot uses."""
    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
    except FileNotFoundError:
        raise InputError(f"{name}: no such file")
    except IsADirectoryError:
        raise InputError(f"{name}: is a directory, expected a JSON file")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{name}: cannot read: {exc}")
    if not text.strip():
        raise InputError(f"{name}: empty input (did `simrun verify` fail?)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{name}: not valid JSON (line {exc.lineno}, column {exc.colno}: "
                         f"{exc.msg}); run `simrun verify FILE.toml --json`")
    if not isinstance(data, dict):
        raise InputError(f"{name}: expected a JSON object from `simrun verify --json`")
    levels = data.get("levels")
    if not isinstance(levels, list) or not levels:
        raise InputError(f"{name}: missing or empty 'levels' list (is this `simrun verify --json` "
                         "output?)")
    rows = []
    for i, level in enumerate(levels):
        if not isinstance(level, dict):
            raise InputError(f"{name}: levels[{i}] is not an object")
        row = {}
        for key in ("h", "error_l2", "error_max"):
            if key not in level:
                raise InputError(f"{name}: levels[{i}] has no '{key}'")
            row[key] = _number(level[key], f"{name}: levels[{i}].{key}")
        row["dt"] = _number(level.get("dt", 0.0) or 0.0, f"{name}: levels[{i}].dt")
        if row["h"] <= 0:
            raise InputError(f"{name}: levels[{i}].h must be > 0, got {row['h']}")
        if row["error_l2"] < 0 or row["error_max"] < 0:
            raise InputError(f"{name}: levels[{i}] has a negative error")
        rows.append(row)
    rows.sort(key=lambda r: -r["h"])  # coarse to fine
    if not any(r["error_l2"] > 0 or r["error_max"] > 0 for r in rows):
        raise InputError(f"{name}: every error is zero; nothing to draw on a log axis")

    def text_field(key, default="unknown"):
        value = data.get(key, default)
        return value if isinstance(value, str) and value else default

    def order_field(key):
        value = data.get(key)
        if value is None:
            return None
        return _number(value, f"{name}: {key}")

    return {
        "name": name,
        "problem": text_field("problem"),
        "space": text_field("scheme_space"),
        "time": text_field("scheme_time", "steady"),
        "levels": rows,
        "order_space": order_field("observed_order_space"),
        "order_time": order_field("observed_order_time"),
    }


def observed_order(levels, key):
    """Order from the two finest levels with positive error (as simrun reports it), or None."""
    pts = [(r["h"], r[key]) for r in levels if r[key] > 0]
    if len(pts) < 2 or pts[-2][0] == pts[-1][0]:
        return None
    (h1, e1), (h2, e2) = pts[-2], pts[-1]
    return math.log(e1 / e2) / math.log(h1 / h2)


def dt_exponent(levels):
    """r in dt ~ h^r fitted over the levels (None when steady or dt is constant/absent)."""
    pts = [(math.log(r["h"]), math.log(r["dt"])) for r in levels if r["dt"] > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    if sxx == 0:
        return None
    r = sum((x - mx) * (y - my) for x, y in pts) / sxx
    return round(r * 2) / 2  # 1, 1.5, 2 ...: the refinement simrun applies


def fmt_power(p):
    text = f"{p:g}"
    return "" if text == "1" else text.translate(SUPERSCRIPT)


def expected_slopes(study):
    """[(slope in h, label)] for the reference lines of one study."""
    p_s = EXPECTED_SPACE.get(study["space"])
    p_t = EXPECTED_TIME.get(study["time"])
    r = dt_exponent(study["levels"])
    out = []
    if p_s is not None:
        out.append([p_s, f"O(h{fmt_power(p_s)})"])
    if p_t is not None and r is not None:
        slope = p_t * r
        label = f"O(\u0394t{fmt_power(p_t)})"
        for entry in out:
            if abs(entry[0] - slope) < 1e-9:
                entry[1] += f" = {label}"
                break
        else:
            out.append([slope, f"{label} = O(h{fmt_power(slope)})"])
    return [tuple(e) for e in out]


def scheme_text(study):
    space = PRETTY.get(study["space"], study["space"])
    time = PRETTY.get(study["time"], study["time"])
    return f"{space}, {time}" if study["time"] != "steady" else f"{space}, steady"


def default_labels(studies):
    problems = {s["problem"] for s in studies}
    labels = []
    for s in studies:
        base = scheme_text(s)
        labels.append(f"{s['problem']}: {base}" if len(problems) > 1 else base)
    for i, label in enumerate(labels):
        if labels.count(label) > 1:
            stem = os.path.splitext(os.path.basename(studies[i]["name"]))[0]
            labels[i] = f"{label} [{stem}]"
    return labels


def refinement_text(study):
    r = dt_exponent(study["levels"])
    if study["time"] == "steady" or r is None:
        return None
    return f"\u0394t \u221d h{fmt_power(r)}"


def order_text(p):
    return "n/a" if p is None else f"{p:.2f}"


def plot(studies, labels, title, out_path, dpi):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    plt.rcParams.update({"font.size": 12, "axes.titlesize": 13, "legend.fontsize": 10})
    single = len(studies) == 1
    height = 6.2 if single else 6.4 + 0.26 * (len(studies) + 3)
    fig, ax = plt.subplots(figsize=(8.2, height), layout="constrained")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    handles = []  # single study: one entry per line; several: one per study + a style key
    hmin, hmax = math.inf, 0.0
    for i, (study, label) in enumerate(zip(studies, labels)):
        colour = colours[i % len(colours)]
        lv = study["levels"]
        hmin = min(hmin, lv[-1]["h"])
        hmax = max(hmax, lv[0]["h"])
        p_l2 = study["order_space"] if study["order_space"] is not None \
            else observed_order(lv, "error_l2")
        p_max = observed_order(lv, "error_max")
        for key, norm, style, marker, p in (
                ("error_l2", "L\u2082 error", "-", "o", p_l2),
                ("error_max", "max error", "-.", "s", p_max)):
            pts = [(r["h"], r[key]) for r in lv if r[key] > 0]
            if not pts:
                continue
            (line,) = ax.loglog([h for h, _ in pts], [e for _, e in pts], style, marker=marker,
                                color=colour, lw=2 if key == "error_l2" else 1.5, ms=7,
                                label=f"{norm}, observed order {order_text(p)}")
            if single:
                handles.append(line)
        if single and study["order_time"] is not None:
            handles.append(Line2D([], [], ls="none", label="observed order in \u0394t "
                                  f"{order_text(study['order_time'])}"))
        # reference slopes, anchored at the finest level (a factor 2 below its smallest error)
        refs = expected_slopes(study)
        fine = lv[-1]
        finest_errors = [e for e in (fine["error_l2"], fine["error_max"]) if e > 0]
        if finest_errors:
            anchor_e = 0.5 * min(finest_errors)
            hs = [lv[0]["h"], fine["h"]]
            for j, (slope, ref_label) in enumerate(refs):
                ys = [anchor_e * (h / fine["h"]) ** slope for h in hs]
                (ref,) = ax.loglog(hs, ys, "--" if j == 0 else ":",
                                   color="0.35" if single else colour, lw=1.4, alpha=0.9,
                                   label=f"expected {ref_label}")
                if single:
                    handles.append(ref)
        if not single:
            text = f"{label}: order {order_text(p_l2)} (L\u2082), {order_text(p_max)} (max)"
            if study["order_time"] is not None:
                text += f", {order_text(study['order_time'])} in \u0394t"
            if refs:
                text += "; expected " + ", ".join(r for _, r in refs)
            handles.append(Line2D([], [], color=colour, lw=6, label=text))
    if not single:
        handles += [
            Line2D([], [], color="0.2", ls="-", marker="o", lw=2, label="L\u2082 error"),
            Line2D([], [], color="0.2", ls="-.", marker="s", lw=1.5, label="max error"),
            Line2D([], [], color="0.2", ls="--", lw=1.4,
                   label="expected slope (dotted: time term, where it differs)"),
        ]
    if not math.isfinite(hmin):
        raise InputError("nothing to plot")
    ax.set_xlabel("grid spacing h  (domain units; finer \u2190)")
    ax.set_ylabel("error of u against the exact solution")
    ax.grid(True, which="major", alpha=0.45)
    ax.grid(True, which="minor", alpha=0.15)
    if hmax / hmin < 10:  # few levels: label the h values themselves
        from matplotlib.ticker import FixedLocator, NullFormatter
        hs_all = sorted({r["h"] for s in studies for r in s["levels"]})
        ax.xaxis.set_major_locator(FixedLocator(hs_all))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
            lambda v, _: f"1/{round(1 / v):d}" if abs(1 / v - round(1 / v)) < 1e-6 else f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(hmin / 1.25, hmax * 1.25)
    if title is None:
        if single:
            s = studies[0]
            title = f"Grid convergence: {s['problem']} \u2014 {scheme_text(s)}"
            extra = refinement_text(s)
            if extra:
                title += f"\n(levels refine h and \u0394t together, {extra})"
        else:
            problems = sorted({s["problem"] for s in studies})
            title = f"Grid convergence: {', '.join(problems)} \u2014 {len(studies)} studies"
    ax.set_title(title)
    if single:
        ax.legend(handles=handles, loc="lower right", framealpha=0.92)
    else:  # below the axes, so it never hides a curve
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.13),
                  framealpha=0.92, fontsize=9.5)
    fig.savefig(out_path, dpi=dpi)
    plt.close(fig)


def default_output(inputs):
    if len(inputs) == 1 and inputs[0] != "-":
        base = inputs[0][:-5] if inputs[0].endswith(".json") else inputs[0]
        return base + ".png"
    return "convergence.png"


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        studies = [load_study(path) for path in args.inputs]
        labels = args.label or default_labels(studies)
        out = args.output or default_output(args.inputs)
        if os.path.isdir(out):
            raise InputError(f"-o {out}: is a directory, expected a .png file name")
    except InputError as exc:
        fail(str(exc), 2)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        fail("matplotlib is missing: run this script with Debian's /usr/bin/python3 "
             "(apt-get install python3-matplotlib)", 2)
    try:
        plot(studies, labels, args.title, out, args.dpi)
    except InputError as exc:
        fail(str(exc), 2)
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}", 1)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

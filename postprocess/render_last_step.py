"""Open a simrun time series in ParaView, report its last step and optionally render it.

Usage:
    pvbatch postprocess/render_last_step.py RUN_FILE [--field u] [--png out.png] [--check]

RUN_FILE is the .pvd (VTK collection of .vti files) or the .xmf (XDMF 3 over the .h5)
that simrun writes, e.g. output/heat/heat.pvd or output/heat/heat.xmf.

The file is opened with ParaView's own reader (OpenDataFile); the script prints the
reader's time steps (count, first, last), the dataset bounds, and the name and range of
the field at the last time step. With --png it renders the last step (surface colored by
the field, with a scalar bar, camera fitted to the 2D field) to a PNG. With --check it
exits with status 1 unless: there are >= 2 time steps, the times strictly increase, the
field exists, and its range at the last step is finite and not constant.

Running it on Debian 12 (ParaView 5.11). The `python3-paraview` package conflicts with
`python3-vtk9`, so install only `paraview` (which provides /usr/bin/pvbatch) and unpack
the Python modules by hand:

    apt-get install -y --no-install-recommends paraview xvfb xauth
    cd /tmp && apt-get download python3-paraview
    dpkg -x /tmp/python3-paraview_*.deb /opt/pv

    PYTHONPATH=/opt/pv/usr/lib/python3/dist-packages \\
        xvfb-run -a pvbatch postprocess/render_last_step.py output/heat/heat.pvd \\
        --png /tmp/heat.png --check

Without PYTHONPATH pvbatch fails with "No module named 'paraview'"; without xvfb-run
(no X display) rendering aborts with SIGABRT. LD_LIBRARY_PATH is not needed. Use pvbatch:
the unpacked /opt/pv/usr/bin/pvpython puts /lib/python3/dist-packages (python3-vtk9's VTK
9.1 vtkmodules) ahead of PYTHONPATH and segfaults on import. If pvbatch aborts with
"bad X server connection. DISPLAY=:99" (seen intermittently, probably another
xvfb-run -a racing for the same display): rerun, or pick a display (xvfb-run -n 57 ...).

Note on the .xmf: ParaView's XDMF readers (Xdmf3ReaderS/T and XDMFReader) place a
2DCoRectMesh in the yz plane (x = 0; ParaView y = simrun x, z = simrun y); the values
are right, only the plane differs from the .pvd. The camera here looks along whichever
axis is flat, and the script prints a WARNING when the field is not in the xy plane.

Requires only ParaView's paraview.simple (Python 3).
"""

import argparse
import math
import os
import sys

from paraview.simple import (
    ColorBy,
    Delete,
    GetActiveViewOrCreate,
    GetColorTransferFunction,
    GetScalarBar,
    OpenDataFile,
    Render,
    SaveScreenshot,
    Show,
    UpdatePipeline,
)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="pvbatch postprocess/render_last_step.py",
        description="Report (and optionally render) the last time step of a simrun .pvd/.xmf.",
    )
    p.add_argument("run_file", help="simrun output: .pvd or .xmf")
    p.add_argument("--field", default="u", help="array to report/color by (default: u)")
    p.add_argument("--png", help="render the last step to this PNG file")
    p.add_argument("--check", action="store_true",
                   help="exit non-zero unless times/field/range look sane")
    return p.parse_args(argv)


def find_array(reader, name):
    """Return (association, array_info) for `name`, point data first, or (None, None)."""
    for assoc, arrays in (("POINTS", reader.PointData), ("CELLS", reader.CellData)):
        if name in arrays.keys():
            return assoc, arrays[name]
    return None, None


def main(argv):
    args = parse_args(argv)
    path = os.path.abspath(args.run_file)
    failures = []

    if not os.path.isfile(path):
        print("error: no such file: %s" % path, file=sys.stderr)
        return 2

    reader = OpenDataFile(path)
    if reader is None:
        print("error: ParaView found no reader for %s" % path, file=sys.stderr)
        return 2

    times = list(getattr(reader, "TimestepValues", None) or [])
    # A single time step is reported by some readers as a bare float.
    if isinstance(times, float):
        times = [times]
    print("file: %s (reader %s)" % (path, reader.GetXMLName()))
    if times:
        print("time steps: %d  first = %.17g  last = %.17g" % (len(times), times[0], times[-1]))
        print("times: " + " ".join("%.6g" % t for t in times))
    else:
        print("time steps: 0 (reader reports no time information)")

    if len(times) < 2:
        failures.append("fewer than 2 time steps (%d)" % len(times))
    bad = [i for i in range(1, len(times)) if not times[i] > times[i - 1]]
    if bad:
        failures.append("times not strictly increasing at index %s" % bad[:5])

    last = times[-1] if times else None
    if last is not None:
        UpdatePipeline(time=last, proxy=reader)
    else:
        UpdatePipeline(proxy=reader)

    info = reader.GetDataInformation()
    b = info.GetBounds()
    print("bounds: x [%.9g, %.9g]  y [%.9g, %.9g]  z [%.9g, %.9g]" % tuple(b))
    print("points: %d  cells: %d" % (info.GetNumberOfPoints(), info.GetNumberOfCells()))
    ext = [b[2 * i + 1] - b[2 * i] for i in range(3)]
    if ext[2] > 0 and min(ext) == 0:
        print("WARNING: the 2D field does not lie in the xy plane (bounds above); "
              "the reader placed it in the %s plane" % ("yz" if ext[0] == 0 else "xz"))

    assoc, arr = find_array(reader, args.field)
    if arr is None:
        avail = list(reader.PointData.keys()) + list(reader.CellData.keys())
        print("field '%s': NOT FOUND (available: %s)" % (args.field, ", ".join(avail) or "none"))
        failures.append("field '%s' not found" % args.field)
        lo = hi = None
    else:
        lo, hi = arr.GetRange(-1 if arr.GetNumberOfComponents() > 1 else 0)
        print("field '%s' (%s data, %d component(s)) at t = %s: range [%.9g, %.9g]"
              % (arr.GetName(), assoc.lower()[:-1], arr.GetNumberOfComponents(),
                 "%.17g" % last if last is not None else "n/a", lo, hi))
        if not (math.isfinite(lo) and math.isfinite(hi)):
            failures.append("range not finite [%r, %r]" % (lo, hi))
        elif not hi > lo:
            failures.append("field constant at last step (%r)" % lo)

    if args.png:
        view = GetActiveViewOrCreate("RenderView")
        view.ViewSize = [1000, 800]
        if last is not None:
            view.ViewTime = last
        view.OrientationAxesVisibility = 0
        disp = Show(reader, view)
        disp.Representation = "Surface"
        if arr is not None:
            ColorBy(disp, (assoc, arr.GetName()))
            lut = GetColorTransferFunction(arr.GetName())
            lut.RescaleTransferFunction(lo, hi)
            disp.SetScalarBarVisibility(view, True)
            bar = GetScalarBar(lut, view)
            bar.Title = arr.GetName()
            bar.ComponentTitle = ""
        # Camera fitted to a 2D field: look along the flat axis (z for a field in the
        # xy plane), parallel projection, zoomed to the data.
        ext = [b[2 * i + 1] - b[2 * i] for i in range(3)]
        flat = min(range(3), key=lambda i: ext[i])
        center = [0.5 * (b[2 * i] + b[2 * i + 1]) for i in range(3)]
        pos = list(center)
        pos[flat] += 10.0 * (max(ext) or 1.0)
        view.InteractionMode = "2D"
        view.CameraFocalPoint = center
        view.CameraPosition = pos
        view.CameraViewUp = [0.0, 1.0, 0.0] if flat == 2 else [0.0, 0.0, 1.0]
        view.ResetCamera(False)
        Render(view)
        out = os.path.abspath(args.png)
        SaveScreenshot(out, view, ImageResolution=[1000, 800])
        print("png: %s" % out)
        # Release the render window before exiting: with SystemExit still holding it,
        # pvbatch's teardown under Xvfb dies with "X Error ... GLXBadContext" and
        # status 1, which would mask the --check result.
        Delete(disp)
        Delete(view)
        del disp, view

    if args.check:
        if failures:
            for f in failures:
                print("CHECK FAILED: " + f)
            return 1
        print("CHECK OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

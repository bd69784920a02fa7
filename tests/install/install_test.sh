#!/usr/bin/env bash
# cmake --install into a temporary prefix, then two outside projects found through
# find_package(simrun): one solves a Matrix Market system with simrun::solvers alone (and must not
# link the framework or HDF5), one runs a TOML input through simrun::framework and the problems.
#   install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
# The consumers' CMake finds the CUDA toolkit (when simrun was built with it) as simrun's did.
[[ -x /usr/local/cuda/bin/nvcc ]] && export PATH=/usr/local/cuda/bin:$PATH

echo "== cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/simrun lib/cmake/simrun/simrunConfig.cmake lib/cmake/simrun/simrunConfigVersion.cmake \
         include/simrun/version.hpp include/simrun/solvers/base/backend.hpp \
         include/simrun/framework/run/simulation.hpp; do
    [[ -e $prefix/$f ]] || { echo "not installed: $f"; exit 1; }
done
"$prefix/bin/simrun" --version | head -1

# The Python module, where the build has it: installed with the rest and importable from the
# prefix alone, solving a system.
if compgen -G "$build/python/simrun/_simrun*.so" >/dev/null; then
    echo "== the Python module from the prefix"
    PYTHONPATH=$prefix/lib/python3/dist-packages /usr/bin/python3 - "$prefix" <<'PY'
import sys
import numpy as np, scipy.sparse as sp
import simrun
assert simrun.__file__.startswith(sys.argv[1]), simrun.__file__
a = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(50, 50), format="csr")
x, info = simrun.solve(a, a @ np.ones(50), backend="cpu")
assert info["status"] == "converged" and np.abs(x - 1).max() < 1e-6, info
print("simrun", simrun.__version__, "from", simrun.__file__, ":", info["method"], info["iterations"], "iterations")
PY
fi

for project in solver_only framework_run; do
    echo "== $project: configure and build against the installed package"
    cmake -S "$source/tests/install/$project" -B "$work/$project" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$prefix" >"$work/$project.configure.log" ||
        { cat "$work/$project.configure.log"; exit 1; }
    cmake --build "$work/$project" -j 2 >"$work/$project.build.log" ||
        { cat "$work/$project.build.log"; exit 1; }
done

echo "== solver_only: the solver library alone"
"$work/solver_only/solve_mtx" "$source/tests/data/matrices/nos3.mtx"
if ldd "$work/solver_only/solve_mtx" | grep -E 'libhdf5|libmuparser|libpng|liblz4'; then
    echo "solve_mtx links framework dependencies"
    exit 1
fi
if grep -q 'simrun_framework' "$work/solver_only/CMakeFiles/solve_mtx.dir/link.txt"; then
    echo "solve_mtx links the framework"
    exit 1
fi

echo "== framework_run: a TOML input through the framework and the problems"
cat >"$work/heat.toml" <<'TOML'
[problem]
type = "heat"
alpha = 0.1
initial = "sin(pi*x)*sin(pi*y)"

[grid]
nx = 17
ny = 17

[boundary]
all = "0"

[time]
dt = 0.01
end = 0.05

[output]
basename = "outside"
TOML
"$work/framework_run/run_toml" "$work/heat.toml" "$work/out"
[[ -s $work/out/outside.h5 && -s $work/out/outside.pvd ]] ||
    { echo "run_toml wrote no outside.h5 and outside.pvd"; ls -R "$work/out"; exit 1; }
echo "install test: passed"

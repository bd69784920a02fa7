#pragma once
// `simrun bench`: the performance harness. Times simrun's solvers on generated PDE matrices
// (2D 5-point and 3D 7-point Poisson, 2D convection-diffusion) and on the real matrices in
// tests/data/matrices, in every format (DIA, ELLPACK-R, CSR) and precision, and states each
// time against the memory-traffic floor and, on CUDA, against CG written with cuSPARSE and
// cuBLAS. docs/benchmarks.md says what is measured and how.
#include <string>
#include <vector>

#include "simrun/solvers/base/backend.hpp"

namespace simrun::app {

struct BenchOptions {
    solvers::BackendChoice backend = solvers::BackendChoice::automatic;
    // A small subset that runs in under a minute on 2 CPU cores: 2D 128^2 and 256^2 and the
    // matching 3D cubes, one CG case at 1024^2 (larger than a CPU's cache), three real
    // matrices, 3 timed repeats.
    bool quick = false;
    // Edge lengths m of the 2D m x m grids (empty: 128 256 512 1024 2048 4096, or the quick
    // set). Each 3D case uses the cube with about as many rows, round((m^2)^(1/3)).
    std::vector<long long> sizes;
    // The Matrix Market files to time (every *.mtx there, or three of them with quick). A
    // relative path is taken from the working directory; a directory that does not exist
    // skips the real-matrix cases with a note.
    std::string matrices = "tests/data/matrices";
    // The cuSPARSE/cuBLAS baseline (its module, baseline_module.hpp): "auto" times it on CUDA
    // where the module loads and says why not where it does not; "on" requires it (the run
    // stops with the reason where it cannot be had, or where the back-end is not CUDA); "off"
    // never loads it.
    std::string baseline = "auto";
    std::string json;    // write the results as JSON here (empty: no JSON file)
    std::string report;  // write a markdown report here (empty: none)
};

// Runs every case, printing a table row as each finishes, then writes the JSON and the
// report. Returns 0 when every case ran, 1 when one failed (its error is printed and it is
// listed under "failed" in the JSON). Throws InputError for bad options and
// solvers::NotCompiled / DeviceUnavailable when the back-end cannot be made.
int run_bench(const BenchOptions& options);

}  // namespace simrun::app

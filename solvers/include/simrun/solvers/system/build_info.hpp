#pragma once
// What this build of the solver layer holds, for `simrun --version` and for programs that link
// the library: facts fixed when it was compiled, found without touching a GPU.
#include <string>
#include <string_view>

namespace simrun::solvers {

struct SolverBuildInfo {
    // "sm_90 + compute_90 PTX, CUDA 13.0.88"; empty in a build without the CUDA back-end.
    std::string cuda;
    // "5.0 (201811)": the OpenMP version the CPU back-end was compiled against.
    std::string openmp;
};

SolverBuildInfo solver_build_info();

// Reads a CMAKE_CUDA_ARCHITECTURES list (entries separated by ';' or ',') as what the binary
// carries: "90" gives
// "sm_90 + compute_90 PTX", "90-real" "sm_90", "90-virtual" "compute_90 PTX"; entries are
// joined by ", " and anything else ("native", "all") is kept as written.
std::string describe_cuda_architectures(std::string_view cmake_architectures);

// An OpenMP version date (the _OPENMP macro, e.g. 201811) with its specification number:
// "5.0 (201811)"; an unknown date is given alone.
std::string describe_openmp_version(long openmp_date);

}  // namespace simrun::solvers

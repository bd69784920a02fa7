#pragma once
// The baseline module (libsimrun_bench_baseline.so, the cuSPARSE/cuBLAS CG of baseline_cg.cu),
// loaded with dlopen the first time the benchmark needs it, so that the executable links
// neither cuSPARSE nor cuBLAS and no other command pays for them at start-up.
//
// Where it is looked for: the file named by $SIMRUN_BENCH_BASELINE alone (relative to the working
// directory where it is not absolute), where that is set and not empty; otherwise beside the
// executable (the build tree), then in the installed layout (<libdir>/simrun/ for
// <bindir>/simrun: the path from the executable's directory is fixed at configure time from
// CMAKE_INSTALL_BINDIR and CMAKE_INSTALL_LIBDIR).
#include <stdexcept>
#include <string>

#include "baseline_module_abi.hpp"

namespace simrun::app {

// The baseline cannot be had: no module where it was looked for, a module whose libraries
// (cuSPARSE, cuBLAS, the CUDA runtime) the loader cannot find, another ABI version, or a build
// without CUDA. The message says which, naming every place tried.
class BaselineUnavailable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct BaselineModule {
    const SimrunBaselineTable* table = nullptr;
    std::string path;  // the file it was loaded from
};

// The module, loaded at the first call and kept until the process ends (its libraries are
// never unloaded). Throws BaselineUnavailable, at every call, where the load failed.
const BaselineModule& baseline_module();

}  // namespace simrun::app

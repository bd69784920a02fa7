#include "version_report.hpp"

#include <H5public.h>
#include <lz4.h>
#include <muParserDef.h>
#include <png.h>
#include <toml++/toml.h>
#include <zlib.h>

#include <CLI/CLI.hpp>
#include <CLI/Version.hpp>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/system/build_info.hpp"
#include "simrun/version.hpp"

namespace simrun::app {
namespace {

std::string dotted(unsigned major, unsigned minor, unsigned patch) {
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// Versions of the libraries as linked (run-time queries where the library offers one).
std::string library_versions() {
    unsigned h5_major = 0, h5_minor = 0, h5_release = 0;
    H5get_libversion(&h5_major, &h5_minor, &h5_release);
    std::string muparser = mu::ParserVersion;
    muparser = muparser.substr(0, muparser.find(' '));
    return "toml++ " + dotted(TOML_LIB_MAJOR, TOML_LIB_MINOR, TOML_LIB_PATCH) + ", muParser " +
           muparser + ", CLI11 " + CLI11_VERSION + ", nlohmann_json " +
           dotted(NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR,
                  NLOHMANN_JSON_VERSION_PATCH) +
           ", HDF5 " + dotted(h5_major, h5_minor, h5_release) + ", libpng " +
           png_get_libpng_ver(nullptr) + ", zlib " + zlibVersion() + ", LZ4 " + LZ4_versionString();
}

std::string compiler() {
#if defined(__clang__)
    return std::string("Clang ") + __clang_version__;
#elif defined(__GNUC__)
    return "GCC " + dotted(__GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
    return "unknown compiler";
#endif
}

}  // namespace

std::string version_report() {
    const solvers::SolverBuildInfo build = solvers::solver_build_info();
    std::string report = "simrun " SIMRUN_VERSION_STRING "\n";
    report += "  commit         " + std::string(build_commit()) + "\n";
    report += "  CUDA back-end  " +
              (build.cuda.empty() ? std::string("not built (no nvcc when configured)")
                                  : "built for " + build.cuda) +
              "\n";
    report += "  MPI            " +
              (solvers::mpi_compiled()
                   ? "built in: " + solvers::mpi_library_version() + " (mpirun -np K simrun ...)"
                   : std::string("not built in (no MPI when configured)")) +
              "\n";
    // The policy libgomp read when it loaded (main.cpp defaults it to passive).
    const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
    report += "  OpenMP         " + (build.openmp.empty() ? "none" : build.openmp) +
              ", waiting threads " + (wait_policy != nullptr ? wait_policy : "unset") +
              " (OMP_WAIT_POLICY)\n";
    report += "  compiler       " + compiler() + ", " SIMRUN_BUILD_TYPE " build\n";
    report += "  libraries      " + library_versions() + "\n";
    return report;
}

void add_version_flag(CLI::App& app) {
    app.set_version_flag(
        "--version",
        [] {
            std::string report = version_report();
            if (!report.empty() && report.back() == '\n') report.pop_back();
            return report;
        },
        "Print the version, commit, CUDA architectures and dependency versions, and exit");
}

}  // namespace simrun::app

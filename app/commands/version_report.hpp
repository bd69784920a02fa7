#pragma once
// `simrun --version`: what this binary is and what it was built with.
#include <CLI/CLI.hpp>
#include <string>

namespace simrun::app {

// The commit the build was made from (generated at build time by cmake/SimrunBuildCommit.cmake).
const char* build_commit();

// Several lines: the version and commit, the CUDA back-end (built or not, for which
// architectures), MPI, OpenMP, the compiler and the versions of the libraries linked in.
std::string version_report();

// `simrun --version`: prints the report and exits 0 (CLI::Success).
void add_version_flag(CLI::App& app);

}  // namespace simrun::app

#pragma once
// What stops a file from being read as input, said plainly: a missing file, a directory, a
// device or a pipe (reading /dev/zero would never end), a loop of symbolic links, no permission,
// or a size past the caller's limit. The readers of the input file, matrices, images and restart
// files ask before they open, and put the answer in their own error.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace simrun::solvers {

// Nothing when `path` is a readable regular file of at most max_bytes (following links);
// otherwise the reason, e.g. "no such file", "it is a directory", "it is not a regular file (a
// device, a pipe or a socket)", "too many levels of symbolic links", "it is 300 MiB, more than
// the 256 MiB an input may be".
std::optional<std::string> input_file_problem(const std::filesystem::path& path,
                                              std::uintmax_t max_bytes = UINTMAX_MAX);

}  // namespace simrun::solvers

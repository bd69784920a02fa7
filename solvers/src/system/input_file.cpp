#include "simrun/solvers/system/input_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace simrun::solvers {

std::optional<std::string> input_file_problem(const std::filesystem::path& path,
                                              std::uintmax_t max_bytes) {
    struct stat status {};
    if (::stat(path.c_str(), &status) != 0) {
        if (errno == ENOENT) return "no such file";
        return std::string(std::strerror(errno));  // ELOOP, EACCES, ENOTDIR, ...
    }
    if (S_ISDIR(status.st_mode)) return "it is a directory";
    if (!S_ISREG(status.st_mode)) return "it is not a regular file (a device, a pipe or a socket)";
    if (::access(path.c_str(), R_OK) != 0) return std::string(std::strerror(errno));
    const auto bytes = static_cast<std::uintmax_t>(status.st_size);
    if (bytes > max_bytes) {
        return "it is " + std::to_string(bytes >> 20) + " MiB, more than the " +
               std::to_string(max_bytes >> 20) + " MiB an input of this kind may be";
    }
    return std::nullopt;
}

}  // namespace simrun::solvers

#pragma once
// Runs the simrun executable in a fresh temporary directory and captures its exit code,
// standard output and standard error.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace simrun::testing {

struct CommandResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

// A temporary directory removed at scope exit.
class TemporaryDirectory {
public:
    TemporaryDirectory() {
        std::random_device seed;
        path_ = std::filesystem::temp_directory_path() /
                ("simrun-test-" + std::to_string(seed()) + std::to_string(seed()));
        std::filesystem::create_directories(path_);
    }
    ~TemporaryDirectory() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    TemporaryDirectory(const TemporaryDirectory&) = delete;
    TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
    const std::filesystem::path& path() const { return path_; }
    // Writes a file in the directory and returns its path.
    std::filesystem::path write(const std::string& name, const std::string& text) const {
        std::ofstream(path_ / name) << text;
        return path_ / name;
    }

private:
    std::filesystem::path path_;
};

inline std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Runs `simrun ARGUMENTS` with `directory` as working directory. ARGUMENTS is shell text, and
// so is ENVIRONMENT (assignments put before the command, e.g. "OMP_NUM_THREADS=1").
inline CommandResult run_simrun(const std::string& arguments,
                                const std::filesystem::path& directory,
                                const std::string& environment = "") {
    const std::string command = "cd '" + directory.string() + "' && " + environment + " '" +
                                SIMRUN_EXECUTABLE "' " + arguments + " > .stdout 2> .stderr";
    const int status = std::system(command.c_str());
    CommandResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = read_text(directory / ".stdout");
    result.err = read_text(directory / ".stderr");
    std::filesystem::remove(directory / ".stdout");
    std::filesystem::remove(directory / ".stderr");
    return result;
}

}  // namespace simrun::testing

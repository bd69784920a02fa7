#pragma once
// One run at a time writes a basename's outputs in a directory. Two runs into the same files
// would interleave their steps (an .xmf describing one run's grid over the other's .h5), and
// each would report success. The lock is advisory (flock) on ".<basename>.lock" in the
// directory, held while the run lives and dropped by the kernel when the process ends, however
// it ends (a SIGKILL included), so a killed run never blocks the next.
#include <filesystem>
#include <stdexcept>
#include <string>

namespace simrun::framework {

class OutputInUse : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class OutputLock {
public:
    // Creates the directory when missing and takes the lock. Throws OutputInUse naming the
    // directory, the basename and the process holding them, std::runtime_error naming the path
    // and the OS error when the directory (a read-only file system) or the lock file cannot be
    // made. Once held, removes the temporary
    // files a killed run of this basename left (solvers::AtomicReplace's names). On a file
    // system without flock the run goes on unguarded (and removes nothing).
    OutputLock(const std::filesystem::path& directory, const std::string& basename);
    ~OutputLock();
    OutputLock(const OutputLock&) = delete;
    OutputLock& operator=(const OutputLock&) = delete;

private:
    int fd_ = -1;
};

}  // namespace simrun::framework

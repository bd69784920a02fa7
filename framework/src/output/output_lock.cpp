#include "simrun/framework/output/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <system_error>

#include "simrun/solvers/system/atomic_file.hpp"

namespace simrun::framework {
namespace {

// Whether `name` is "<basename>_<digits>": a step's directory of VTK pieces.
bool is_piece_directory(const std::string& name, const std::string& basename) {
    if (name.size() <= basename.size() + 1 || !name.starts_with(basename + "_")) return false;
    return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(basename.size() + 1), name.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
}

// Removes ".<basename>....<random>.tmp" entries: the temporaries of the .pvd, .vti, .pvti, .h5
// and .xmf files of this basename that a killed run left behind, and of its steps' pieces (in
// the steps' piece directories, one level down).
void remove_stale_temporaries(const std::filesystem::path& directory, const std::string& basename,
                              bool pieces_below = true) {
    constexpr std::size_t random_suffix = 1 + 16 + 4;  // ".<16 hex digits>.tmp"
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
        const std::string name = entry.path().filename().string();
        if (pieces_below && is_piece_directory(name, basename) && entry.is_directory(error) &&
            !entry.is_symlink(error)) {
            remove_stale_temporaries(entry.path(), basename, false);
            continue;
        }
        if (name.size() <= 1 + basename.size() + random_suffix) continue;
        const std::string target = name.substr(1, name.size() - 1 - random_suffix);
        if (target.starts_with(basename) && solvers::is_atomic_temporary_of(name, target) &&
            entry.is_regular_file(error)) {
            std::filesystem::remove(entry.path(), error);
        }
    }
}

}  // namespace

OutputLock::OutputLock(const std::filesystem::path& directory, const std::string& basename) {
    // The directory's own error (a read-only file system, a file in the way), not the lock
    // file's "No such file" that would follow.
    std::error_code error;
    std::filesystem::create_directories(directory, error);
    if (error) {
        throw std::runtime_error("cannot create the output directory '" + directory.string() +
                                 "': " + error.message());
    }
    const auto path = directory / ("." + basename + ".lock");
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd_ < 0) {
        throw std::runtime_error("cannot open the lock file '" + path.string() +
                                 "': " + std::strerror(errno));
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int cause = errno;
        char holder[32] = {};
        const ssize_t got = ::pread(fd_, holder, sizeof holder - 1, 0);
        ::close(fd_);
        fd_ = -1;
        if (cause != EWOULDBLOCK) {
            // A file system without flock (some network mounts: ENOLCK, EOPNOTSUPP): the run
            // goes on unguarded, as before there was a lock, and leaves others' files alone.
            return;
        }
        std::string who = got > 0 ? std::string(holder, static_cast<std::size_t>(got)) : "";
        while (!who.empty() && (who.back() == '\n' || who.back() == ' ')) who.pop_back();
        throw OutputInUse("output directory '" + directory.string() + "' is in use: another run" +
                          (who.empty() ? "" : " (process " + who + ")") + " is writing '" +
                          basename +
                          "' there; wait for it to end, or choose another --output or "
                          "[output] basename");
    }
    // Who holds it, for the message of the next one (the lock itself is the flock).
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd_, 0) == 0) {
        [[maybe_unused]] const ssize_t written = ::pwrite(fd_, pid.data(), pid.size(), 0);
    }
    remove_stale_temporaries(directory, basename);
}

OutputLock::~OutputLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace simrun::framework

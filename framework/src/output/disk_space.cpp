#include "disk_space.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace simrun::framework {
namespace {

// The file opened for writing without following a link; closed on scope exit.
class Descriptor {
public:
    explicit Descriptor(const std::filesystem::path& path)
        : fd_(::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) {}
    ~Descriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

off_t size_of(int fd) {
    struct stat status {};
    return ::fstat(fd, &status) == 0 ? status.st_size : -1;
}

}  // namespace

bool reserve_disk_space(const std::filesystem::path& path, std::uint64_t bytes) {
    const Descriptor file(path);
    const off_t end = file.get() < 0 ? -1 : size_of(file.get());
    const auto fail = [&](int error) {
        throw std::runtime_error("cannot reserve " + std::to_string(bytes) +
                                 " bytes of disk space for the next writes to '" + path.string() +
                                 "': " + std::strerror(error));
    };
    // A file that cannot be opened here is left to the writes that follow to report.
    if (end < 0) return false;
    // tmpfs returns EINTR where a signal is pending (a stop asked by SIGINT): try again.
    int status = 0;
    do {
        status = ::fallocate(file.get(), FALLOC_FL_KEEP_SIZE, end, static_cast<off_t>(bytes));
    } while (status != 0 && errno == EINTR);
    if (status == 0) return true;
    if (errno == EOPNOTSUPP || errno == ENOSYS) return false;
    fail(errno);
    return false;
}

void release_reserved_space(const std::filesystem::path& path) {
    const Descriptor file(path);
    const off_t end = file.get() < 0 ? -1 : size_of(file.get());
    if (end < 0) return;
    // tmpfs frees blocks past the end by punching them, ext4 and XFS by truncating to the size.
    struct stat status {};
    if (::fstat(file.get(), &status) == 0 && status.st_blocks * 512 > end) {
        [[maybe_unused]] const int punched =
            ::fallocate(file.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, end,
                        static_cast<off_t>(status.st_blocks) * 512 - end + (1 << 20));
        [[maybe_unused]] const int truncated = ::ftruncate(file.get(), end);
    }
}

}  // namespace simrun::framework

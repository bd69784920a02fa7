#include "simrun/solvers/base/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace simrun::solvers {

namespace {

[[noreturn]] void throw_os_error(const std::string& what, const std::filesystem::path& path,
                                 int error) {
    throw std::runtime_error(what + " '" + path.string() + "': " + std::strerror(error));
}

// Closes the descriptor on scope exit unless release() was called.
class FileDescriptor {
public:
    explicit FileDescriptor(int fd) : fd_(fd) {}
    ~FileDescriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    int get() const { return fd_; }
    int release() { return std::exchange(fd_, -1); }

private:
    int fd_;
};

void close_checked(FileDescriptor& fd, const std::filesystem::path& path) {
    if (::close(fd.release()) != 0) throw_os_error("cannot close", path, errno);
}

}  // namespace

AtomicReplace::AtomicReplace(std::filesystem::path target, FileSync sync)
    : target_(std::move(target)),
      temp_path_(target_.parent_path() / ("." + target_.filename().string() + ".tmp")),
      sync_(sync) {}

AtomicReplace::~AtomicReplace() {
    if (!committed_) {
        std::error_code ignored;
        std::filesystem::remove(temp_path_, ignored);
    }
}

void AtomicReplace::commit() {
    if (sync_ == FileSync::synced) {
        FileDescriptor fd(::open(temp_path_.c_str(), O_RDONLY | O_CLOEXEC));
        if (fd.get() < 0) throw_os_error("cannot open", temp_path_, errno);
        if (::fsync(fd.get()) != 0) throw_os_error("cannot flush", temp_path_, errno);
        close_checked(fd, temp_path_);
    }

    std::error_code error;
    std::filesystem::rename(temp_path_, target_, error);
    if (error) {
        throw std::runtime_error("cannot rename '" + temp_path_.string() + "' to '" +
                                 target_.string() + "': " + error.message());
    }
    committed_ = true;
}

void write_file_atomically(const std::filesystem::path& path, std::string_view contents,
                           FileSync sync) {
    AtomicReplace replace(path, sync);
    const auto& temp = replace.temp_path();
    FileDescriptor fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0) throw_os_error("cannot create", temp, errno);
    while (!contents.empty()) {
        const ssize_t written = ::write(fd.get(), contents.data(), contents.size());
        if (written < 0) {
            if (errno == EINTR) continue;
            throw_os_error("cannot write", temp, errno);
        }
        contents.remove_prefix(static_cast<std::size_t>(written));
    }
    close_checked(fd, temp);
    replace.commit();
}

}  // namespace simrun::solvers

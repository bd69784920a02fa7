#include "simrun/solvers/system/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
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
    : target_(std::move(target)), sync_(sync) {
    std::random_device entropy;
    for (int attempt = 0; attempt < 16; ++attempt) {
        char suffix[24];
        std::snprintf(suffix, sizeof suffix, ".%08x%08x.tmp", entropy(), entropy());
        temp_path_ = target_.parent_path() / ("." + target_.filename().string() + suffix);
        fd_ =
            ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd_ >= 0) return;
        if (errno != EEXIST) break;
    }
    throw std::runtime_error("cannot create '" + temp_path_.string() + "' (to replace '" +
                             target_.string() + "'): " + std::strerror(errno));
}

AtomicReplace::~AtomicReplace() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) {
        std::error_code ignored;
        std::filesystem::remove(temp_path_, ignored);
    }
}

void AtomicReplace::commit() {
    FileDescriptor fd(std::exchange(fd_, -1));
    if (sync_ == FileSync::synced && ::fsync(fd.get()) != 0) {
        throw_os_error("cannot flush", temp_path_, errno);
    }
    close_checked(fd, temp_path_);

    std::error_code error;
    std::filesystem::rename(temp_path_, target_, error);
    if (error) {
        throw std::runtime_error("cannot rename '" + temp_path_.string() + "' to '" +
                                 target_.string() + "': " + error.message());
    }
    committed_ = true;
}

bool is_atomic_temporary_of(const std::string& entry, const std::string& target_name) {
    const std::string prefix = "." + target_name + ".";
    constexpr std::size_t random_digits = 16;
    return entry.size() == prefix.size() + random_digits + 4 && entry.starts_with(prefix) &&
           entry.ends_with(".tmp") &&
           entry.find_first_not_of("0123456789abcdef", prefix.size()) ==
               prefix.size() + random_digits;
}

void write_file_atomically(const std::filesystem::path& path, std::string_view contents,
                           FileSync sync) {
    AtomicReplace replace(path, sync);
    while (!contents.empty()) {
        const ssize_t written = ::write(replace.descriptor(), contents.data(), contents.size());
        if (written < 0) {
            if (errno == EINTR) continue;
            throw_os_error("cannot write", replace.temp_path(), errno);
        }
        if (written == 0) throw_os_error("cannot write", replace.temp_path(), ENOSPC);
        contents.remove_prefix(static_cast<std::size_t>(written));
    }
    replace.commit();
}

}  // namespace simrun::solvers

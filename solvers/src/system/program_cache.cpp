#include "program_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <new>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <utility>

#include "simrun/solvers/system/atomic_file.hpp"

namespace simrun::solvers {
namespace {

// An entry: magic, format, reserved (0), key length, program length, program checksum; then the
// key's bytes and the program's. Integers little-endian.
constexpr char entry_magic[8] = {'s', 'i', 'm', 'r', 'u', 'n', 'P', 'C'};
constexpr std::size_t header_bytes = 40;
// A file larger than this is no entry of ours (a cubin is kilobytes to megabytes).
constexpr std::uint64_t largest_entry = std::uint64_t{1} << 30;

void append_u64(std::string& bytes, std::uint64_t value) {
    for (int b = 0; b < 8; ++b) bytes.push_back(static_cast<char>((value >> (8 * b)) & 0xff));
}

void append_u32(std::string& bytes, std::uint32_t value) {
    for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<char>((value >> (8 * b)) & 0xff));
}

std::uint64_t read_u64(std::string_view bytes, std::size_t at) {
    std::uint64_t value = 0;
    for (int b = 7; b >= 0; --b) value = (value << 8) | static_cast<unsigned char>(bytes[at + b]);
    return value;
}

void append_field(std::string& bytes, std::string_view field) {
    append_u64(bytes, field.size());
    bytes.append(field);
}

// Whether a file of `status` is one this user alone may change: owned by the effective user and
// writable by neither group nor others (what ccache asks of its cache too).
bool owned_privately(const struct stat& status) {
    return status.st_uid == ::geteuid() && (status.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// The whole file at `path`, or nothing where it cannot be opened or read, is too large, or is
// not a regular file of this user's alone. A symlink there is not followed and a FIFO does not
// block (O_NOFOLLOW | O_NONBLOCK): either is a miss.
std::optional<std::string> read_entry_file(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::optional<std::string> contents;
    struct stat status {};
    if (::fstat(fd, &status) == 0 && S_ISREG(status.st_mode) && owned_privately(status) &&
        status.st_size >= 0 && static_cast<std::uint64_t>(status.st_size) <= largest_entry) {
        std::string bytes(static_cast<std::size_t>(status.st_size), '\0');
        std::size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t got = ::read(fd, bytes.data() + done, bytes.size() - done);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) break;
            done += static_cast<std::size_t>(got);
        }
        if (done == bytes.size()) contents = std::move(bytes);
    }
    ::close(fd);
    return contents;
}

// The program in `entry` where it is a whole entry of this format for exactly `key`.
std::optional<std::vector<char>> validated_program(std::string_view entry, std::string_view key) {
    if (entry.size() < header_bytes) return std::nullopt;
    if (entry.substr(0, sizeof entry_magic) != std::string_view(entry_magic, sizeof entry_magic)) {
        return std::nullopt;
    }
    std::string format;
    append_u32(format, program_cache_format);
    append_u32(format, 0);
    if (entry.substr(8, 8) != format) return std::nullopt;
    const std::uint64_t key_length = read_u64(entry, 16);
    const std::uint64_t program_length = read_u64(entry, 24);
    if (key_length != key.size() || program_length > largest_entry ||
        entry.size() != header_bytes + key_length + program_length) {
        return std::nullopt;
    }
    if (entry.substr(header_bytes, key.size()) != key) return std::nullopt;
    const std::string_view program = entry.substr(header_bytes + key.size());
    if (fnv1a_64(program) != read_u64(entry, 32)) return std::nullopt;
    return std::vector<char>(program.begin(), program.end());
}

// The cache's directory: absent (not yet made), this user's alone (see owned_privately), or
// refused (another user's, writable by others, not a directory, or not to be examined).
enum class DirectoryState { absent, private_to_user, refused };

DirectoryState directory_state(const std::filesystem::path& directory) {
    struct stat status {};
    // stat, not lstat: a link to a directory of this user's (~/.cache elsewhere) is fine.
    if (::stat(directory.c_str(), &status) != 0) {
        return errno == ENOENT ? DirectoryState::absent : DirectoryState::refused;
    }
    return S_ISDIR(status.st_mode) && owned_privately(status) ? DirectoryState::private_to_user
                                                              : DirectoryState::refused;
}

// Makes `directory`, itself with mode 0700 (its parents as `mkdir -p` makes them). Throws
// std::filesystem::filesystem_error where it cannot.
void make_directory(std::filesystem::path directory) {
    if (!directory.has_filename()) directory = directory.parent_path();  // a trailing '/'
    if (directory.has_parent_path()) std::filesystem::create_directories(directory.parent_path());
    if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
        throw std::filesystem::filesystem_error("cannot make the program cache", directory,
                                                std::error_code(errno, std::generic_category()));
    }
}

// Writes `contents` to `path` atomically, readable and writable by this user alone (0600,
// whatever the umask), unsynced: an entry a power cut leaves partial fails its checks and
// is compiled again. Throws std::runtime_error where it cannot.
void write_entry(const std::filesystem::path& path, std::string_view contents) {
    AtomicReplace replace(path, FileSync::unsynced);
    if (::fchmod(replace.descriptor(), S_IRUSR | S_IWUSR) != 0) {
        throw std::runtime_error("cannot restrict '" + replace.temp_path().string() +
                                 "' to its owner: " + std::strerror(errno));
    }
    while (!contents.empty()) {
        const ssize_t written = ::write(replace.descriptor(), contents.data(), contents.size());
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) {
            throw std::runtime_error("cannot write '" + replace.temp_path().string() +
                                     "': " + std::strerror(written < 0 ? errno : ENOSPC));
        }
        contents.remove_prefix(static_cast<std::size_t>(written));
    }
    replace.commit();
}

// A temporary of a store older than this was left by a killed run (a store takes
// milliseconds).
constexpr std::time_t stale_temporary_seconds = 3600;

// Removes from `directory` the temporaries of entries (".program-<hash>.bin.<random>.tmp",
// see AtomicReplace) older than stale_temporary_seconds. Best effort: errors leave them.
void remove_stale_temporaries(const std::filesystem::path& directory) {
    constexpr std::size_t random_suffix = 1 + 16 + 4;  // ".<16 hex digits>.tmp"
    const std::time_t now = std::time(nullptr);
    std::error_code error;
    std::filesystem::directory_iterator entries(directory, error);
    for (; !error && entries != std::filesystem::directory_iterator(); entries.increment(error)) {
        const std::filesystem::path& path = entries->path();
        const std::string name = path.filename().string();
        if (!name.starts_with(".program-") || name.size() <= 1 + random_suffix) continue;
        const std::string target = name.substr(1, name.size() - 1 - random_suffix);
        struct stat status {};
        if (is_atomic_temporary_of(name, target) && ::lstat(path.c_str(), &status) == 0 &&
            now - status.st_mtime > stale_temporary_seconds) {
            std::error_code ignored;
            std::filesystem::remove(path, ignored);
        }
    }
}

}  // namespace

std::filesystem::path program_cache_directory(const char* simrun_cache_dir,
                                              const char* xdg_cache_home, const char* home) {
    if (simrun_cache_dir != nullptr) {
        const std::string_view named = simrun_cache_dir;
        if (named.empty() || named == "off") return {};
        return std::filesystem::path(named);
    }
    if (xdg_cache_home != nullptr && xdg_cache_home[0] == '/') {
        return std::filesystem::path(xdg_cache_home) / "simrun";
    }
    if (home != nullptr && home[0] != '\0') return std::filesystem::path(home) / ".cache/simrun";
    return {};
}

std::filesystem::path program_cache_directory() {
    return program_cache_directory(std::getenv("SIMRUN_CACHE_DIR"), std::getenv("XDG_CACHE_HOME"),
                                   std::getenv("HOME"));
}

std::string program_key_bytes(const ProgramKey& key) {
    std::string bytes;
    bytes.reserve(key.source.size() + 256);
    append_u32(bytes, program_cache_format);
    append_field(bytes, key.architecture);
    append_field(bytes, key.compiler);
    append_u64(bytes, key.options.size());
    for (const std::string& option : key.options) append_field(bytes, option);
    append_field(bytes, key.source);
    return bytes;
}

std::uint64_t fnv1a_64(std::span<const char> bytes) {
    std::uint64_t hash = 0xcbf29ce484222325ULL;
    for (const char byte : bytes) {
        hash ^= static_cast<unsigned char>(byte);
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

ProgramCache::ProgramCache(std::filesystem::path directory) : directory_(std::move(directory)) {}

std::filesystem::path ProgramCache::entry_path(const ProgramKey& key) const {
    char name[32];
    std::snprintf(name, sizeof name, "program-%016llx.bin",
                  static_cast<unsigned long long>(fnv1a_64(program_key_bytes(key))));
    return directory_ / name;
}

std::optional<std::vector<char>> ProgramCache::load(const ProgramKey& key) const {
    if (!enabled()) return std::nullopt;
    const DirectoryState state = directory_state(directory_);
    if (state != DirectoryState::private_to_user) {
        if (state == DirectoryState::refused) failed_.store(true);
        return std::nullopt;
    }
    const std::optional<std::string> entry = read_entry_file(entry_path(key));
    if (!entry) return std::nullopt;
    return validated_program(*entry, program_key_bytes(key));
}

bool ProgramCache::store(const ProgramKey& key, std::span<const char> program) const {
    if (!enabled()) return false;
    const std::string key_bytes = program_key_bytes(key);
    std::string entry(entry_magic, sizeof entry_magic);
    entry.reserve(header_bytes + key_bytes.size() + program.size());
    append_u32(entry, program_cache_format);
    append_u32(entry, 0);
    append_u64(entry, key_bytes.size());
    append_u64(entry, program.size());
    append_u64(entry, fnv1a_64(program));
    entry += key_bytes;
    entry.append(program.data(), program.size());
    try {
        make_directory(directory_);
        if (directory_state(directory_) != DirectoryState::private_to_user) {
            failed_.store(true);
            return false;
        }
        write_entry(entry_path(key), entry);
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception&) {
        failed_.store(true);
        return false;
    }
    remove_stale_temporaries(directory_);
    return true;
}

}  // namespace simrun::solvers

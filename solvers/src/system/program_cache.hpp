#pragma once
// Compiled programs (NVRTC's cubins) kept on disk between runs, so that a second run of the same
// input compiles nothing. An entry is one file named by a hash of its key; it holds a header
// (magic, format version, the key's and the program's lengths, the program's checksum), the key
// in full and the program. A read trusts nothing: an entry of another format, another key (a
// hash collision), truncated or failing its checksum is a miss, and the caller's store after
// compiling replaces it. Entries are written atomically (a temporary file in the directory
// renamed over the entry), so runs storing the same entry at once (the ranks of a node) leave one
// complete entry, readable and writable by their owner alone. Nothing of another user's is
// trusted (as ccache does): an entry that is not a regular file of this effective user's,
// writable by neither group nor others (a symlink is not followed, a FIFO does not block), is a
// miss; a directory of another user's, or writable by group or others, turns the cache off. A
// store removes the temporary files that killed runs left (older than an hour); entries are
// never evicted (the directory may be deleted at any time). The cache never makes a run fail:
// where it cannot be written it turns itself off, silently, and the caller compiles as without
// it.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace simrun::solvers {

// What a compiled program depends on; every field is compared in full when an entry is read.
struct ProgramKey {
    std::string source;                // the source text
    std::vector<std::string> options;  // the compile options, in order
    std::string architecture;          // e.g. "sm_90"
    // The compiler, its version and its library's identity (path, size, time of change), e.g.
    // "NVRTC 13.0 /usr/local/cuda/lib64/libnvrtc.so.13.0.48 103045952 1751234567.0": another
    // build of one version misses.
    std::string compiler;
};

// The layout of an entry; a change of it, or of what a key holds, increments it.
inline constexpr std::uint32_t program_cache_format = 1;

// The cache's directory from the environment's values (null where unset): `simrun_cache_dir`
// (SIMRUN_CACHE_DIR) where set, none where it is empty or "off"; else `xdg_cache_home`/simrun
// where that is an absolute path (the XDG rule: a relative one is ignored); else
// `home`/.cache/simrun where HOME is set and not empty; else none. None is an empty path.
std::filesystem::path program_cache_directory(const char* simrun_cache_dir,
                                              const char* xdg_cache_home, const char* home);
// The same from this process's environment.
std::filesystem::path program_cache_directory();

// The bytes a key is compared and hashed by: the format version, then each field with its
// length. Two keys differ exactly where these differ.
std::string program_key_bytes(const ProgramKey& key);

// FNV-1a, 64 bits: the entry's file name (of the key's bytes) and the program's checksum. Not
// cryptographic; the key stored in full catches collisions, and any one changed byte changes it.
std::uint64_t fnv1a_64(std::span<const char> bytes);

class ProgramCache {
public:
    // A cache in `directory`, created (mode 0700, its parents as by `mkdir -p`) on the first
    // store; an empty path is none: load finds nothing and store stores nothing.
    explicit ProgramCache(std::filesystem::path directory);
    ProgramCache(const ProgramCache&) = delete;
    ProgramCache& operator=(const ProgramCache&) = delete;

    // Whether loads and stores reach the disk: false for no directory, and from the first store
    // that could not be written on or load or store that found the directory refused (above).
    bool enabled() const { return !directory_.empty() && !failed_.load(); }
    const std::filesystem::path& directory() const { return directory_; }
    // The file of `key`'s entry: "program-<16 hex digits of the hash of its bytes>.bin".
    std::filesystem::path entry_path(const ProgramKey& key) const;

    // The program stored for `key`, byte for byte, or nothing: no entry, an entry that cannot be
    // read, is not this user's alone, or does not validate (see the top of this file). Never
    // throws but std::bad_alloc.
    std::optional<std::vector<char>> load(const ProgramKey& key) const;
    // Stores `program` for `key`, replacing the entry atomically, and removes stale temporary
    // files. Returns whether it was written; where it could not be (the directory cannot be made
    // or written or is refused, the disk is full), the cache is off from then on. Never throws
    // but std::bad_alloc.
    bool store(const ProgramKey& key, std::span<const char> program) const;

private:
    std::filesystem::path directory_;
    mutable std::atomic<bool> failed_{false};
};

}  // namespace simrun::solvers

#pragma once
// Atomic replacement of files: contents go to a temporary file in the target's directory, are
// flushed to disk, and only then renamed over the target, so a reader (or a crash, or a kill)
// sees either the old file or the complete new one, never a partial file.
#include <filesystem>
#include <string_view>

namespace simrun::solvers {

// Whether commit() waits for the contents to reach the disk before the rename. Either way a
// reader or a killed process sees the old file or the complete new one; only synced survives
// a power cut too. Bulk step files (a field per output step) are unsynced, as the HDF5 steps
// are: an fsync per step costs more than the write.
enum class FileSync { synced, unsynced };

// Replaces `path` with `contents` atomically. Throws std::runtime_error naming the file and
// the OS error when any step (create, write, flush, close, rename) fails; on failure the
// temporary file is removed and `path` is left untouched.
void write_file_atomically(const std::filesystem::path& path, std::string_view contents,
                           FileSync sync = FileSync::synced);

// For writers that produce the file themselves (e.g. VTK): write to temp_path(), then call
// commit(). If commit() is never reached, the destructor removes the temporary file.
class AtomicReplace {
public:
    // The temporary file is ".<name>.tmp" next to `target`; nothing is created yet.
    explicit AtomicReplace(std::filesystem::path target, FileSync sync = FileSync::synced);
    ~AtomicReplace();
    AtomicReplace(const AtomicReplace&) = delete;
    AtomicReplace& operator=(const AtomicReplace&) = delete;

    const std::filesystem::path& target() const { return target_; }
    const std::filesystem::path& temp_path() const { return temp_path_; }

    // Flushes the temporary file to disk (when synced) and renames it over the target. Throws
    // std::runtime_error naming the file and the OS error on failure (the temporary file is
    // then removed by the destructor).
    void commit();

private:
    std::filesystem::path target_;
    std::filesystem::path temp_path_;
    FileSync sync_;
    bool committed_ = false;
};

}  // namespace simrun::solvers

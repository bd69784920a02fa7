#pragma once
// Atomic replacement of files: contents go to a temporary file in the target's directory, are
// flushed to disk, and only then renamed over the target, so a reader (or a crash, or a kill)
// sees either the old file or the complete new one, never a partial file. The temporary file
// has an unpredictable name and is created exclusively (O_EXCL | O_NOFOLLOW): an entry planted
// in a shared directory (a symlink to another file) is never opened, let alone overwritten.
#include <filesystem>
#include <string>
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

// For writers that produce the file themselves (e.g. VTK, HDF5): write through descriptor(), or
// open temp_path() (it exists, empty, created by this object: open it without O_CREAT and with
// O_NOFOLLOW), then call commit(). If commit() is never reached, the destructor removes the
// temporary file.
class AtomicReplace {
public:
    // Creates the temporary file ".<name>.<random>.tmp" next to `target`, exclusively, with the
    // permissions of a new file (0666 less the umask). Throws std::runtime_error naming it and
    // the OS error when it cannot be created.
    explicit AtomicReplace(std::filesystem::path target, FileSync sync = FileSync::synced);
    ~AtomicReplace();
    AtomicReplace(const AtomicReplace&) = delete;
    AtomicReplace& operator=(const AtomicReplace&) = delete;

    const std::filesystem::path& target() const { return target_; }
    const std::filesystem::path& temp_path() const { return temp_path_; }
    // The temporary file, open for writing (until commit()).
    int descriptor() const { return fd_; }

    // Flushes the temporary file to disk (when synced), closes it and renames it over the target
    // (whatever descriptor wrote it: the flush is of the file). Throws
    // std::runtime_error naming the file and the OS error on failure (the temporary file is
    // then removed by the destructor).
    void commit();

private:
    std::filesystem::path target_;
    std::filesystem::path temp_path_;
    FileSync sync_;
    int fd_ = -1;
    bool committed_ = false;
};

// The pattern of the temporary files AtomicReplace makes for `target`'s name: a run that holds
// its output directory removes those a killed run left.
bool is_atomic_temporary_of(const std::string& entry, const std::string& target_name);

}  // namespace simrun::solvers

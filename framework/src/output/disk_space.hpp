#pragma once
// Disk space reserved ahead of a file's next writes. The ranks of a distributed run write the
// run file together (HDF5's MPI-IO: collective writes and flushes), and a rank that met a full
// disk inside such a call alone would leave the others waiting in it. So the space a step will
// take is reserved first, by one rank as local work (solvers::all_or_none), where a full disk
// is an ordinary failure the ranks agree on; the collective writes then land in blocks the
// file already owns.
#include <cstdint>
#include <filesystem>

namespace simrun::framework {

// Allocates disk blocks for `bytes` past the end of the file at `path` without changing its
// size (fallocate with FALLOC_FL_KEEP_SIZE), so that the next writes there cannot fail for
// lack of space. Does nothing where the file cannot be opened or its file system cannot
// allocate ahead (returns false).
// Throws std::runtime_error naming the file and the bytes when the space is not there.
bool reserve_disk_space(const std::filesystem::path& path, std::uint64_t bytes);

// Gives back the blocks reserved past the file's end (best effort: errors are ignored).
void release_reserved_space(const std::filesystem::path& path);

}  // namespace simrun::framework

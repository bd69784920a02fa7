#pragma once
// One VTK XML image data file (.vti) laid out as VTK's own writer lays it out, so VTK and
// ParaView read it: the XML header, then every array appended raw (not base64) after a UInt64
// header; compressed arrays are cut into blocks of block_bytes, each compressed on its own,
// behind the header [blocks, block bytes, bytes of a partial last block or 0, compressed bytes
// of each block].
//
// Cost per file of B bytes of fields: the blocks are compressed (and their value range taken)
// on a team of OpenMP threads (the writing thread's own), each block into a buffer kept from the
// previous file (no page faults after the first), then written with one pwrite per block by the
// same team: ~B / threads of compression and of copying into the page cache, plus one XML
// header.
#include <array>
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "simrun/framework/discretisation/field.hpp"
#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/framework/output/vtk_series_writer.hpp"

namespace simrun::framework {

// VTK's extent of a box of the grid ("x0 x1 y0 y1 z0 z1", node indices, inclusive), and
// three numbers as VTK's XML writes them.
std::string vtk_extent(const Box& box);
std::string vtk_triple(const std::array<double, 3>& values);

class VtiFileWriter {
public:
    // VTK's own block is 32 KiB; larger blocks give the same format with less cost per block.
    static constexpr std::size_t block_bytes = std::size_t{1} << 20;

    // `threads` compress and write the blocks (the caller of write() being one of them).
    explicit VtiFileWriter(std::size_t threads);

    // Writes the fields (each with one value per node of `box`, numbered within it) to
    // `path`, created or truncated: the whole grid, or a piece of it whose extent is the box (a
    // rank's piece of a distributed run's step, listed in the step's .pvti). Throws
    // std::runtime_error naming `path` when the file cannot be written (and the OS error) or a
    // block cannot be compressed.
    void write(const std::filesystem::path& path, const Grid& grid,
               std::span<const FieldView> fields, VtkCompression compression, const Box& box);

    std::size_t threads() const { return threads_; }

private:
    std::size_t threads_;
    std::vector<std::vector<char>> compressed_;  // block k of the last file, compressed
};

}  // namespace simrun::framework

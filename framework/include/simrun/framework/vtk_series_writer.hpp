#pragma once
// Time series output for ParaView: one VTK XML image data file (.vti, binary appended, zlib
// compressed) per output step plus a .pvd collection listing every step with its physical time.
// Every file is replaced atomically, so a crash or a kill leaves the earlier steps readable.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "simrun/framework/field.hpp"
#include "simrun/framework/grid.hpp"

namespace simrun::framework {

class VtkSeriesWriter {
public:
    // Creates `directory` (and its parents) if needed; throws std::runtime_error naming the
    // directory when that fails. Files are named "<basename>_<step, 6 digits>.vti" and
    // "<basename>.pvd".
    VtkSeriesWriter(std::filesystem::path directory, std::string basename, const Grid& grid);

    // Writes the fields of one step (time in the problem's time unit) and rewrites the .pvd.
    // Writing a step again replaces it. Throws std::invalid_argument for a negative step or a
    // field whose size differs from the grid's node count, std::runtime_error naming the file
    // when VTK or the file system reports an error.
    void write_step(std::int64_t step, double time, std::span<const FieldView> fields);

    std::filesystem::path pvd_path() const;
    std::filesystem::path step_path(std::int64_t step) const;

private:
    struct Entry {
        std::int64_t step;
        double time;
        std::string file_name;
    };

    std::string step_file_name(std::int64_t step) const;
    void write_pvd() const;

    std::filesystem::path directory_;
    std::string basename_;
    Grid grid_;
    std::vector<Entry> entries_;
};

}  // namespace simrun::framework

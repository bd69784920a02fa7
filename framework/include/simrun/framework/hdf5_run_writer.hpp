#pragma once
// One HDF5 file per run holding the grid, the run's input and solver decisions, and every
// output step with its solver statistics, plus an XDMF (.xmf) file next to it describing the
// steps for ParaView.
//
// Layout:
//   /grid                 attributes dimension (int), points (3 x int64), origin, spacing
//                         (3 x double, length unit of the input)
//   /input                string: the input TOML text
//   /solver_decisions     string
//   /steps/NNNNNN         attributes time (double), solver_iterations (int64),
//                         relative_residual (double), status (string); one double dataset per
//                         field, shaped [nz][ny][nx] in 3D, [ny][nx] in 2D (the grid's order)
//
// The file is flushed after each step, so every completed step stays readable if the process
// is killed; the .xmf is replaced atomically after each step.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "simrun/framework/field.hpp"
#include "simrun/framework/grid.hpp"
#include "simrun/framework/xdmf_writer.hpp"

namespace simrun::framework {

struct StepStatistics {
    std::int64_t solver_iterations = 0;
    double relative_residual = 0.0;
    std::string status;
};

// Owns one HDF5 identifier and closes it with the matching H5?close on destruction.
class Hdf5Handle {
public:
    using Closer = int (*)(std::int64_t);
    Hdf5Handle() = default;
    Hdf5Handle(std::int64_t id, Closer closer) : id_(id), closer_(closer) {}
    ~Hdf5Handle() { reset(); }
    Hdf5Handle(Hdf5Handle&& other) noexcept;
    Hdf5Handle& operator=(Hdf5Handle&& other) noexcept;
    Hdf5Handle(const Hdf5Handle&) = delete;
    Hdf5Handle& operator=(const Hdf5Handle&) = delete;

    std::int64_t get() const { return id_; }
    void reset();

private:
    std::int64_t id_ = -1;
    Closer closer_ = nullptr;
};

class Hdf5RunWriter {
public:
    // Creates (truncating) h5_path and writes /grid, /input and /solver_decisions. Disables
    // HDF5's automatic error printing. Throws std::runtime_error naming the file and the HDF5
    // operation that failed.
    Hdf5RunWriter(std::filesystem::path h5_path, const Grid& grid, std::string_view input_text,
                  std::string_view solver_decisions);
    ~Hdf5RunWriter() = default;
    Hdf5RunWriter(const Hdf5RunWriter&) = delete;
    Hdf5RunWriter& operator=(const Hdf5RunWriter&) = delete;

    // Writes group /steps/<step, 6 digits>, flushes the file and rewrites the .xmf. Throws
    // std::invalid_argument for a negative step or a field whose size differs from the grid's
    // node count (nothing is written then), std::runtime_error naming the file and operation
    // when HDF5 or the file system fails (including a step written twice).
    void write_step(std::int64_t step, double time, std::span<const FieldView> fields,
                    const StepStatistics& stats);

    const std::filesystem::path& h5_path() const { return h5_path_; }
    std::filesystem::path xdmf_path() const;

private:
    std::filesystem::path h5_path_;
    Grid grid_;
    Hdf5Handle file_;
    std::vector<XdmfStep> steps_;
};

}  // namespace simrun::framework

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
//                         relative_residual (double), status (string), method (string: the
//                         last solve attempt's method, "none" without a linear solve); one
//                         double dataset per field, shaped [nz][ny][nx] in 3D, [ny][nx] in 2D
//                         (the grid's order); residual_history (double, iterations + 1
//                         values) when the step solved a linear system
//   /restarts/N           one group per restart appended to the file: attribute step (int64,
//                         the step continued from), datasets input and solver_decisions
//
// Crash safety: the file is created under a temporary name and renamed into place once its
// header is on disk; its metadata cache never evicts, so metadata reaches the file only at the
// flush that ends each step, and the .xmf is replaced atomically after that flush.
// A process killed between flushes thus leaves a file that opens and holds every step the .xmf
// names. A kill during a flush itself (milliseconds per step) is not covered: HDF5 rewrites its
// metadata in place and has no transactional writes.
//
// Over several ranks (Hdf5Ranks) the ranks write the one file together through HDF5's MPI-IO
// driver, in the same layout: each rank its box of each field (a hyperslab of the dataset,
// written collectively), the attributes alike on every rank, the other datasets from rank 0;
// rank 0 alone renames the file into place and writes the .xmf. Every call that touches the
// file is then collective: every rank makes it, in the same order.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "simrun/framework/discretisation/field.hpp"
#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/framework/output/index_schedule.hpp"
#include "simrun/framework/output/xdmf_writer.hpp"
#include "simrun/solvers/base/communicator.hpp"

namespace simrun::framework {

namespace hdf5 {
class Context;
}

struct StepStatistics {
    std::int64_t solver_iterations = 0;    // over every attempt of the step's solve
    double relative_residual = 0.0;        // of the last attempt
    std::string status;                    // "converged", ..., "initial", "explicit"
    std::string method = "none";           // the last attempt's method, e.g. "cg + jacobi"
    std::vector<double> residual_history;  // the last attempt's ||r_k||, k = 0 .. iterations;
                                           // empty (no dataset) without a linear solve
};

enum class Hdf5OpenMode {
    create,  // a new file (replacing one there)
    append,  // an existing run file, continued after its last step
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

// A distributed run's ranks writing one run file together.
struct Hdf5Ranks {
    std::shared_ptr<const solvers::Communicator> ranks;  // its own channel (the writer's thread)
    Box owned;                                       // this rank's box
};

class Hdf5RunWriter {
public:
    // create: writes a new file with /grid, /input and /solver_decisions and renames it over
    // h5_path (removing an .xmf left there first, whose steps are gone). append: opens h5_path
    // read-write, keeps its steps, records the input and decisions under /restarts and
    // rewrites the .xmf from every step the file holds. Disables HDF5's automatic error
    // printing. Throws std::invalid_argument when an appended file's grid differs from
    // `grid`, std::runtime_error naming the file and the HDF5 operation that failed.
    // With `ranks`, this rank's share of a file the ranks write together (collective).
    Hdf5RunWriter(std::filesystem::path h5_path, const Grid& grid, std::string_view input_text,
                  std::string_view solver_decisions, Hdf5OpenMode mode = Hdf5OpenMode::create,
                  std::optional<Hdf5Ranks> ranks = std::nullopt);
    // Discards a staged step (see stage_step), then closes the file.
    ~Hdf5RunWriter();
    Hdf5RunWriter(const Hdf5RunWriter&) = delete;
    Hdf5RunWriter& operator=(const Hdf5RunWriter&) = delete;

    // Writes group /steps/<step, 6 digits>, flushes the file to disk and then rewrites the
    // .xmf. Throws
    // std::invalid_argument for a negative step or a field whose size differs from the grid's
    // node count (over ranks: this rank's box's count; nothing is written then),
    // std::runtime_error naming the file and operation when HDF5 or the file system fails
    // (including a step written twice).
    void write_step(std::int64_t step, double time, std::span<const FieldView> fields,
                    const StepStatistics& stats);
    // write_step in two parts, for a caller that lets a step appear only once another output
    // holds it: stage_step writes the group and its datasets, unflushed (the file on disk, and
    // a killed process's file, do not show it; a failure unlinks the half-written group);
    // commit_staged then flushes and rewrites the .xmf, or discard_staged unlinks the group.
    // Throw as write_step; stage_step std::logic_error while a step is staged, commit_staged
    // when none is. discard_staged without a staged step does nothing.
    void stage_step(std::int64_t step, double time, std::span<const FieldView> fields,
                    const StepStatistics& stats);
    void commit_staged();
    void discard_staged();
    // Rewrites the .xmf when it lists fewer steps than were committed (commit_staged rewrites
    // it on the schedule of index_schedule.hpp). At the end of output; the destructor tries
    // too, and stays silent on failure.
    void write_index();

    const std::filesystem::path& h5_path() const { return h5_path_; }
    std::filesystem::path xdmf_path() const;
    // The steps the file holds, in order (those found on opening it for append included).
    const std::vector<XdmfStep>& steps() const { return steps_; }

    // The most entries the file's metadata cache keeps between steps: each step's flush scans
    // them all, so the writer empties the cache (reopening the file) once a step leaves it
    // holding as many. metadata_cache_entries(): how many it holds now.
    static constexpr std::size_t max_cache_entries = 1024;
    std::size_t metadata_cache_entries() const;

private:
    // The helpers for this writer's file: writes shared among the ranks where there are several.
    hdf5::Context context() const;
    bool distributed() const { return ranks_.has_value(); }
    bool index_writer() const { return !ranks_ || ranks_->ranks->rank() == 0; }
    Hdf5Handle file_access(const hdf5::Context& context) const;
    const solvers::Communicator& ranks() const;  // the writer's ranks, or one process
    // Work a rank may fail at alone (file system calls, checks; no collective inside); over
    // ranks, then the ranks agree on whether it failed anywhere (solvers::all_or_none).
    template <typename Work>
    void local(Work&& work, solvers::CallSite site = solvers::CallSite::current()) const;
    // HDF5 calls every rank makes together, agreed likewise (solvers::collectively): nothing a
    // rank may fail at alone is left inside (the disk space is reserved before, by local work).
    template <typename Work>
    void collective(std::string_view operation, Work&& work,
                    solvers::CallSite site = solvers::CallSite::current()) const;
    void create(std::string_view input_text, std::string_view solver_decisions);
    void append(std::string_view input_text, std::string_view solver_decisions);
    void append_restart(const hdf5::Context& context, std::string_view input_text,
                        std::string_view solver_decisions);
    void write_step_group(const hdf5::Context& context, std::int64_t group, double time,
                          std::span<const FieldView> fields, const StepStatistics& stats,
                          const Box& box) const;
    void release_cache(const hdf5::Context& context);

    // Disk space for the next writes to the run file (disk_space.hpp), reserved by rank 0 as
    // local work, once it has checked the file is still the one open: for a restart's header,
    // a step's data and metadata.
    void reserve(std::uint64_t bytes);
    static std::uint64_t header_bytes(std::string_view input_text,
                                      std::string_view solver_decisions);
    std::uint64_t step_bytes(std::span<const FieldView> fields, const StepStatistics& stats) const;
    void note_step_growth();

    // Fails when the file at h5_path_ is no longer the one this writer has open (removed or
    // replaced during the run: what it writes would be lost).
    void check_still_in_place() const;

    std::filesystem::path h5_path_;
    std::pair<std::uint64_t, std::uint64_t> identity_{};  // device and inode of the open file
    Grid grid_;
    Hdf5Handle file_;
    std::vector<XdmfStep> steps_;
    IndexSchedule xdmf_schedule_;
    std::optional<XdmfStep> staged_;
    std::optional<Hdf5Ranks> ranks_;
    Hdf5Handle transfer_;                    // collective writes over ranks
    bool reserved_ = false;                  // space was reserved past the file's end
    std::uint64_t size_before_step_ = 0;     // the file's size after the last commit (rank 0)
    std::uint64_t largest_step_growth_ = 0;  // the most one step added to it so far (rank 0)
};

}  // namespace simrun::framework

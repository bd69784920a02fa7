#pragma once
// Time series output for ParaView: one VTK XML image data file (.vti, binary appended, compressed
// as VtkCompression says) per output step plus a .pvd collection listing every step with its
// physical time.
// A distributed run writes each step in pieces instead: every rank its box (and the nodes of
// the next boxes along each axis that touch it, which the pieces share so that ParaView draws
// no gap between them) to
// "<basename>_<step>/<basename>_<step>_<rank>.vti", and rank 0, once every piece is written,
// the step's "<basename>_<step>.pvti" naming them, which the .pvd lists.
// Every file is replaced atomically, so a crash or a kill leaves the earlier steps readable.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "simrun/framework/discretisation/field.hpp"
#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/framework/output/index_schedule.hpp"
#include "simrun/framework/problem/run_settings.hpp"
#include "simrun/solvers/base/communicator.hpp"

namespace simrun::framework {

// Continue the series already in the directory, from step `last_step` on.
struct ContinueSeries {
    std::int64_t last_step;
};

class VtiFileWriter;

// A distributed run's ranks writing one series together.
struct VtkPieces {
    std::shared_ptr<const solvers::Communicator> ranks;  // its own channel (the writer's thread)
    std::vector<Box> boxes;                          // each rank's piece, in rank order
    // This rank's own nodes, inside its piece, where a field handed over holds their values
    // first (numbered within the box) and then the piece's other nodes in the piece's order;
    // none: the field is in the piece's order.
    std::optional<Box> owned = std::nullopt;
};

class VtkSeriesWriter {
public:
    // Starts a new series: creates `directory` (and its parents) if needed and removes a .pvd
    // left there by an earlier run (its steps are about to be overwritten). Throws
    // std::runtime_error naming the directory or file when that fails. Files are named
    // "<basename>_<step, 6 digits>.vti" and "<basename>.pvd".
    // With `pieces`, this rank's share of a distributed run's series (construction and
    // write_step are then collective); rank 0 alone removes or reads the .pvd and writes the
    // .pvti and .pvd files.
    VtkSeriesWriter(std::filesystem::path directory, std::string basename, const Grid& grid,
                    std::optional<VtkPieces> pieces = std::nullopt);
    // Continues a series: keeps the entries of the existing .pvd up to `from.last_step` (later
    // ones come from a run that went on past the step continued from, and are dropped); no
    // .pvd there gives an empty series. Throws std::runtime_error as above, and when the .pvd
    // cannot be read.
    VtkSeriesWriter(std::filesystem::path directory, std::string basename, const Grid& grid,
                    ContinueSeries from, std::optional<VtkPieces> pieces = std::nullopt);
    ~VtkSeriesWriter();
    VtkSeriesWriter(const VtkSeriesWriter&) = delete;
    VtkSeriesWriter& operator=(const VtkSeriesWriter&) = delete;

    // Writes the fields of one step (time in the problem's time unit) and rewrites the .pvd
    // when its schedule says so (index_schedule.hpp).
    // Writing a step again replaces it. Throws std::invalid_argument for a negative step or a
    // field whose size differs from the grid's node count (its piece's, with pieces),
    // std::runtime_error naming the file when compressing or the file system fails; with
    // pieces, solvers::PeerFailure on the ranks whose piece was written where another rank's
    // was not (no rank lists the step then).
    void write_step(std::int64_t step, double time, std::span<const FieldView> fields);
    void set_compression(VtkCompression compression) { compression_ = compression; }
    // Threads that compress and write a step's 1 MiB blocks (the calling one included): the
    // files are the same for any number. By default default_threads().
    void set_threads(std::size_t threads);
    std::size_t threads() const;
    // Half the hardware threads, from 1 to 4: a step's blocks in ~1/4 of one thread's time
    // where cores are free, without taking the cores of a CPU run's own computation.
    static std::size_t default_threads();

    // Rewrites the .pvd when it lists fewer steps than were written (at the end of output; the
    // destructor tries too, and stays silent on failure).
    void write_index();

    std::filesystem::path pvd_path() const;
    // The step's .vti, or with pieces its .pvti; and with pieces, rank `rank`'s piece.
    std::filesystem::path step_path(std::int64_t step) const;
    std::filesystem::path piece_path(std::int64_t step, int rank) const;
    bool has_step(std::int64_t step) const;
    // The steps of the series with their times, in step order.
    std::vector<std::pair<std::int64_t, double>> steps() const;

private:
    struct Entry {
        std::int64_t step;
        double time;
        std::string file_name;
    };

    std::string step_name(std::int64_t step) const;  // "<basename>_<step, 6 digits>"
    std::string step_file_name(std::int64_t step) const;
    bool index_writer() const;  // writes the .pvd (and .pvti): one process, or rank 0
    void write_pieces(std::int64_t step, std::span<const FieldView> fields);
    // Throws std::invalid_argument where a field's size is not the box's node count.
    void check_sizes(const std::filesystem::path& path, const Box& box,
                     std::span<const FieldView> fields) const;
    // The fields in the piece's order (copies where they were handed over own nodes first).
    struct OrderedFields {
        std::vector<std::vector<double>> values;
        std::vector<FieldView> views;
    };
    OrderedFields in_piece_order(const Box& piece, std::span<const FieldView> fields) const;
    // A step's directory of pieces: made a directory of this user's (an entry of another kind
    // there removed, never followed), or checked to be one; std::runtime_error otherwise.
    static void make_own_directory(const std::filesystem::path& directory);
    static void require_own_directory(const std::filesystem::path& directory);
    void create_directory() const;
    void read_pvd(std::int64_t last_step);
    void share_entries();  // rank 0's entries on every rank (collective)
    // Runs work() where this process writes the indexes; over ranks as rank 0's local work,
    // which the ranks then agree on (solvers::all_or_none).
    template <typename Work>
    void on_index_writer(Work&& work) const;
    void write_pvd() const;

    std::filesystem::path directory_;
    std::string basename_;
    Grid grid_;
    std::vector<Entry> entries_;
    VtkCompression compression_ = VtkCompression::lz4;
    std::unique_ptr<VtiFileWriter> file_writer_;  // its threads and blocks, kept between steps
    IndexSchedule pvd_schedule_;
    std::optional<VtkPieces> pieces_;
};

}  // namespace simrun::framework

#include "simrun/framework/output/vtk_series_writer.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

#include "pvti_file.hpp"
#include "simrun/framework/distributed/decomposition.hpp"
#include "simrun/framework/output/xml_text.hpp"
#include "simrun/solvers/system/atomic_file.hpp"
#include "vti_file.hpp"

namespace simrun::framework {

namespace {

// The inverse of xml_escape for the entities it writes.
std::string xml_unescape(std::string_view text) {
    static const std::pair<std::string_view, char> entities[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}};
    std::string out;
    for (std::size_t at = 0; at < text.size();) {
        bool replaced = false;
        for (const auto& [entity, character] : entities) {
            if (text.substr(at, entity.size()) == entity) {
                out += character;
                at += entity.size();
                replaced = true;
                break;
            }
        }
        if (!replaced) out += text[at++];
    }
    return out;
}

}  // namespace

std::size_t VtkSeriesWriter::default_threads() {
    return std::clamp<std::size_t>(std::thread::hardware_concurrency() / 2, 1, 4);
}

VtkSeriesWriter::VtkSeriesWriter(std::filesystem::path directory, std::string basename,
                                 const Grid& grid, std::optional<VtkPieces> pieces)
    : directory_(std::move(directory)),
      basename_(std::move(basename)),
      grid_(grid),
      file_writer_(std::make_unique<VtiFileWriter>(default_threads())),
      pieces_(std::move(pieces)) {
    // Over ranks rank 0 creates the directory (and the step's directories of pieces later).
    on_index_writer([&] {
        create_directory();
        std::error_code error;
        std::filesystem::remove(pvd_path(), error);
        if (error) {
            throw std::runtime_error("cannot remove '" + pvd_path().string() +
                                     "': " + error.message());
        }
    });
}

template <typename Work>
void VtkSeriesWriter::on_index_writer(Work&& work) const {
    if (!pieces_) return work();
    // Local work of rank 0's, agreed at once: the construction goes on into collectives.
    solvers::all_or_none(*pieces_->ranks, [&] {
        if (index_writer()) work();
    });
}

VtkSeriesWriter::VtkSeriesWriter(std::filesystem::path directory, std::string basename,
                                 const Grid& grid, ContinueSeries from,
                                 std::optional<VtkPieces> pieces)
    : directory_(std::move(directory)),
      basename_(std::move(basename)),
      grid_(grid),
      file_writer_(std::make_unique<VtiFileWriter>(default_threads())),
      pieces_(std::move(pieces)) {
    on_index_writer([&] {
        create_directory();
        read_pvd(from.last_step);
    });
    if (pieces_) share_entries();
}

// Every rank holds the series' entries, as rank 0 read them: the .pvd's schedule decides when
// the ranks meet in the agreement on its writing, so every rank's must count the same.
void VtkSeriesWriter::share_entries() {
    std::vector<std::byte> bytes;
    const auto put = [&](const void* data, std::size_t size) {
        const auto* first = static_cast<const std::byte*>(data);
        bytes.insert(bytes.end(), first, first + size);
    };
    for (const Entry& entry : entries_) {
        const std::uint64_t length = entry.file_name.size();
        put(&entry.step, sizeof entry.step);
        put(&entry.time, sizeof entry.time);
        put(&length, sizeof length);
        put(entry.file_name.data(), length);
    }
    const std::vector<std::byte> from_first = pieces_->ranks->all_gather(bytes)[0];
    entries_.clear();
    for (std::size_t at = 0; at < from_first.size();) {
        const auto take = [&](void* data, std::size_t size) {
            std::memcpy(data, from_first.data() + at, size);
            at += size;
        };
        Entry entry;
        std::uint64_t length = 0;
        take(&entry.step, sizeof entry.step);
        take(&entry.time, sizeof entry.time);
        take(&length, sizeof length);
        entry.file_name.resize(length);
        take(entry.file_name.data(), length);
        entries_.push_back(std::move(entry));
    }
}

bool VtkSeriesWriter::index_writer() const { return !pieces_ || pieces_->ranks->rank() == 0; }

VtkSeriesWriter::~VtkSeriesWriter() {
    try {
        write_index();
    } catch (...) {
        // Nothing to report from a destructor; the .pvd on disk lists complete steps only.
    }
}

void VtkSeriesWriter::write_index() {
    if (!pvd_schedule_.stale()) return;
    if (index_writer()) write_pvd();
    // On every rank: the schedule decides when the ranks meet in the .pvd's agreement.
    pvd_schedule_.written(entries_.size());
}

void VtkSeriesWriter::set_threads(std::size_t threads) {
    file_writer_ = std::make_unique<VtiFileWriter>(std::max<std::size_t>(threads, 1));
}

std::size_t VtkSeriesWriter::threads() const { return file_writer_->threads(); }

void VtkSeriesWriter::create_directory() const {
    std::error_code error;
    std::filesystem::create_directories(directory_, error);
    if (error || !std::filesystem::is_directory(directory_)) {
        throw std::runtime_error("cannot create output directory '" + directory_.string() +
                                 "': " + (error ? error.message() : "not a directory"));
    }
}

void VtkSeriesWriter::read_pvd(std::int64_t last_step) {
    const auto path = pvd_path();
    if (!std::filesystem::exists(path)) return;
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read '" + path.string() + "'");
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    // Entries as write_pvd() writes them; a file name not of this series' form is skipped.
    const std::regex dataset(R"re(<DataSet\s[^>]*timestep="([^"]*)"[^>]*file="([^"]*)")re");
    const std::string prefix = basename_ + "_";
    for (auto it = std::sregex_iterator(text.begin(), text.end(), dataset);
         it != std::sregex_iterator(); ++it) {
        const std::string file = xml_unescape((*it)[2].str());
        // A step's .vti, or its .pvti where a distributed run wrote it.
        const std::size_t suffix = file.ends_with(".pvti") ? 5 : file.ends_with(".vti") ? 4 : 0;
        if (suffix == 0 || file.size() <= prefix.size() + suffix || !file.starts_with(prefix)) {
            continue;
        }
        const std::string digits = file.substr(prefix.size(), file.size() - prefix.size() - suffix);
        if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(),
                                               [](char c) { return c >= '0' && c <= '9'; })) {
            continue;
        }
        const std::string time_text = (*it)[1].str();
        char* end = nullptr;
        const double time = std::strtod(time_text.c_str(), &end);
        if (time_text.empty() || *end != '\0') {
            throw std::runtime_error("cannot read '" + path.string() + "': timestep \"" +
                                     time_text + "\" is not a number");
        }
        const std::int64_t step = std::stoll(digits);
        if (step <= last_step && !has_step(step)) entries_.push_back({step, time, file});
    }
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry& a, const Entry& b) { return a.step < b.step; });
}

bool VtkSeriesWriter::has_step(std::int64_t step) const {
    return std::any_of(entries_.begin(), entries_.end(),
                       [step](const Entry& e) { return e.step == step; });
}

std::vector<std::pair<std::int64_t, double>> VtkSeriesWriter::steps() const {
    std::vector<std::pair<std::int64_t, double>> out;
    for (const auto& entry : entries_) out.emplace_back(entry.step, entry.time);
    return out;
}

std::filesystem::path VtkSeriesWriter::pvd_path() const {
    return directory_ / (basename_ + ".pvd");
}

std::filesystem::path VtkSeriesWriter::step_path(std::int64_t step) const {
    return directory_ / step_file_name(step);
}

std::string VtkSeriesWriter::step_name(std::int64_t step) const {
    char digits[32];
    std::snprintf(digits, sizeof digits, "%06lld", static_cast<long long>(step));
    return basename_ + "_" + digits;
}

std::string VtkSeriesWriter::step_file_name(std::int64_t step) const {
    return step_name(step) + (pieces_ ? ".pvti" : ".vti");
}

std::filesystem::path VtkSeriesWriter::piece_path(std::int64_t step, int rank) const {
    return directory_ / step_name(step) / (step_name(step) + "_" + std::to_string(rank) + ".vti");
}

void VtkSeriesWriter::write_step(std::int64_t step, double time,
                                 std::span<const FieldView> fields) {
    if (step < 0) {
        throw std::invalid_argument("VTK output: negative step " + std::to_string(step));
    }
    if (pieces_) {
        write_pieces(step, fields);
    } else {
        const auto path = step_path(step);
        check_sizes(path, grid_.box(), fields);
        // Unsynced, as the HDF5 steps: complete or absent after a kill, an fsync per step saved.
        solvers::AtomicReplace replace(path, solvers::FileSync::unsynced);
        file_writer_->write(replace.temp_path(), grid_, fields, compression_, grid_.box());
        replace.commit();
    }

    const auto existing = std::find_if(entries_.begin(), entries_.end(),
                                       [step](const Entry& e) { return e.step == step; });
    if (existing != entries_.end()) {
        existing->time = time;
    } else {
        entries_.push_back({step, time, step_file_name(step)});
        std::sort(entries_.begin(), entries_.end(),
                  [](const Entry& a, const Entry& b) { return a.step < b.step; });
    }
    if (pvd_schedule_.changed(entries_.size())) {
        // Over ranks, the ranks learn whether rank 0 could write it, so that they stop alike.
        solvers::all_or_none(pieces_ ? *pieces_->ranks : *solvers::single_process(), [&] {
            if (index_writer()) write_pvd();
        });
        pvd_schedule_.written(entries_.size());
    }
}

void VtkSeriesWriter::check_sizes(const std::filesystem::path& path, const Box& box,
                                  std::span<const FieldView> fields) const {
    for (const auto& field : fields) {
        if (static_cast<std::int64_t>(field.values.size()) != box.size()) {
            throw std::invalid_argument("VTK output '" + path.string() + "': field '" + field.name +
                                        "' has " + std::to_string(field.values.size()) +
                                        " values, the " + (pieces_ ? "piece" : "grid") + " has " +
                                        std::to_string(box.size()) + " nodes");
        }
    }
}

// Rank 0 makes the step's directory of pieces, a directory of this user's: an entry of another
// kind there (a link planted to send the pieces elsewhere, a file) is removed, not followed, and
// a directory of another user's is refused. Every rank then writes its piece; once all are
// written (the ranks agree on it: a rank that failed rethrows its error, the others
// solvers::PeerFailure), rank 0 names them in the step's .pvti, and the ranks agree on that too.
// Traffic: the piece's bytes (its box and the nodes it shares with the next boxes), and three
// agreements of one value.
void VtkSeriesWriter::write_pieces(std::int64_t step, std::span<const FieldView> fields) {
    const solvers::Communicator& ranks = *pieces_->ranks;
    const auto path = piece_path(step, ranks.rank());
    const Box& piece = pieces_->boxes[static_cast<std::size_t>(ranks.rank())];
    solvers::all_or_none(ranks, [&] {
        if (ranks.rank() == 0) make_own_directory(path.parent_path());
    });
    solvers::all_or_none(ranks, [&] {
        check_sizes(path, piece, fields);
        require_own_directory(path.parent_path());
        const auto in_order = in_piece_order(piece, fields);
        solvers::AtomicReplace replace(path, solvers::FileSync::unsynced);
        file_writer_->write(replace.temp_path(), grid_, in_order.views, compression_, piece);
        replace.commit();
    });
    solvers::all_or_none(ranks, [&] {
        if (ranks.rank() != 0) return;
        std::vector<std::string> names;
        for (const auto& field : fields) names.push_back(field.name);
        std::vector<PvtiPiece> pieces;
        for (int rank = 0; rank < ranks.size(); ++rank) {
            pieces.push_back({pieces_->boxes[static_cast<std::size_t>(rank)],
                              step_name(step) + "/" + piece_path(step, rank).filename().string()});
        }
        solvers::write_file_atomically(step_path(step), make_pvti(grid_, names, pieces),
                                       solvers::FileSync::unsynced);
    });
}

VtkSeriesWriter::OrderedFields VtkSeriesWriter::in_piece_order(
    const Box& piece, std::span<const FieldView> fields) const {
    OrderedFields ordered{{}, {fields.begin(), fields.end()}};
    if (!pieces_->owned ||
        (pieces_->owned->lower == piece.lower && pieces_->owned->run_of(piece))) {
        return ordered;
    }
    // The fields in the piece's order, where they were handed over own nodes first.
    const Box& owned = *pieces_->owned;
    ordered.values.resize(fields.size());
    for (std::size_t f = 0; f < fields.size(); ++f) {
        std::vector<double>& values = ordered.values[f];
        values.resize(fields[f].values.size());
        for (std::int64_t p = 0; p < piece.size(); ++p) {
            const auto [i, j, k] = piece.node(p);
            values[static_cast<std::size_t>(p)] = fields[f].values[static_cast<std::size_t>(
                Decomposition::piece_value_index(piece, owned, i, j, k))];
        }
        ordered.views[f].values = values;
    }
    return ordered;
}

void VtkSeriesWriter::make_own_directory(const std::filesystem::path& directory) {
    struct stat status {};
    if (::lstat(directory.c_str(), &status) == 0) {
        if (S_ISDIR(status.st_mode)) {
            require_own_directory(directory);
            return;
        }
        if (::unlink(directory.c_str()) != 0) {
            throw std::runtime_error("cannot remove '" + directory.string() +
                                     "' (not a directory) to make the step's directory of "
                                     "pieces there: " +
                                     std::strerror(errno));
        }
    }
    if (::mkdir(directory.c_str(), 0777) != 0 && errno != EEXIST) {
        throw std::runtime_error("cannot create directory '" + directory.string() +
                                 "': " + std::strerror(errno));
    }
    require_own_directory(directory);
}

void VtkSeriesWriter::require_own_directory(const std::filesystem::path& directory) {
    struct stat status {};
    if (::lstat(directory.c_str(), &status) != 0) {
        throw std::runtime_error("the step's directory of pieces '" + directory.string() +
                                 "' is gone: " + std::strerror(errno));
    }
    if (!S_ISDIR(status.st_mode)) {
        throw std::runtime_error("the step's directory of pieces '" + directory.string() +
                                 "' was replaced by another kind of entry (a link?) during the "
                                 "run: refusing to write through it");
    }
    if (status.st_uid != ::geteuid()) {
        throw std::runtime_error("the step's directory of pieces '" + directory.string() +
                                 "' belongs to another user: refusing to write pieces into it");
    }
}

void VtkSeriesWriter::write_pvd() const {
    std::string text =
        "<?xml version=\"1.0\"?>\n"
        "<VTKFile type=\"Collection\" version=\"0.1\">\n"
        "  <Collection>\n";
    for (const auto& entry : entries_) {
        text += "    <DataSet timestep=\"" + format_double(entry.time) +
                "\" group=\"\" part=\"0\" file=\"" + xml_escape(entry.file_name) + "\"/>\n";
    }
    text += "  </Collection>\n</VTKFile>\n";
    // Unsynced, as the steps it lists (an fsync here costs more than the step's write).
    solvers::write_file_atomically(pvd_path(), text, solvers::FileSync::unsynced);
}

}  // namespace simrun::framework

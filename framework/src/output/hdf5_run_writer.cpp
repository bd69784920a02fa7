#include "simrun/framework/output/hdf5_run_writer.hpp"

#include <hdf5.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#include "disk_space.hpp"
#include "hdf5_support.hpp"
#include "run_file_layout.hpp"
#include "run_file_safety.hpp"
#include "simrun/solvers/system/atomic_file.hpp"

namespace simrun::framework {
namespace {

// The (device, inode) of the file at `path`; zeros when there is none.
std::pair<std::uint64_t, std::uint64_t> identity_of(const std::filesystem::path& path) {
    struct stat status {};
    if (::stat(path.c_str(), &status) != 0) return {0, 0};
    return {static_cast<std::uint64_t>(status.st_dev), static_cast<std::uint64_t>(status.st_ino)};
}

}  // namespace

static_assert(std::is_same_v<hid_t, std::int64_t> && std::is_same_v<herr_t, int>,
              "Hdf5Handle assumes HDF5 >= 1.10 identifier types");

Hdf5Handle::Hdf5Handle(Hdf5Handle&& other) noexcept
    : id_(std::exchange(other.id_, -1)), closer_(other.closer_) {}

Hdf5Handle& Hdf5Handle::operator=(Hdf5Handle&& other) noexcept {
    if (this != &other) {
        reset();
        id_ = std::exchange(other.id_, -1);
        closer_ = other.closer_;
    }
    return *this;
}

void Hdf5Handle::reset() {
    if (id_ >= 0 && closer_ != nullptr) closer_(id_);
    id_ = -1;
}

Hdf5RunWriter::Hdf5RunWriter(std::filesystem::path h5_path, const Grid& grid,
                             std::string_view input_text, std::string_view solver_decisions,
                             Hdf5OpenMode mode, std::optional<Hdf5Ranks> ranks)
    : h5_path_(std::move(h5_path)), grid_(grid), ranks_(std::move(ranks)) {
    if (distributed()) transfer_ = hdf5::collective_transfer(hdf5::Context(h5_path_));
    if (mode == Hdf5OpenMode::append) {
        append(input_text, solver_decisions);
    } else {
        create(input_text, solver_decisions);
    }
}

Hdf5RunWriter::~Hdf5RunWriter() {
    // Closing flushes: a step never committed must not reach the file then.
    try {
        discard_staged();
    } catch (...) {
        // Nothing to report from a destructor; the step stays out of the .xmf either way.
    }
    try {
        write_index();
    } catch (...) {
        // Nothing to report from a destructor; the .xmf on disk lists complete steps only.
    }
    file_.reset();
    if (index_writer() && reserved_) release_reserved_space(h5_path_);
}

const solvers::Communicator& Hdf5RunWriter::ranks() const {
    return distributed() ? *ranks_->ranks : *solvers::single_process();
}

template <typename Work>
void Hdf5RunWriter::local(Work&& work, solvers::CallSite site) const {
    solvers::all_or_none(ranks(), work, site);
}

template <typename Work>
void Hdf5RunWriter::collective(std::string_view operation, Work&& work,
                               solvers::CallSite site) const {
    solvers::collectively(ranks(), operation, work, site);
}

void Hdf5RunWriter::reserve(std::uint64_t bytes) {
    local([&] {
        if (!index_writer()) return;
        check_still_in_place();
        std::error_code error;
        size_before_step_ = std::filesystem::file_size(h5_path_, error);
        if (reserve_disk_space(h5_path_, bytes)) reserved_ = true;
    });
}

std::uint64_t Hdf5RunWriter::header_bytes(std::string_view input_text,
                                          std::string_view solver_decisions) {
    return (64u << 10) + input_text.size() + solver_decisions.size();
}

std::uint64_t Hdf5RunWriter::step_bytes(std::span<const FieldView> fields,
                                        const StepStatistics& stats) const {
    // The step's raw data, and its metadata (object headers, attributes, the /steps group's
    // heap and index growing with the steps) with room to spare; at least the most a step has
    // added to the file so far, with that room again.
    const auto points = static_cast<std::uint64_t>(grid_.num_points());
    const std::uint64_t raw =
        8 * (points * fields.size() + static_cast<std::uint64_t>(stats.residual_history.size()));
    const std::uint64_t metadata = (64u << 10) + 4096 * fields.size() + 64 * steps_.size();
    return std::max(raw, largest_step_growth_) + metadata;
}

hdf5::Context Hdf5RunWriter::context() const {
    hdf5::Context context(h5_path_);
    if (distributed()) context.share_writes(index_writer(), transfer_.get());
    return context;
}

Hdf5Handle Hdf5RunWriter::file_access(const hdf5::Context& context) const {
    return distributed() ? hdf5::collective_file_access(context, *ranks_->ranks)
                         : hdf5::crash_safe_file_access(context);
}

void Hdf5RunWriter::write_index() {
    if (!xdmf_schedule_.stale()) return;
    // Unsynced, as the steps it lists: the .xmf, as the .h5, survives a killed process.
    if (index_writer()) {
        solvers::write_file_atomically(xdmf_path(),
                                       make_xdmf(grid_, h5_path_.filename().string(), steps_),
                                       solvers::FileSync::unsynced);
    }
    // On every rank, the writer of the index or not: the schedule decides when the ranks enter
    // the agreement that follows the index's writing, so it must read the same everywhere.
    xdmf_schedule_.written(steps_.size());
}

void Hdf5RunWriter::create(std::string_view input_text, std::string_view solver_decisions) {
    const hdf5::Context context = this->context();
    // Built under a temporary name, so the run file's name never shows a headerless file.
    // Unsynced, as the steps (safe from a killed process; an fsync costs as much as a step).
    // Over ranks, rank 0 names it and renames it into place, and the ranks create it together.
    std::optional<solvers::AtomicReplace> replace;
    std::string temp_path;
    local([&] {
        if (!index_writer()) return;
        // An .xmf of an earlier run names steps the new file does not hold.
        std::error_code error;
        std::filesystem::remove(xdmf_path(), error);
        if (error && error != std::errc::no_such_file_or_directory &&
            error != std::errc::not_a_directory) {
            throw std::runtime_error("cannot remove '" + xdmf_path().string() +
                                     "': " + error.message());
        }
        replace.emplace(h5_path_, solvers::FileSync::unsynced);
        temp_path = replace->temp_path().string();
        // On one process H5Fcreate truncates the file (O_TRUNC), dropping the blocks past its
        // end; HDF5's MPI-IO driver keeps them (it truncates no empty file), where it matters.
        if (reserve_disk_space(replace->temp_path(), header_bytes(input_text, solver_decisions))) {
            reserved_ = true;
        }
    });
    if (distributed()) {
        const auto bytes = std::as_bytes(std::span(temp_path));
        const auto all = ranks_->ranks->all_gather(bytes);
        temp_path.assign(reinterpret_cast<const char*>(all[0].data()), all[0].size());
    }
    collective("H5Fcreate", [&] {
        auto access = file_access(context);
        file_ =
            context.check(H5Fcreate(temp_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()),
                          H5Fclose, "H5Fcreate (create/truncate)");

        auto group =
            context.check(H5Gcreate2(file_.get(), "/grid", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                          H5Gclose, "H5Gcreate2 of group '/grid'");
        context.scalar_attribute(group.get(), "dimension", H5T_NATIVE_INT, grid_.dimension());
        context.triple_attribute(group.get(), "points", H5T_NATIVE_INT64, grid_.points());
        context.triple_attribute(group.get(), "origin", H5T_NATIVE_DOUBLE, grid_.origin());
        context.triple_attribute(group.get(), "spacing", H5T_NATIVE_DOUBLE, grid_.spacing());

        context.string_dataset(file_.get(), "/input", input_text);
        context.string_dataset(file_.get(), "/solver_decisions", solver_decisions);
        context.check(H5Gcreate2(file_.get(), "/steps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                      H5Gclose, "H5Gcreate2 of group '/steps'");
        hdf5::flush_to_disk(context, file_.get());
    });
    local([&] {
        if (replace) replace->commit();
    });
    // Renamed into place (the agreement above comes after it): every rank sees the run file.
    identity_ = identity_of(h5_path_);
}

void Hdf5RunWriter::append(std::string_view input_text, std::string_view solver_decisions) {
    const hdf5::Context context = this->context();
    identity_ = identity_of(h5_path_);
    reserve(header_bytes(input_text, solver_decisions));
    collective("H5Fopen (append)", [&] { append_restart(context, input_text, solver_decisions); });
    local([&] {
        if (index_writer()) {
            solvers::write_file_atomically(xdmf_path(),
                                           make_xdmf(grid_, h5_path_.filename().string(), steps_));
        }
    });
}

void Hdf5RunWriter::append_restart(const hdf5::Context& context, std::string_view input_text,
                                   std::string_view solver_decisions) {
    auto access = file_access(context);
    file_ = context.check(H5Fopen(h5_path_.c_str(), H5F_ACC_RDWR, access.get()), H5Fclose,
                          "H5Fopen (read-write)");
    identity_ = identity_of(h5_path_);
    hdf5::refuse_links_out_of_file(context, file_.get());
    {
        auto group = context.check(H5Gopen2(file_.get(), "/grid", H5P_DEFAULT), H5Gclose,
                                   "H5Gopen2 of group '/grid'");
        const bool same_grid =
            context.read_scalar_attribute<int>(group.get(), "dimension", H5T_NATIVE_INT) ==
                grid_.dimension() &&
            context.read_triple_attribute<std::int64_t>(group.get(), "points", H5T_NATIVE_INT64) ==
                grid_.points() &&
            context.read_triple_attribute<double>(group.get(), "origin", H5T_NATIVE_DOUBLE) ==
                grid_.origin() &&
            context.read_triple_attribute<double>(group.get(), "spacing", H5T_NATIVE_DOUBLE) ==
                grid_.spacing();
        if (!same_grid) {
            throw std::invalid_argument("HDF5 file '" + h5_path_.string() +
                                        "' holds a different grid: cannot append to it");
        }
    }

    const auto dims = hdf5::field_dims(grid_);
    for (const auto& stored : hdf5::list_steps(context, file_.get())) {
        const std::string path = step_group_path(stored.step);
        auto group =
            context.check(H5Gopen2(file_.get(), ("/steps/" + stored.name).c_str(), H5P_DEFAULT),
                          H5Gclose, "H5Gopen2 of group '/steps/" + stored.name + "'");
        steps_.push_back(
            {stored.step,
             context.read_scalar_attribute<double>(group.get(), "time", H5T_NATIVE_DOUBLE),
             hdf5::field_names(context, group.get(), path, dims)});
    }

    // One group per restart, numbered in order, recording what the continuation ran with.
    if (!context.link_exists(file_.get(), "/restarts")) {
        context.check(H5Gcreate2(file_.get(), "/restarts", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                      H5Gclose, "H5Gcreate2 of group '/restarts'");
    }
    H5G_info_t restarts;
    {
        auto group = context.check(H5Gopen2(file_.get(), "/restarts", H5P_DEFAULT), H5Gclose,
                                   "H5Gopen2 of group '/restarts'");
        context.check(H5Gget_info(group.get(), &restarts), "H5Gget_info of '/restarts'");
    }
    const std::string restart_path = "/restarts/" + std::to_string(restarts.nlinks);
    auto group = context.check(
        H5Gcreate2(file_.get(), restart_path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        H5Gclose, "H5Gcreate2 of group '" + restart_path + "'");
    context.scalar_attribute(group.get(), "step", H5T_NATIVE_INT64,
                             steps_.empty() ? std::int64_t{0} : steps_.back().step);
    context.string_dataset(group.get(), "input", input_text);
    context.string_dataset(group.get(), "solver_decisions", solver_decisions);
    group.reset();
    hdf5::flush_to_disk(context, file_.get());
}

std::size_t Hdf5RunWriter::metadata_cache_entries() const {
    std::size_t max_size = 0, min_clean_size = 0, size = 0;
    int entries = 0;
    // Asked before a collective: no failure may stop one rank here (0 where HDF5 cannot say).
    if (H5Fget_mdc_size(file_.get(), &max_size, &min_clean_size, &size, &entries) < 0) {
        H5Eclear2(H5E_DEFAULT);
        return 0;
    }
    return static_cast<std::size_t>(entries);
}

void Hdf5RunWriter::release_cache(const hdf5::Context& context) {
    // A cache that never evicts keeps every object of every step, and each flush scans every
    // entry it holds (HDF5 builds its list of dirty entries from the whole cache): output
    // every step cost time quadratic in the steps. Closing and reopening the (just flushed, so
    // clean) file empties it; at this bound a flush scans a few microseconds' worth, and the
    // reopening (about a millisecond) comes every hundred steps or more.
    const double entries = static_cast<double>(metadata_cache_entries());
    // Over ranks the reopening is collective: the ranks decide alike, on the largest cache.
    const double largest = distributed() ? ranks_->ranks->max(entries) : entries;
    if (largest < static_cast<double>(max_cache_entries)) return;
    collective("H5Fopen (reopening)", [&] {
        file_.reset();
        auto access = file_access(context);
        file_ = context.check(H5Fopen(h5_path_.c_str(), H5F_ACC_RDWR, access.get()), H5Fclose,
                              "H5Fopen (read-write, reopening)");
    });
}

std::filesystem::path Hdf5RunWriter::xdmf_path() const {
    auto path = h5_path_;
    return path.replace_extension(".xmf");
}

// Cost per step: one contiguous H5Dwrite per field (its bytes copied into the page cache), the
// step's metadata at the flush, and the .xmf rewritten (text growing with the steps, no fsync).
void Hdf5RunWriter::write_step(std::int64_t step, double time, std::span<const FieldView> fields,
                               const StepStatistics& stats) {
    stage_step(step, time, fields, stats);
    commit_staged();
}

void Hdf5RunWriter::stage_step(std::int64_t step, double time, std::span<const FieldView> fields,
                               const StepStatistics& stats) {
    if (staged_) {
        throw std::logic_error("HDF5 file '" + h5_path_.string() + "': step " +
                               std::to_string(staged_->step) + " is staged and not committed");
    }
    const std::string group_path = step_group_path(step);
    const Box box = distributed() ? ranks_->owned : grid_.box();
    local([&] {
        for (const auto& field : fields) {
            if (static_cast<std::int64_t>(field.values.size()) != box.size()) {
                throw std::invalid_argument("HDF5 file '" + h5_path_.string() + "', " + group_path +
                                            ": field '" + field.name + "' has " +
                                            std::to_string(field.values.size()) + " values, the " +
                                            (distributed() ? "rank's box has " : "grid has ") +
                                            std::to_string(box.size()) + " nodes");
            }
        }
    });
    reserve(step_bytes(fields, stats));

    const hdf5::Context context = this->context();
    XdmfStep entry{step, time, {}};
    // The group first, agreed on its own: every rank then holds it, so that its unlinking
    // below, after a failed write, is made by every rank. A step written twice fails here.
    Hdf5Handle group;
    collective("H5Gcreate2 of a step", [&] {
        group = context.check(
            H5Gcreate2(file_.get(), group_path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
            H5Gclose, "H5Gcreate2 of group '" + group_path + "'");
    });
    try {
        collective("H5Dwrite of a step",
                   [&] { write_step_group(context, group.get(), time, fields, stats, box); });
    } catch (...) {
        // A half-written group would be flushed with the next step: unlink it (best effort; over
        // ranks every rank is here, as the failure was agreed).
        group.reset();
        H5Ldelete(file_.get(), group_path.c_str(), H5P_DEFAULT);
        H5Eclear2(H5E_DEFAULT);
        throw;
    }
    for (const auto& field : fields) entry.field_names.push_back(field.name);
    staged_ = std::move(entry);
}

void Hdf5RunWriter::write_step_group(const hdf5::Context& context, hid_t group, double time,
                                     std::span<const FieldView> fields, const StepStatistics& stats,
                                     const Box& box) const {
    context.scalar_attribute(group, "time", H5T_NATIVE_DOUBLE, time);
    context.scalar_attribute(group, "solver_iterations", H5T_NATIVE_INT64, stats.solver_iterations);
    context.scalar_attribute(group, "relative_residual", H5T_NATIVE_DOUBLE,
                             stats.relative_residual);
    context.string_attribute(group, "status", stats.status);
    context.string_attribute(group, "method", stats.method);
    // Raw data goes to space that the flushed metadata does not reference yet: the step is
    // invisible until commit_staged().
    const auto dims = hdf5::field_dims(grid_);
    for (const auto& field : fields) {
        context.field_dataset(group, field.name.c_str(), dims, hdf5::field_part(grid_, box),
                              field.values);
    }
    if (!stats.residual_history.empty()) {
        const std::array<hsize_t, 1> length{stats.residual_history.size()};
        context.double_dataset(group, "residual_history", length, stats.residual_history);
    }
}

void Hdf5RunWriter::commit_staged() {
    if (!staged_) {
        throw std::logic_error("HDF5 file '" + h5_path_.string() + "': no step is staged");
    }
    const hdf5::Context context = this->context();
    collective("H5Fflush", [&] { hdf5::flush_to_disk(context, file_.get()); });
    local([&] {
        check_still_in_place();
        if (index_writer()) note_step_growth();
    });
    steps_.push_back(std::move(*staged_));
    staged_.reset();
    release_cache(context);
    if (xdmf_schedule_.changed(steps_.size())) local([&] { write_index(); });
}

void Hdf5RunWriter::note_step_growth() {
    std::error_code error;
    const auto size = std::filesystem::file_size(h5_path_, error);
    if (!error && size > size_before_step_) {
        largest_step_growth_ = std::max(largest_step_growth_, size - size_before_step_);
    }
}

void Hdf5RunWriter::check_still_in_place() const {
    if (identity_of(h5_path_) == identity_) return;
    throw std::runtime_error("HDF5 file '" + h5_path_.string() +
                             "' was removed or replaced during the run (by another process?): "
                             "the steps written to it are lost");
}

void Hdf5RunWriter::discard_staged() {
    if (!staged_) return;
    const std::string group_path = step_group_path(staged_->step);
    staged_.reset();
    const hdf5::Context context = this->context();
    context.check(H5Ldelete(file_.get(), group_path.c_str(), H5P_DEFAULT),
                  "H5Ldelete of group '" + group_path + "'");
}

}  // namespace simrun::framework

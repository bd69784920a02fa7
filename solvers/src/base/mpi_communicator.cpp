// The communicator of the processes an MPI launcher started (MPI_COMM_WORLD) and its duplicates.
// Compiled where CMake found MPI; mpi_absent.cpp stands in elsewhere. The C API only: Open MPI's
// and MPICH's deprecated C++ bindings are left out (they would need a library of their own).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/base/mpi_comm.hpp"

namespace simrun::solvers {
namespace {

// Whether an MPI launcher started this process: Open MPI's mpirun, MPICH's Hydra and Slurm
// (PMI), or a PMIx launcher (srun, Open MPI 5).
bool started_by_launcher() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
        if (std::getenv(name) != nullptr) return true;
    }
    return false;
}

int to_int(std::size_t count, const char* what) {
    if (count > static_cast<std::size_t>(INT_MAX)) {
        throw std::length_error(std::string("MPI: ") + what + " of " + std::to_string(count) +
                                " elements exceeds MPI's int counts");
    }
    return static_cast<int>(count);
}

// The most bytes one MPI call moves: MPI counts are ints, so larger messages travel in pieces
// of this size (whole doubles). SIMRUN_MPI_MESSAGE_BYTES sets a smaller one (the tests use it
// to send every path's messages in pieces).
std::size_t message_limit() {
    std::size_t limit = static_cast<std::size_t>(INT_MAX) / 8 * 8;
    if (const char* text = std::getenv("SIMRUN_MPI_MESSAGE_BYTES")) {
        char* end = nullptr;
        const unsigned long long value = std::strtoull(text, &end, 10);
        if (end != text && *end == '\0' && value >= 8) {
            limit = std::min<std::size_t>(limit, static_cast<std::size_t>(value) / 8 * 8);
        }
    }
    return limit;
}

class MpiExchange final : public PendingExchange {
public:
    explicit MpiExchange(std::vector<MPI_Request> requests) : requests_(std::move(requests)) {}
    ~MpiExchange() override {
        if (!requests_.empty()) finish();
    }
    void finish() override {
        MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
        requests_.clear();
    }

private:
    std::vector<MPI_Request> requests_;
};

// MPI_COMM_WORLD (the instance that initialises and finalises MPI) or a duplicate of another
// instance's communicator (which keeps that instance, and so MPI, alive).
class MpiRanks final : public Communicator, public std::enable_shared_from_this<MpiRanks> {
public:
    MpiRanks(int& argc, char**& argv) {
        // Several threads call MPI: the main thread computes, the output writers write the run
        // file collectively and agree on each step's pieces, each on a duplicate.
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &threads_);
        comm_ = MPI_COMM_WORLD;
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
        MPI_Comm host;
        MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host);
        MPI_Comm_rank(host, &host_rank_);
        MPI_Comm_free(&host);
        // Checked on every rank where any rank's environment asks (mpirun may not pass it on).
        int asked = collective_checks_asked() ? 1 : 0, any = 0;
        MPI_Allreduce(&asked, &any, 1, MPI_INT, MPI_MAX, comm_);
        checks_collectives_ = any != 0;
    }
    explicit MpiRanks(std::shared_ptr<const MpiRanks> of)
        : of_(std::move(of)),
          threads_(of_->threads_),
          rank_(of_->rank_),
          size_(of_->size_),
          host_rank_(of_->host_rank_) {
        MPI_Comm_dup(of_->comm_, &comm_);
        checks_collectives_ = of_->checks_collectives_;
    }
    ~MpiRanks() override {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (finalized) return;
        if (of_) {
            MPI_Comm_free(&comm_);
        } else {
            MPI_Finalize();
        }
    }
    MpiRanks(const MpiRanks&) = delete;
    MpiRanks& operator=(const MpiRanks&) = delete;

    MPI_Comm comm() const { return comm_; }

    std::shared_ptr<const Communicator> make_duplicate() const override {
        if (threads_ < MPI_THREAD_MULTIPLE) {
            throw std::runtime_error(
                "this MPI library lets one thread at a time call it (MPI_THREAD_MULTIPLE was "
                "asked for, level " +
                std::to_string(threads_) +
                " given): distributed output needs its writer threads to communicate");
        }
        return std::make_shared<const MpiRanks>(shared_from_this());
    }

    int rank() const override { return rank_; }
    int size() const override { return size_; }
    int host_rank() const override { return host_rank_; }

    // Traffic: K m doubles received per rank; the sum runs in rank order on each.
    void reduce_sum(std::span<double> values) const override {
        if (values.empty()) return;
        const CommunicationTimer timer(times().reductions,
                                       static_cast<double>(values.size_bytes()));
        const int m = to_int(values.size(), "a sum");
        std::vector<double> all(values.size() * static_cast<std::size_t>(size_));
        MPI_Allgather(values.data(), m, MPI_DOUBLE, all.data(), m, MPI_DOUBLE, comm_);
        for (std::size_t i = 0; i < values.size(); ++i) {
            double total = all[i];
            for (int r = 1; r < size_; ++r)
                total += all[static_cast<std::size_t>(r) * values.size() + i];
            values[i] = total;
        }
    }
    double reduce_min(double value) const override {
        const CommunicationTimer timer(times().reductions, static_cast<double>(sizeof value));
        double result = value;
        MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MIN, comm_);
        return result;
    }
    // Traffic: every rank's bytes to every rank (one MPI_Allgatherv; where a rank's part or the
    // whole exceeds one call's limit, each part sent to each rank in pieces).
    std::vector<std::vector<std::byte>> gather_bytes(
        std::span<const std::byte> bytes) const override {
        const CommunicationTimer timer(times().gathers,
                                       static_cast<double>(bytes.size()) * (size_ - 1.0));
        const std::vector<std::int64_t> counts = all_counts(bytes.size());
        std::int64_t total = 0;
        for (const std::int64_t c : counts) total += c;
        std::vector<std::vector<std::byte>> result(counts.size());
        if (static_cast<std::uint64_t>(total) > limit_) {
            std::vector<Message> sends, receives;
            const auto mine = std::span(const_cast<std::byte*>(bytes.data()), bytes.size());
            for (int r = 0; r < size_; ++r) {
                result[static_cast<std::size_t>(r)].resize(
                    static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]));
                if (r == rank_) continue;
                sends.push_back({r, mine});
                receives.push_back({r, result[static_cast<std::size_t>(r)]});
            }
            start_exchange(sends, receives)->finish();
            result[static_cast<std::size_t>(rank_)].assign(bytes.begin(), bytes.end());
            return result;
        }
        std::vector<int> sizes(counts.size()), displacements(counts.size());
        for (std::size_t r = 0, at = 0; r < counts.size(); ++r) {
            sizes[r] = static_cast<int>(counts[r]);
            displacements[r] = static_cast<int>(at);
            at += static_cast<std::size_t>(counts[r]);
        }
        std::vector<std::byte> all(static_cast<std::size_t>(total));
        MPI_Allgatherv(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, all.data(),
                       sizes.data(), displacements.data(), MPI_BYTE, comm_);
        for (std::size_t r = 0; r < counts.size(); ++r) {
            const auto first = all.begin() + displacements[r];
            result[r].assign(first, first + sizes[r]);
        }
        return result;
    }
    // Traffic: every rank's values to `root` (one MPI_Gatherv, or in pieces as all_gather).
    std::vector<double> gather_values(std::span<const double> values, int root) const override {
        const CommunicationTimer timer(
            times().gathers, rank_ == root ? 0.0 : static_cast<double>(values.size_bytes()));
        const std::vector<std::int64_t> counts = all_counts(values.size_bytes());
        std::int64_t total = 0;
        for (const std::int64_t c : counts) total += c;
        std::vector<double> all(rank_ == root ? static_cast<std::size_t>(total) / sizeof(double)
                                              : 0);
        if (static_cast<std::uint64_t>(total) > limit_) {
            std::vector<Message> sends, receives;
            const auto mine = std::as_writable_bytes(
                std::span(const_cast<double*>(values.data()), values.size()));
            if (rank_ != root) {
                sends.push_back({root, mine});
            } else {
                auto into = std::as_writable_bytes(std::span(all));
                for (int r = 0; r < size_; ++r) {
                    const auto part =
                        into.first(static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]));
                    if (r == rank_) {
                        std::copy(mine.begin(), mine.end(), part.begin());
                    } else {
                        receives.push_back({r, part});
                    }
                    into = into.subspan(part.size());
                }
            }
            start_exchange(sends, receives)->finish();
            return all;
        }
        std::vector<int> sizes(counts.size()), displacements(counts.size());
        for (std::size_t r = 0, at = 0; r < counts.size(); ++r) {
            sizes[r] = static_cast<int>(counts[r] / static_cast<std::int64_t>(sizeof(double)));
            displacements[r] = static_cast<int>(at);
            at += static_cast<std::size_t>(sizes[r]);
        }
        MPI_Gatherv(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, all.data(),
                    sizes.data(), displacements.data(), MPI_DOUBLE, root, comm_);
        return all;
    }
    // Each message in pieces of at most one call's limit, in order (MPI keeps the order of the
    // messages between two ranks on one tag, so the pieces meet their receives in turn).
    std::unique_ptr<PendingExchange> start_exchange(
        std::span<const Message> sends, std::span<const Message> receives) const override {
        std::vector<MPI_Request> requests;
        const auto post = [&](const Message& m, bool send) {
            std::size_t at = 0;
            do {
                const std::size_t piece = std::min(limit_, m.bytes.size() - at);
                requests.emplace_back();
                if (send) {
                    MPI_Isend(m.bytes.data() + at, static_cast<int>(piece), MPI_BYTE, m.rank, 0,
                              comm_, &requests.back());
                } else {
                    MPI_Irecv(m.bytes.data() + at, static_cast<int>(piece), MPI_BYTE, m.rank, 0,
                              comm_, &requests.back());
                }
                at += piece;
            } while (at < m.bytes.size());
        };
        for (const Message& m : receives) post(m, false);
        for (const Message& m : sends) post(m, true);
        return std::make_unique<MpiExchange>(std::move(requests));
    }
    void meet() const override { MPI_Barrier(comm_); }
    [[noreturn]] void abort(int code) const override {
        MPI_Abort(comm_, code);
        std::_Exit(code);
    }
    std::string describe() const override {
        std::string library = mpi_library_version();
        return library.substr(0, library.find(',')) + ", " + std::to_string(size_) +
               (size_ == 1 ? " rank" : " ranks");
    }

private:
    // Every rank's count (of bytes), on every rank.
    std::vector<std::int64_t> all_counts(std::size_t count) const {
        const auto mine = static_cast<std::int64_t>(count);
        std::vector<std::int64_t> counts(static_cast<std::size_t>(size_));
        MPI_Allgather(&mine, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm_);
        return counts;
    }

    std::size_t limit_ = message_limit();
    std::shared_ptr<const MpiRanks> of_;  // the instance duplicated; null for the world
    int threads_ = MPI_THREAD_SINGLE;     // the thread level MPI provides
    int rank_ = 0, size_ = 1, host_rank_ = 0;
    MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace

std::shared_ptr<const Communicator> launched_processes(int& argc, char**& argv) {
    if (!started_by_launcher()) return single_process();
    return std::make_shared<const MpiRanks>(argc, argv);
}

MPI_Comm mpi_comm_of(const Communicator& ranks) {
    if (const auto* mpi = dynamic_cast<const MpiRanks*>(&ranks)) return mpi->comm();
    return MPI_COMM_SELF;
}

bool mpi_compiled() { return true; }

std::string mpi_library_version() {
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(text, &length);
    std::string version(text, static_cast<std::size_t>(length));
    version = version.substr(0, version.find('\n'));
    while (!version.empty() && (version.back() == '\0' || version.back() == ' ')) {
        version.pop_back();
    }
    return version;
}

}  // namespace simrun::solvers

#pragma once
// The processes a distributed solve runs in, and what they say to each other: global sums that
// are the same bits on every rank and in every run, gathers, and the exchange of rows with
// neighbouring ranks. One process is a communicator of size 1 whose operations are identities,
// so that code written against this interface runs unchanged without MPI. With MPI (a build
// that found it, a program started by mpirun) the processes are MPI_COMM_WORLD's.
#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "simrun/solvers/base/communication_times.hpp"

namespace simrun::solvers {

// Bytes to send to, or to receive from, another rank.
struct Message {
    int rank = 0;
    std::span<std::byte> bytes;
};

// An exchange under way: finish() waits until every message has been sent and received.
class PendingExchange {
public:
    virtual ~PendingExchange() = default;
    virtual void finish() = 0;
};

class Communicator {
public:
    virtual ~Communicator() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    // This rank's index among the ranks of its host (which GPU of the host it takes).
    virtual int host_rank() const = 0;

    // Each value summed over the ranks, the same bits on every rank and in every run whatever
    // the timing: the ranks' values are gathered and added in rank order (not in whatever
    // order a reduction tree would take).
    virtual void sum(std::span<double> values) const = 0;
    double sum(double value) const;
    // The smallest and the largest value over the ranks (exact in any order).
    virtual double min(double value) const = 0;
    double max(double value) const { return -min(-value); }
    // Every rank's bytes, in rank order, on every rank.
    virtual std::vector<std::vector<std::byte>> all_gather(
        std::span<const std::byte> bytes) const = 0;
    // Every rank's values concatenated in rank order, on `root` (empty elsewhere).
    virtual std::vector<double> gather(std::span<const double> values, int root) const = 0;
    // Sends each of `sends` and receives each of `receives` (their sizes agreed beforehand);
    // the buffers must stay alive until finish(). Returns at once.
    virtual std::unique_ptr<PendingExchange> start_exchange(
        std::span<const Message> sends, std::span<const Message> receives) const = 0;
    // Waits for every rank.
    virtual void barrier() const = 0;
    // Ends every rank's process with `code` (MPI_Abort); for a failure on this rank alone that
    // the others, waiting in a collective, would never learn of.
    [[noreturn]] virtual void abort(int code) const = 0;
    // E.g. "Open MPI v4.1.4, 4 ranks"; "one process" where there is no MPI.
    virtual std::string describe() const = 0;
    // The same ranks on a channel of their own (MPI_Comm_dup; collective): its messages and
    // collectives never meet this one's, so another thread (an output writer) can use it while
    // this one computes. Throws std::runtime_error where the MPI library lets only one thread
    // call it.
    virtual std::shared_ptr<const Communicator> duplicate() const = 0;

    // What this rank's communication on this communicator has cost so far (sums and gathers
    // counted by the implementation, halo exchanges by their callers): one thread uses a
    // communicator at a time, as MPI's rules for one communicator ask.
    CommunicationTimes& times() const { return times_; }

private:
    mutable CommunicationTimes times_;
};

// Sends `to_before` to rank() - 1 and `to_after` to rank() + 1, and receives from them into
// `from_before` and `from_after` (sizes agreed beforehand); a side whose two spans are empty
// takes no part (none where there is no such rank). Waits until every message has travelled.
void exchange_with_neighbours(const Communicator& ranks, std::span<std::byte> to_before,
                              std::span<std::byte> from_before, std::span<std::byte> to_after,
                              std::span<std::byte> from_after);

// Raised on the ranks that did not fail where all_or_none saw another rank fail: that rank's own
// exception carries the cause.
class PeerFailure : public std::runtime_error {
public:
    explicit PeerFailure(int rank)
        : std::runtime_error("rank " + std::to_string(rank) + " failed"), rank_(rank) {}
    int rank() const { return rank_; }

private:
    int rank_;
};

// Runs work() (local work: no collective inside) on every rank, then one collective where the
// ranks learn whether any failed: then the ranks that failed rethrow their exception and the
// others throw PeerFailure, so that no rank goes on to a collective the failed one never
// reaches. On one process, work() alone.
template <typename Work>
auto all_or_none(const Communicator& ranks, Work&& work) -> decltype(work()) {
    if (ranks.size() == 1) return work();
    std::exception_ptr failure;
    using Result = decltype(work());
    if constexpr (std::is_void_v<Result>) {
        try {
            work();
        } catch (...) {
            failure = std::current_exception();
        }
        // The lowest failing rank, or size() where none failed.
        const double first = ranks.min(failure ? ranks.rank() : ranks.size());
        if (failure) std::rethrow_exception(failure);
        if (first < ranks.size()) throw PeerFailure(static_cast<int>(first));
    } else {
        std::optional<Result> result;
        try {
            result.emplace(work());
        } catch (...) {
            failure = std::current_exception();
        }
        const double first = ranks.min(failure ? ranks.rank() : ranks.size());
        if (failure) std::rethrow_exception(failure);
        if (first < ranks.size()) throw PeerFailure(static_cast<int>(first));
        return std::move(*result);
    }
}

// The communicator of one process.
std::shared_ptr<const Communicator> single_process();

// The processes this program was started in: MPI_COMM_WORLD (MPI initialised here, finalised
// when the last reference goes) where the build has MPI and an MPI launcher (mpirun, srun)
// started the program; the single process otherwise, so that a plain start never initialises
// MPI. Call once, before any thread is started.
std::shared_ptr<const Communicator> launched_processes(int& argc, char**& argv);

// Whether this build has MPI, and the library's own one-line description ("Open MPI v4.1.4,
// ...", read without initialising MPI); empty without it.
bool mpi_compiled();
std::string mpi_library_version();

}  // namespace simrun::solvers

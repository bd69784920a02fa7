#pragma once
// The processes a distributed solve runs in, and what they say to each other: global sums that
// are the same bits on every rank and in every run, gathers, and the exchange of rows with
// neighbouring ranks. One process is a communicator of size 1 whose operations are identities,
// so that code written against this interface runs unchanged without MPI. With MPI (a build
// that found it, a program started by mpirun) the processes are MPI_COMM_WORLD's.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <source_location>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
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

// Where a collective is called from: the checks below name it.
using CallSite = std::source_location;

// Collectives are reached by every rank in the same order by construction (decisions that lead
// to one are taken on values every rank holds; none runs inside local work, see all_or_none).
// Two checks hold the code to it. Always: a collective called inside all_or_none's local work
// throws std::logic_error naming both places. With SIMRUN_CHECK_COLLECTIVES=1 in the
// environment (the MPI tests set it): before each collective the ranks compare a running count
// and the call's site, and where they differ every rank prints both sites and the program ends
// (abort(3)), so that a divergence is an error naming its places instead of a hang.
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
    void sum(std::span<double> values, CallSite site = CallSite::current()) const {
        enter_collective("sum", site);
        reduce_sum(values);
    }
    double sum(double value, CallSite site = CallSite::current()) const;
    // The smallest and the largest value over the ranks (exact in any order).
    double min(double value, CallSite site = CallSite::current()) const {
        enter_collective("min", site);
        return reduce_min(value);
    }
    double max(double value, CallSite site = CallSite::current()) const {
        enter_collective("max", site);
        return -reduce_min(-value);
    }
    // Every rank's bytes, in rank order, on every rank.
    std::vector<std::vector<std::byte>> all_gather(std::span<const std::byte> bytes,
                                                   CallSite site = CallSite::current()) const {
        enter_collective("all_gather", site);
        return gather_bytes(bytes);
    }
    // Every rank's values concatenated in rank order, on `root` (empty elsewhere).
    std::vector<double> gather(std::span<const double> values, int root,
                               CallSite site = CallSite::current()) const {
        enter_collective("gather", site);
        return gather_values(values, root);
    }
    // Waits for every rank.
    void barrier(CallSite site = CallSite::current()) const {
        enter_collective("barrier", site);
        meet();
    }
    // The same ranks on a channel of their own (MPI_Comm_dup; collective): its messages and
    // collectives never meet this one's, so another thread (an output writer) can use it while
    // this one computes. Throws std::runtime_error where the MPI library lets only one thread
    // call it.
    std::shared_ptr<const Communicator> duplicate(CallSite site = CallSite::current()) const {
        enter_collective("duplicate", site);
        return make_duplicate();
    }
    // Marks a collective made on these ranks outside this interface (a library's: HDF5's
    // MPI-IO), so that the checks above cover it too. `operation` names it in their messages.
    void enter_collective(std::string_view operation, CallSite site = CallSite::current()) const;

    // Sends each of `sends` and receives each of `receives` (their sizes agreed beforehand);
    // the buffers must stay alive until finish(). Returns at once.
    virtual std::unique_ptr<PendingExchange> start_exchange(
        std::span<const Message> sends, std::span<const Message> receives) const = 0;
    // Ends every rank's process with `code` (MPI_Abort); for a failure on this rank alone that
    // the others, waiting in a collective, would never learn of.
    [[noreturn]] virtual void abort(int code) const = 0;
    // E.g. "Open MPI v4.1.4, 4 ranks"; "one process" where there is no MPI.
    virtual std::string describe() const = 0;

    // What this rank's communication on this communicator has cost so far (sums and gathers
    // counted by the implementation, halo exchanges by their callers): one thread uses a
    // communicator at a time, as MPI's rules for one communicator ask.
    CommunicationTimes& times() const { return times_; }

protected:
    // The collectives themselves, as the public calls above describe them (unchecked).
    virtual void reduce_sum(std::span<double> values) const = 0;
    virtual double reduce_min(double value) const = 0;
    virtual std::vector<std::vector<std::byte>> gather_bytes(
        std::span<const std::byte> bytes) const = 0;
    virtual std::vector<double> gather_values(std::span<const double> values, int root) const = 0;
    virtual void meet() const = 0;
    virtual std::shared_ptr<const Communicator> make_duplicate() const = 0;

    // Whether the collectives are checked (SIMRUN_CHECK_COLLECTIVES): set by the
    // implementation, the same on every rank (over MPI agreed when the world is made).
    bool checks_collectives_ = false;

private:
    mutable CommunicationTimes times_;
    mutable std::uint64_t collectives_ = 0;  // made so far (counted where checked)
};

// Whether this process's environment asks for the collectives to be checked
// (SIMRUN_CHECK_COLLECTIVES set, and not to "" or "0").
bool collective_checks_asked();

// Marks the calling thread as inside local work (all_or_none's) for its lifetime: a collective
// called meanwhile throws std::logic_error naming `site` and its own place.
class LocalWork {
public:
    explicit LocalWork(const CallSite& site);
    ~LocalWork();
    LocalWork(const LocalWork&) = delete;
    LocalWork& operator=(const LocalWork&) = delete;

private:
    const CallSite* outer_;
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

namespace detail {
// The agreement that ends all_or_none and collectively: `failure` is this rank's (null where it
// did not fail). Rethrows it on the ranks that failed, throws PeerFailure on the others; returns
// where none failed. Collective.
void agree_on_failure(const Communicator& ranks, const std::exception_ptr& failure,
                      const CallSite& site);

template <typename Work>
auto run_then_agree(const Communicator& ranks, Work& work, const CallSite& site, bool local)
    -> decltype(work()) {
    using Result = decltype(work());
    std::exception_ptr failure;
    std::optional<std::conditional_t<std::is_void_v<Result>, bool, Result>> result;
    {
        std::optional<LocalWork> inside;
        if (local) inside.emplace(site);
        try {
            if constexpr (std::is_void_v<Result>) {
                work();
                result.emplace(true);
            } else {
                result.emplace(work());
            }
        } catch (...) {
            failure = std::current_exception();
        }
    }
    agree_on_failure(ranks, failure, site);
    if constexpr (!std::is_void_v<Result>) return std::move(*result);
}
}  // namespace detail

// Runs work() (local work: no collective inside, which LocalWork enforces) on every rank, then
// one collective where the ranks learn whether any failed: then the ranks that failed rethrow
// their exception and the others throw PeerFailure, so that no rank goes on to a collective the
// failed one never reaches. On one process, work() alone (under LocalWork too).
template <typename Work>
auto all_or_none(const Communicator& ranks, Work&& work, CallSite site = CallSite::current())
    -> decltype(work()) {
    if (ranks.size() == 1) {
        // Where the ranks would agree, as over MPI: refused inside local work (nesting).
        ranks.enter_collective("all_or_none's agreement", site);
        const LocalWork inside(site);
        return work();
    }
    return detail::run_then_agree(ranks, work, site, true);
}

// Runs work(), a collective of a library on these ranks as a whole (HDF5's MPI-IO calls, made
// by every rank in the same order, with nothing a rank may fail at alone left inside: that
// goes to all_or_none before it), checked as a collective named `operation`, then agrees as
// all_or_none does on whether it failed anywhere.
template <typename Work>
auto collectively(const Communicator& ranks, std::string_view operation, Work&& work,
                  CallSite site = CallSite::current()) -> decltype(work()) {
    ranks.enter_collective(operation, site);
    if (ranks.size() == 1) return work();
    return detail::run_then_agree(ranks, work, site, false);
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

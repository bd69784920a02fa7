#pragma once
// How the ranks of a distributed run stop together. A failure one rank meets alone (data that
// is not finite at a node of its slab, a file it cannot read, a write that fails) would leave
// the others waiting in their next collective for ever. So the places where a rank may fail on
// its own are followed by an agreement, a collective every rank reaches, where the ranks learn
// whether any failed: then every rank raises the same AgreedFailure (the lowest failing rank's,
// as it raised it) and the run ends alike everywhere, reported once.
//
// A rank that fails skips the agreements between its failure and the next one it reaches; that
// one meets the others' next agreement, which is why no other collective may stand between a
// place a rank may fail alone and the next agreement. An AgreedFailure passes through the
// enclosing agreements without another (every rank knows it already). On one process nothing
// is exchanged and exceptions pass unchanged.
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "simrun/framework/distributed/failure_kind.hpp"
#include "simrun/solvers/base/communicator.hpp"

namespace simrun::framework {

class AgreedFailure : public std::runtime_error {
public:
    // The failing rank's kind of failure (classify, failure_kind.hpp).
    using Kind = FailureKind;
    AgreedFailure(Kind kind, int rank, bool every_rank, const std::string& message)
        : std::runtime_error(message), kind_(kind), rank_(rank), every_rank_(every_rank) {}
    Kind kind() const { return kind_; }
    // The lowest rank that failed, and whether every rank failed with this very message (a
    // decision all ranks made alike: a solve that did not converge, an unstable step).
    int rank() const { return rank_; }
    bool every_rank() const { return every_rank_; }

private:
    Kind kind_;
    int rank_;
    bool every_rank_;
};

// A failure every rank raises at the same point, decided from values all ranks share (a solve
// that did not converge, a field that is no longer finite by its global norm): agreed, so that
// it is reported once.
class FailureOnEveryRank : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Whether a failure is one the ranks agree on: the input's and the usage's (classify's kinds
// input and usage), FailureOnEveryRank, and solvers::PeerFailure (a rank stopped by another's
// failure). Anything else (a write that failed, a device error, memory) may strike one rank where
// the others are inside a collective: that rank does not wait for them (agreeing rethrows it, and
// the program ends every rank through Communicator::abort, naming the rank).
bool agreed_on(std::exception_ptr failure);

// The agreement: `failure` is this rank's (null where it did not fail). Collective. Throws
// AgreedFailure on every rank when any failed; returns where none did. On one process,
// rethrows `failure` as it is.
void agree(const solvers::Communicator& ranks, std::exception_ptr failure);

// Runs work() and then the agreement on whether it failed on any rank (see above); a failure
// not agreed_on is rethrown at once.
template <typename Work>
auto agreeing(const solvers::Communicator& ranks, Work&& work) -> decltype(work()) {
    if (ranks.size() == 1) return work();
    std::exception_ptr failure;
    try {
        if constexpr (std::is_void_v<decltype(work())>) {
            work();
            agree(ranks, nullptr);
            return;
        } else {
            auto result = work();
            agree(ranks, nullptr);
            return result;
        }
    } catch (const AgreedFailure&) {
        throw;
    } catch (...) {
        failure = std::current_exception();
    }
    if (!agreed_on(failure)) std::rethrow_exception(failure);
    agree(ranks, failure);
    throw std::logic_error("agreement returned after a failure");  // agree() threw
}

}  // namespace simrun::framework

#include "failure_report.hpp"

#include <cstdio>
#include <string>

#include "simrun/framework/distributed/agreement.hpp"
#include "simrun/framework/run/simulation.hpp"

namespace simrun::app {
namespace {

using framework::FailureKind;

// How a kind of failure is named on stderr; a run's failed solve says so.
const char* label(FailureKind kind, const std::exception* error) {
    switch (kind) {
        case FailureKind::input:
            return "input error";
        case FailureKind::usage:
            return "usage error";
        case FailureKind::failure:
            break;
    }
    return dynamic_cast<const framework::SolveFailure*>(error) != nullptr ? "solve failed"
                                                                          : "error";
}

// Prints what ended the command and gives its exit code. `who` names the rank where it is one
// rank's alone.
int report(std::exception_ptr error, const std::string& who) {
    const FailureKind kind = framework::classify(error);
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        // A failure while running starts on a line of its own (after a progress line).
        std::fprintf(stderr, "%s%s: %s: %s\n", kind == FailureKind::failure ? "\n" : "",
                     who.c_str(), label(kind, &e), e.what());
    } catch (...) {
        std::fprintf(stderr, "\n%s: error: an unknown exception\n", who.c_str());
    }
    return exit_code(kind);
}

}  // namespace

int exit_code(FailureKind kind) { return kind == FailureKind::failure ? exit_failure : exit_usage; }

int report_failure(std::exception_ptr error, const solvers::Communicator& ranks) {
    if (ranks.size() == 1) return report(error, "simrun");
    try {
        std::rethrow_exception(error);
    } catch (const framework::AgreedFailure& agreed) {
        // An input error names its place (a node, a key); a failure of some ranks, the first.
        const bool usage = agreed.kind() != FailureKind::failure;
        const std::string who = agreed.every_rank() || usage
                                    ? std::string("simrun")
                                    : "simrun: rank " + std::to_string(agreed.rank()) + " of " +
                                          std::to_string(ranks.size());
        if (ranks.rank() == 0) {
            std::fprintf(stderr, "%s: %s: %s\n", who.c_str(), label(agreed.kind(), nullptr),
                         agreed.what());
        }
        return exit_code(agreed.kind());
    } catch (...) {
    }
    report(error,
           "simrun: rank " + std::to_string(ranks.rank()) + " of " + std::to_string(ranks.size()));
    std::fflush(stderr);
    ranks.abort(exit_failure);
    return exit_failure;  // not reached: abort() ends the process
}

}  // namespace simrun::app

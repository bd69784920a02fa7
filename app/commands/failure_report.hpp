#pragma once
// What ended a command, printed and turned into its exit code (SPEC §7): 0 success; 1 the
// computation failed (a solve did not converge, I/O failure); 2 usage or input error. The kind
// is the framework's one classification (distributed/failure_kind.hpp).
#include <exception>

#include "simrun/framework/distributed/failure_kind.hpp"
#include "simrun/solvers/base/communicator.hpp"

namespace simrun::app {

inline constexpr int exit_success = 0;
inline constexpr int exit_failure = 1;
inline constexpr int exit_usage = 2;

// 2 for what the input or the options ask for, 1 for a failure while running.
int exit_code(framework::FailureKind kind);

// Prints `error` on stderr and returns its exit code. Over several ranks: a failure the ranks
// agreed on is printed once, by rank 0, and every rank exits with its code; a failure of this
// rank alone (met where the others cannot learn of it) is printed naming the rank, and ends
// every rank's process (MPI_Abort) with code 1 rather than leaving them waiting.
int report_failure(std::exception_ptr error, const solvers::Communicator& ranks);

}  // namespace simrun::app

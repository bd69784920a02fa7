#pragma once
// What kind of failure ended a command: the one classification that the command line's exit
// code, the Python module's exception class and the ranks' agreement (agreement.hpp) all read.
#include <exception>

namespace simrun::framework {

enum class FailureKind {
    // The input asks for what cannot be done: framework::InputError, solvers::MatrixMarketError,
    // std::invalid_argument. Exit code 2; simrun.InputError in Python.
    input,
    // A back-end this build or this machine lacks: solvers::NotCompiled, DeviceUnavailable. Exit
    // code 2; simrun.UsageError.
    usage,
    // The computation failed: anything else (a solve that did not converge, I/O, a device,
    // memory). Exit code 1; in Python simrun.SolveFailure for a run's failed solve, else the
    // exception's own translation (RuntimeError).
    failure,
};

// The kind of `error`; an AgreedFailure's is the kind the ranks agreed on.
FailureKind classify(const std::exception& error);
// The same for any exception (never null): one that is no std::exception is a failure.
FailureKind classify(std::exception_ptr error);

}  // namespace simrun::framework

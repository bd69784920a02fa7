#pragma once
// Exceptions of the solver layer. A solve that does not converge is not an exception: it is a
// SolveResult with a status (solve_result.hpp).
#include <stdexcept>
#include <string>

namespace simrun::solvers {

// Base of every error thrown by the solver layer.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A back-end was asked for that this build does not contain.
class NotCompiled : public Error {
public:
    explicit NotCompiled(const std::string& backend)
        : Error("this build of simrun has no " + backend + " back-end (it was compiled without " +
                backend + "); use --backend cpu, or rebuild where the " + backend +
                " toolkit is found") {}
};

// A back-end was asked for that is compiled in but has no device to run on.
class DeviceUnavailable : public Error {
public:
    using Error::Error;
};

// A CUDA runtime call or kernel launch failed; the message names the call and the place.
class CudaError : public Error {
public:
    using Error::Error;
};

// Operands whose sizes do not match; the message gives both sizes.
class DimensionMismatch : public Error {
public:
    using Error::Error;
};

}  // namespace simrun::solvers

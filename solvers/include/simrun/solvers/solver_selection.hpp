#pragma once
// Chooses method and preconditioner from measured matrix properties, with a one-line reason.
// The user may name either part instead ("auto" lets the selector decide).
#include <string>

#include "simrun/solvers/matrix_properties.hpp"

namespace simrun::solvers {

enum class Method { cg };
enum class PreconditionerKind { none, jacobi };

struct SolverRequest {
    std::string method = "auto";          // auto | cg
    std::string preconditioner = "auto";  // auto | none | jacobi
};

struct SolverDecision {
    Method method = Method::cg;
    PreconditionerKind preconditioner = PreconditionerKind::jacobi;
    std::string reason;  // e.g. "cg + jacobi: symmetric, positive diagonal, ... => SPD"
};

std::string to_string(Method method);
std::string to_string(PreconditionerKind kind);

// Throws std::invalid_argument for an unknown name, and when the named or needed method cannot
// handle the matrix (e.g. a nonsymmetric matrix: CG would not apply, and no nonsymmetric
// method is built yet), with a message saying why.
SolverDecision select_solver(const MatrixProperties& properties, const SolverRequest& request);

}  // namespace simrun::solvers

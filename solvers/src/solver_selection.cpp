#include "simrun/solvers/solver_selection.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace simrun::solvers {

std::string to_string(Method method) {
    switch (method) {
        case Method::cg:
            return "cg";
    }
    return "unknown";
}

std::string to_string(PreconditionerKind kind) {
    return kind == PreconditionerKind::jacobi ? "jacobi" : "none";
}

namespace {

std::string describe(const MatrixProperties& p) {
    std::string text = p.symmetric ? "symmetric" : "nonsymmetric";
    text += p.positive_diagonal ? ", positive diagonal" : ", diagonal not positive";
    if (p.strictly_dominant) {
        text += ", strictly diagonally dominant";
    } else if (p.weakly_dominant) {
        text += ", weakly diagonally dominant";
    } else {
        text += ", not diagonally dominant";
    }
    if (p.weakly_dominant && std::isfinite(p.worst_dominance_ratio)) {
        char ratio[64];
        std::snprintf(ratio, sizeof ratio, " (worst row ratio %.3g)", p.worst_dominance_ratio);
        text += ratio;
    }
    return text;
}

}  // namespace

SolverDecision select_solver(const MatrixProperties& p, const SolverRequest& request) {
    if (request.method != "auto" && request.method != "cg") {
        throw std::invalid_argument("unknown solver method '" + request.method +
                                    "' (expected auto or cg)");
    }
    if (request.preconditioner != "auto" && request.preconditioner != "none" &&
        request.preconditioner != "jacobi") {
        throw std::invalid_argument("unknown preconditioner '" + request.preconditioner +
                                    "' (expected auto, none or jacobi)");
    }
    const bool spd = p.symmetric && p.positive_diagonal && p.weakly_dominant;
    if (!p.symmetric) {
        throw std::invalid_argument("the matrix is not symmetric (" + describe(p) +
                                    "): CG does not apply and no nonsymmetric method is built");
    }
    SolverDecision decision;
    decision.method = Method::cg;
    decision.preconditioner =
        request.preconditioner == "none" ? PreconditionerKind::none : PreconditionerKind::jacobi;
    const std::string named =
        request.method == "auto" && request.preconditioner == "auto" ? "" : " (named by the user)";
    decision.reason = to_string(decision.method) + " + " + to_string(decision.preconditioner) +
                      named + ": " + describe(p) +
                      (spd ? " => SPD" : " => symmetric; SPD not guaranteed, CG checks p'Ap > 0");
    return decision;
}

}  // namespace simrun::solvers

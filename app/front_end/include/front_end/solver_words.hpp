#pragma once
// The words that name a solve's method, preconditioner and format at every entry point of the
// front end (`simrun solve --solver/--precond/--format`, simrun.solve's method, preconditioner
// and format), from the solver layer's one list per enum (enum_names) and "auto", read as the
// input file reads them (SolverRequest::parse): "cg" is CG with no preconditioner unless one is
// named, as SciPy's cg; "pcg" CG with the one named or chosen.
#include <string>
#include <vector>

#include "simrun/solvers/selection/solver_selection.hpp"

namespace simrun::front_end {

// auto, jacobi, sor, cg, pcg, bicg, bicgstab, gmres.
std::vector<std::string> method_words();
// auto and the enum's words.
std::vector<std::string> preconditioner_words();
std::vector<std::string> format_words();

// The request the three words name. Throws std::invalid_argument for a word not known, and for
// pcg with the preconditioner none.
solvers::SolverRequest parse_solver_request(const std::string& method,
                                            const std::string& preconditioner,
                                            const std::string& format);

}  // namespace simrun::front_end

#include "front_end/solver_words.hpp"

#include "simrun/solvers/base/enum_names.hpp"
#include "simrun/solvers/matrices/format.hpp"

namespace simrun::front_end {

std::vector<std::string> method_words() { return solvers::method_words(); }

std::vector<std::string> preconditioner_words() {
    return solvers::enum_name_strings<solvers::PreconditionerKind>("auto");
}

std::vector<std::string> format_words() {
    return solvers::enum_name_strings<solvers::Format>("auto");
}

solvers::SolverRequest parse_solver_request(const std::string& method,
                                            const std::string& preconditioner,
                                            const std::string& format) {
    return solvers::SolverRequest::parse(method, preconditioner, format);
}

}  // namespace simrun::front_end

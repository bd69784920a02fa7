#include "solver_words.hpp"

#include <algorithm>
#include <stdexcept>

#include "simrun/solvers/base/enum_names.hpp"
#include "simrun/solvers/matrices/format.hpp"

namespace simrun::front_end {

std::vector<std::string> method_words() {
    std::vector<std::string> words = solvers::enum_name_strings<solvers::Method>("auto");
    words.insert(std::find(words.begin(), words.end(), "cg") + 1, "pcg");
    return words;
}

std::vector<std::string> preconditioner_words() {
    return solvers::enum_name_strings<solvers::PreconditionerKind>("auto");
}

std::vector<std::string> format_words() {
    return solvers::enum_name_strings<solvers::Format>("auto");
}

solvers::SolverRequest parse_solver_request(const std::string& method,
                                            const std::string& preconditioner,
                                            const std::string& format) {
    if (method == "pcg" && preconditioner == "none") {
        throw std::invalid_argument(
            "--solver pcg needs a preconditioner; use --solver cg for none");
    }
    solvers::SolverRequest request =
        solvers::SolverRequest::parse(method == "pcg" ? "cg" : method, preconditioner, format);
    if (method == "cg" && preconditioner == "auto") {
        request.preconditioner = solvers::PreconditionerKind::none;
    }
    return request;
}

}  // namespace simrun::front_end

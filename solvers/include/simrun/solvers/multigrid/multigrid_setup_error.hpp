#pragma once
// A multigrid hierarchy that cannot be built for an operator the solve itself may well handle:
// a coarse level whose diagonal is not positive, a coarsest matrix found singular. Not the
// input's fault (std::invalid_argument is kept for matrices that do not fit a grid, or whose
// own diagonal multigrid cannot take): a solver that chose multigrid itself uses another
// preconditioner and says why.
#include <stdexcept>
#include <string>

namespace simrun::solvers {

class MultigridSetupError : public std::runtime_error {
public:
    explicit MultigridSetupError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace simrun::solvers

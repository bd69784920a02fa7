#pragma once
// What a problem module gives the framework: the semi-discrete system u_t = L u + f on the
// grid's interior nodes, its initial condition, and (for verification) its exact solution.
// Boundary conditions, time integration, solving and output belong to the framework.
#include <memory>
#include <span>
#include <string>

#include "simrun/framework/expression.hpp"
#include "simrun/framework/grid.hpp"
#include "simrun/solvers/dia_data.hpp"

namespace simrun::framework {

class Problem {
public:
    virtual ~Problem() = default;

    // One line for logs, e.g. "heat: u_t = 0.1 lap(u) + f".
    virtual std::string description() const = 0;
    // The spatial operator L in DIA over all grid nodes; rows of boundary nodes are zero.
    // Assembled once: it does not depend on time.
    virtual solvers::DiaData<double> spatial_operator(const Grid& grid) const = 0;
    // u(x, 0) at every node.
    virtual void initial_condition(const Grid& grid, std::span<double> u) const = 0;
    // f(x, t) at every node (boundary nodes are ignored).
    virtual void source(const Grid& grid, double t, std::span<double> f) const = 0;
    virtual bool source_depends_on_time() const = 0;
    // The exact solution when the input gives one (for verification), else nullptr.
    virtual const Expression* exact_solution() const { return nullptr; }
};

}  // namespace simrun::framework

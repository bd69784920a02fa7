#pragma once
// What a problem module gives the framework: the stencil of its spatial operator L in
// u_t = L u + f (or -L u = f when steady), the source f, the initial condition, and (for
// verification) an exact solution. Boundary conditions, time integration, solving and output
// belong to the framework.
#include <span>
#include <string>
#include <vector>

#include "simrun/framework/discretisation/expression.hpp"
#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/framework/discretisation/stencil.hpp"

namespace simrun::framework {

class Problem {
public:
    virtual ~Problem() = default;

    // One line for logs, e.g. "heat: u_t = 0.1 lap(u) + f".
    virtual std::string description() const = 0;
    // Facts worth reporting (e.g. the cell Peclet number) and warnings, one line each.
    virtual std::vector<std::string> notes(const Grid&) const { return {}; }
    // "central" or "upwind": the spatial scheme (for verification reports).
    virtual std::string space_scheme() const { return "central"; }
    // Which time schemes make sense: Poisson is steady only, heat transient only.
    virtual bool allows_steady() const { return true; }
    virtual bool allows_transient() const { return true; }

    // The stencil of L at node (i, j, k), boundary nodes included (coefficients of neighbours
    // outside the grid are those of ghost nodes). Independent of time.
    virtual StencilCoefficients stencil(const Grid& grid, std::int64_t i, std::int64_t j,
                                        std::int64_t k) const = 0;
    // Checks the stencil's coefficients at the nodes of `box`: throws InputError naming the
    // key and the first node in the box's order where they are not valid. Called for the box a
    // run assembles (over ranks, each rank its own), and block by block by `simrun check`, so
    // that no process checks more of the grid than it holds. Nothing to check by default.
    virtual void check_stencil(const Grid&, const Box&) const {}
    // u(x, 0) at every node of `box` (transient problems); u[box.index(i, j, k)].
    virtual void initial_condition(const Grid& grid, const Box& box,
                                   std::span<double> u) const = 0;
    // f(x, t) at every node of `box`, likewise.
    virtual void source(const Grid& grid, const Box& box, double t,
                        std::span<double> f) const = 0;
    virtual bool source_depends_on_time() const = 0;
    // The source as the expression source() samples, where it is one: a back-end that forms
    // the step's data itself evaluates it (compiled for the device); nullptr where only
    // source() gives f.
    virtual const Expression* source_expression() const { return nullptr; }
    // The exact solution when the input gives one (for verification), else nullptr.
    virtual const Expression* exact_solution() const { return nullptr; }
};

}  // namespace simrun::framework

#include "simrun/framework/time/time_integrator.hpp"

#include <utility>

#include "grid_integrator.hpp"

namespace simrun::framework {

std::unique_ptr<TimeIntegrator> make_time_integrator(
    const Grid& grid, const Problem& problem, const BoundaryConditions& boundary,
    const TimeParameters& time, const SolverParameters& solver,
    std::shared_ptr<const solvers::Backend> backend, std::optional<Decomposition> parts) {
    const IntegratorSetup setup{grid,
                                problem,
                                boundary,
                                time,
                                solver,
                                std::move(backend),
                                parts.value_or(Decomposition::whole(grid))};
    switch (time.scheme) {
        case TimeScheme::steady:
            return make_steady_integrator(setup);
        case TimeScheme::explicit_euler:
            return make_explicit_euler_integrator(setup);
        case TimeScheme::backward_euler:
        case TimeScheme::crank_nicolson:
            break;
    }
    return make_theta_integrator(setup);
}

}  // namespace simrun::framework

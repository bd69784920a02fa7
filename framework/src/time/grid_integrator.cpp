#include "grid_integrator.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace simrun::framework {

StepData::StepData(const Grid& grid, const Problem& problem, const BoundaryConditions& boundary,
                   const SpatialOperator& op)
    : grid_(grid),
      problem_(problem),
      boundary_(boundary),
      op_(op),
      depends_on_time_(problem.source_depends_on_time() || boundary.depends_on_time()) {
    const auto n = static_cast<std::size_t>(grid.num_points());
    forcing_.resize(n);
    g_.resize(n);
    lg_.resize(n);
}

void StepData::evaluate(double t) {
    if (evaluated_at_ && (*evaluated_at_ == t || !depends_on_time_)) return;
    const auto& fixed = op_.dirichlet();
    problem_.source(grid_, t, forcing_);
    const auto n = static_cast<std::int64_t>(forcing_.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
        if (fixed[static_cast<std::size_t>(i)]) forcing_[static_cast<std::size_t>(i)] = 0.0;
    }
    op_.add_boundary_forcing(t, forcing_);
    std::fill(g_.begin(), g_.end(), 0.0);
    boundary_.fill_dirichlet(grid_, t, g_);
    op_.dirichlet_coupling(g_, lg_);
    evaluated_at_ = t;
}

GridIntegrator::GridIntegrator(const IntegratorSetup& setup)
    : grid_(setup.grid),
      boundary_(setup.boundary),
      backend_(setup.backend),
      op_(
          setup.grid,
          [&problem = setup.problem, &grid = setup.grid](std::int64_t i, std::int64_t j,
                                                         std::int64_t k) {
              return problem.stencil(grid, i, j, k);
          },
          setup.boundary),
      data_(setup.grid, setup.problem, setup.boundary, op_),
      dt_(setup.time.dt),
      u_(setup.backend, static_cast<std::size_t>(setup.grid.num_points())) {}

void GridIntegrator::set_state(std::span<const double> u, std::int64_t step) {
    std::vector<double> state(u.begin(), u.end());
    step_ = step;
    boundary_.fill_dirichlet(grid_, time(), state);
    u_.copy_from_host(state);
}

void GridIntegrator::copy_state(std::span<double> u) const { u_.copy_to_host(u); }

std::unique_ptr<solvers::LinearSystemSolver<double>> GridIntegrator::make_solver(
    solvers::DiaData<double> matrix, const SolverParameters& solver) {
    properties_ = solvers::analyze(matrix);
    const solvers::SolverPlan plan = solvers::plan_solver(properties_, solver.request);
    solvers::MethodParameters parameters;
    parameters.criteria = solver.criteria;
    return std::make_unique<solvers::LinearSystemSolver<double>>(backend_, std::move(matrix), plan,
                                                                 parameters);
}

solvers::Array<double> GridIntegrator::node_weights(double value_free, double value_fixed,
                                                    bool scaled) const {
    const auto& fixed = op_.dirichlet();
    std::vector<double> w(fixed.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
        w[i] = (fixed[i] ? value_fixed : value_free) * (scaled ? op_.row_scale()[i] : 1.0);
    }
    return solvers::Array<double>::from_host(backend_, w);
}

}  // namespace simrun::framework

#include "simrun/framework/time_integrator.hpp"

#include <algorithm>
#include <stdexcept>

#include "grid_integrator.hpp"
#include "simrun/solvers/conversions.hpp"

namespace simrun::framework {

StepData::StepData(const Grid& grid, const Problem& problem, const BoundaryConditions& boundary,
                   const SpatialOperator& op)
    : grid_(grid),
      problem_(problem),
      boundary_(boundary),
      op_(op),
      depends_on_time_(problem.source_depends_on_time() || boundary.depends_on_time()),
      l_host_(
          std::make_unique<solvers::DiaMatrix<double>>(solvers::make_cpu_backend(), op.matrix())) {
    const auto n = static_cast<std::size_t>(grid.num_points());
    forcing_.resize(n);
    g_ = solvers::Array<double>(l_host_->backend(), n);
    lg_ = solvers::Array<double>(l_host_->backend(), n);
}

void StepData::evaluate(double t) {
    if (evaluated_at_ && (*evaluated_at_ == t || !depends_on_time_)) return;
    const auto& fixed = op_.dirichlet();
    problem_.source(grid_, t, forcing_);
    for (std::size_t i = 0; i < forcing_.size(); ++i) {
        if (fixed[i]) forcing_[i] = 0.0;
    }
    op_.add_boundary_forcing(t, forcing_);
    const std::span<double> g(g_.data(), g_.size());
    std::fill(g.begin(), g.end(), 0.0);
    boundary_.fill_dirichlet(grid_, t, g);
    l_host_->apply(g_, lg_);  // L G on the CPU back-end
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
    const solvers::DiaData<double>& matrix, const SolverParameters& solver) {
    solvers::CsrData<double> csr = solvers::to_csr(matrix);
    properties_ = solvers::analyze(csr);
    const solvers::SolverPlan plan =
        solvers::plan_solver(properties_, {solver.method, solver.preconditioner, solver.format});
    solvers::MethodParameters parameters;
    parameters.criteria.relative_tolerance = solver.rtol;
    parameters.criteria.absolute_tolerance = solver.atol;
    parameters.criteria.max_iterations = solver.max_iterations;
    return std::make_unique<solvers::LinearSystemSolver<double>>(backend_, std::move(csr), plan,
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

std::unique_ptr<TimeIntegrator> make_time_integrator(
    const Grid& grid, const Problem& problem, const BoundaryConditions& boundary,
    const TimeParameters& time, const SolverParameters& solver,
    std::shared_ptr<const solvers::Backend> backend) {
    const IntegratorSetup setup{grid, problem, boundary, time, solver, std::move(backend)};
    if (time.scheme == "steady") return make_steady_integrator(setup);
    if (time.scheme == "explicit_euler") return make_explicit_euler_integrator(setup);
    return make_theta_integrator(setup);
}

}  // namespace simrun::framework

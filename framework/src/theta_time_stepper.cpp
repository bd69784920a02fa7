#include "simrun/framework/theta_time_stepper.hpp"

#include "simrun/solvers/conversions.hpp"
#include "simrun/solvers/vector_ops.hpp"

namespace simrun::framework {

ThetaTimeStepper::ThetaTimeStepper(const Grid& grid, const Problem& problem,
                                   const DirichletBoundary& boundary, const TimeParameters& time,
                                   const SolverParameters& solver,
                                   std::shared_ptr<const solvers::Backend> backend)
    : grid_(grid),
      problem_(problem),
      boundary_(boundary),
      dt_(time.dt),
      theta_(time.theta),
      data_depends_on_time_(problem.source_depends_on_time() || boundary.depends_on_time()),
      backend_(std::move(backend)),
      l_data_(problem.spatial_operator(grid)) {
    const auto n = static_cast<std::size_t>(grid.num_points());
    solvers::CsrData<double> m =
        solvers::to_csr(eliminate_dirichlet(grid, l_data_, 1.0, theta_ * dt_));
    properties_ = solvers::analyze(m);
    const solvers::SolverPlan plan =
        solvers::plan_solver(properties_, {solver.method, solver.preconditioner, solver.format});

    l_host_ = std::make_unique<solvers::DiaMatrix<double>>(solvers::make_cpu_backend(), l_data_);
    if (theta_ < 1.0) l_ = std::make_unique<solvers::DiaMatrix<double>>(backend_, l_data_);
    solvers::MethodParameters parameters;
    parameters.criteria.relative_tolerance = solver.rtol;
    parameters.criteria.absolute_tolerance = solver.atol;
    parameters.criteria.max_iterations = solver.max_iterations;
    solver_ = std::make_unique<solvers::LinearSystemSolver<double>>(backend_, std::move(m), plan,
                                                                    parameters);

    u_ = solvers::Array<double>(backend_, n);
    rhs_ = solvers::Array<double>(backend_, n);
    data_term_ = solvers::Array<double>(backend_, n);
    mask_ = solvers::Array<double>::from_host(backend_, interior_mask(grid));
    if (l_) lu_ = solvers::Array<double>(backend_, n);
    host_f_now_.resize(n);
    host_f_next_.resize(n);
    host_g_.resize(n);
    host_data_.resize(n);
}

void ThetaTimeStepper::set_state(std::span<const double> u, double t) {
    std::vector<double> state(u.begin(), u.end());
    boundary_.fill(grid_, t, state);
    u_.copy_from_host(state);
    start_time_ = t;
    steps_taken_ = 0;
    time_ = t;
    data_ready_ = false;
}

void ThetaTimeStepper::compute_data_term(double t_now, double t_next) {
    const std::size_t n = host_data_.size();
    problem_.source(grid_, t_next, host_f_next_);
    if (theta_ < 1.0) problem_.source(grid_, t_now, host_f_now_);
    // g^{n+1} on the boundary, zero inside, so that L g holds just the boundary couplings.
    std::fill(host_g_.begin(), host_g_.end(), 0.0);
    boundary_.fill(grid_, t_next, host_g_);
    solvers::Array<double> g(l_host_->backend(), n), lg(l_host_->backend(), n);
    g.copy_from_host(host_g_);
    l_host_->apply(g, lg);
    const std::vector<double> mask = interior_mask(grid_);
    const double* lg_values = lg.data();
    for (std::size_t i = 0; i < n; ++i) {
        const double f =
            theta_ * host_f_next_[i] + (theta_ < 1.0 ? (1.0 - theta_) * host_f_now_[i] : 0.0);
        host_data_[i] = mask[i] > 0.0 ? dt_ * (f + theta_ * lg_values[i]) : host_g_[i];
    }
    data_term_.copy_from_host(host_data_);
    data_ready_ = true;
}

solvers::SolveReport ThetaTimeStepper::advance() {
    const double t_next = start_time_ + static_cast<double>(steps_taken_ + 1) * dt_;
    if (data_depends_on_time_ || !data_ready_) compute_data_term(time_, t_next);
    // rhs = mask .* (u + (1 - theta) dt L u) + e
    backend_->copy(rhs_.data(), u_.data(), u_.size() * sizeof(double));
    if (l_) {
        l_->apply(u_, lu_);
        solvers::axpy((1.0 - theta_) * dt_, lu_, rhs_);
    }
    solvers::multiply(mask_, rhs_, rhs_);
    solvers::axpy(1.0, data_term_, rhs_);
    solvers::SolveReport result = solver_->solve(rhs_, u_);
    ++steps_taken_;
    time_ = t_next;
    return result;
}

void ThetaTimeStepper::copy_state(std::span<double> u) const { u_.copy_to_host(u); }

}  // namespace simrun::framework

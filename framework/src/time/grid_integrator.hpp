#pragma once
// What the integrators share: the spatial operator with its boundary folding, the step data,
// the state u on the back-end and the step index (t = step dt).
#include <memory>

#include "simrun/framework/time/time_integrator.hpp"

namespace simrun::framework {

struct IntegratorSetup {
    const Grid& grid;
    const Problem& problem;
    const BoundaryConditions& boundary;
    const TimeParameters& time;
    const SolverParameters& solver;
    std::shared_ptr<const solvers::Backend> backend;
};

class GridIntegrator : public TimeIntegrator {
public:
    explicit GridIntegrator(const IntegratorSetup& setup);
    void set_state(std::span<const double> u, std::int64_t step) override;
    void copy_state(std::span<double> u) const override;
    std::int64_t step() const override { return step_; }
    double time() const override { return static_cast<double>(step_) * dt_; }

protected:
    // A solver for `matrix` as the [solver] section asks, with the matrix's measured properties
    // (measured on DIA; the solver takes the matrix over, see LinearSystemSolver).
    std::unique_ptr<solvers::LinearSystemSolver<double>> make_solver(
        solvers::DiaData<double> matrix, const SolverParameters& solver);
    // A vector on the back-end: w_i = value_free at free nodes, value_fixed at Dirichlet nodes,
    // each times the row scale when `scaled`.
    solvers::Array<double> node_weights(double value_free, double value_fixed, bool scaled) const;

    const Grid& grid_;
    const BoundaryConditions& boundary_;
    std::shared_ptr<const solvers::Backend> backend_;
    SpatialOperator op_;
    StepData data_;
    double dt_;
    std::int64_t step_ = 0;
    solvers::Array<double> u_;
    solvers::MatrixProperties properties_;
};

std::unique_ptr<TimeIntegrator> make_theta_integrator(const IntegratorSetup& setup);
std::unique_ptr<TimeIntegrator> make_explicit_euler_integrator(const IntegratorSetup& setup);
std::unique_ptr<TimeIntegrator> make_steady_integrator(const IntegratorSetup& setup);

}  // namespace simrun::framework

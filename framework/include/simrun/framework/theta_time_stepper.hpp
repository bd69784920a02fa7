#pragma once
// The theta method for u_t = L u + f with Dirichlet boundaries (theta = 1 backward Euler,
// theta = 1/2 Crank-Nicolson):
//     (I - theta dt L) u^{n+1} = (I + (1 - theta) dt L) u^n + dt (theta f^{n+1} + (1 - theta) f^n)
// on interior nodes, u^{n+1} = g^{n+1} on boundary nodes. The matrix is assembled once in DIA
// on the back-end; each step updates only the right-hand side and warm-starts the solver from
// the previous solution.
#include <memory>
#include <span>
#include <vector>

#include "simrun/framework/dirichlet_boundary.hpp"
#include "simrun/framework/grid.hpp"
#include "simrun/framework/problem.hpp"
#include "simrun/framework/run_spec.hpp"
#include "simrun/solvers/array.hpp"
#include "simrun/solvers/dia_matrix.hpp"
#include "simrun/solvers/linear_system_solver.hpp"
#include "simrun/solvers/matrix_properties.hpp"

namespace simrun::framework {

class ThetaTimeStepper {
public:
    // The problem, boundary and grid must outlive the stepper. Throws std::invalid_argument
    // when the solver request cannot handle the assembled matrix.
    ThetaTimeStepper(const Grid& grid, const Problem& problem, const DirichletBoundary& boundary,
                     const TimeParameters& time, const SolverParameters& solver,
                     std::shared_ptr<const solvers::Backend> backend);

    // Sets u(t) (boundary nodes are overwritten with g(t)).
    void set_state(std::span<const double> u, double t);
    // Advances by one step; the report says how the linear solve went (with any fallbacks).
    solvers::SolveReport advance();
    void copy_state(std::span<double> u) const;
    double time() const { return time_; }

    const solvers::SolverPlan& plan() const { return solver_->plan(); }
    const solvers::MatrixProperties& matrix_properties() const { return properties_; }

private:
    // e = dt (theta f^{n+1} + (1 - theta) f^n + theta L g^{n+1}) inside, g^{n+1} on the boundary.
    void compute_data_term(double t_now, double t_next);

    const Grid& grid_;
    const Problem& problem_;
    const DirichletBoundary& boundary_;
    double dt_;
    double theta_;
    double start_time_ = 0.0;
    std::int64_t steps_taken_ = 0;
    double time_ = 0.0;  // start_time_ + steps_taken_ * dt_ (no drift from repeated addition)
    bool data_depends_on_time_;
    bool data_ready_ = false;
    std::shared_ptr<const solvers::Backend> backend_;

    solvers::DiaData<double> l_data_;
    std::unique_ptr<solvers::DiaMatrix<double>> l_host_;  // L on the CPU, for L g
    std::unique_ptr<solvers::DiaMatrix<double>> l_;       // L on the back-end (theta < 1)
    solvers::MatrixProperties properties_;
    // I - theta dt L with the boundary eliminated, in the planned format, and its solver.
    std::unique_ptr<solvers::LinearSystemSolver<double>> solver_;

    solvers::Array<double> u_, rhs_, data_term_, mask_, lu_;
    std::vector<double> host_f_now_, host_f_next_, host_g_, host_data_;
};

}  // namespace simrun::framework

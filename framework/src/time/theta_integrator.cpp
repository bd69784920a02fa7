// The theta method (theta = 1 backward Euler, theta = 1/2 Crank-Nicolson) on the free nodes,
//   S (I - theta dt L) u^{n+1} = S [u^n + (1 - theta) dt L u^n
//                                   + dt (theta F^{n+1} + (1 - theta) F^n + theta L G^{n+1})]
// and u^{n+1} = G^{n+1} at Dirichlet nodes (S the symmetrising row scale). The matrix is
// assembled once; each step updates the right-hand side and warm-starts from u^n.
#include "grid_integrator.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::framework {
namespace {

class ThetaIntegrator final : public GridIntegrator {
public:
    explicit ThetaIntegrator(const IntegratorSetup& setup)
        : GridIntegrator(setup), theta_(setup.time.theta) {
        const auto n = u_.size();
        if (theta_ < 1.0) {
            l_ = std::make_unique<solvers::DiaMatrix<double>>(backend_, op_.matrix());
            lu_ = solvers::Array<double>(backend_, n);
        }
        const SystemScaling system = system_scaling(setup.time);
        solver_ = make_solver(release_system_matrix(op_, system.shift, system.scale), setup.solver);
        rhs_ = solvers::Array<double>(backend_, n);
        data_term_ = solvers::Array<double>(backend_, n);
        weights_ = node_weights(1.0, 0.0, true);
        host_data_.resize(n);
    }

    std::optional<solvers::SolveReport> advance() override {
        const double t_now = time();
        const double t_next = static_cast<double>(step_ + 1) * dt_;
        forming_data([&] { update_data_term(t_now, t_next); });
        // rhs = S .* (u + (1 - theta) dt L u) at free nodes, then + e
        solvers::copy(u_, rhs_);
        if (l_) {
            l_->apply(u_, lu_);
            solvers::axpy((1.0 - theta_) * dt_, lu_, rhs_);
        }
        solvers::multiply(weights_, rhs_, rhs_);
        solvers::axpy(1.0, data_term_, rhs_);
        solvers::SolveReport report = solver_->solve(rhs_, u_);
        ++step_;
        return report;
    }

    const solvers::SolverPlan* plan() const override { return &solver_->plan(); }
    std::string preconditioner_details() const override {
        return solver_->preconditioner_details();
    }
    const solvers::MatrixProperties* matrix_properties() const override { return &properties_; }

private:
    // e = S dt (theta (F + L G)^{n+1} + (1 - theta) F^n) at free nodes, G^{n+1} at Dirichlet.
    void update_data_term(double t_now, double t_next) {
        if (uploaded_ && !data_.depends_on_time()) return;
        const auto& fixed = op_.dirichlet();
        const auto& scale = op_.row_scale();
        if (theta_ < 1.0) {  // host_data_ holds (1 - theta) F^n until the second pass
            data_.evaluate(t_now);
            const auto& f_now = data_.forcing();
            for (std::size_t i = 0; i < host_data_.size(); ++i) {
                host_data_[i] = (1.0 - theta_) * f_now[i];
            }
        }
        data_.evaluate(t_next);
        const auto& f = data_.forcing();
        const auto g = data_.dirichlet_values();
        const auto lg = data_.dirichlet_coupling();
        for (std::size_t i = 0; i < host_data_.size(); ++i) {
            double value = theta_ * (f[i] + lg[i]);
            if (theta_ < 1.0) value += host_data_[i];
            host_data_[i] = fixed[i] ? g[i] : scale[i] * dt_ * value;
        }
        data_term_.copy_from_host(host_data_);
        uploaded_ = true;
    }

    double theta_;
    bool uploaded_ = false;
    std::unique_ptr<solvers::LinearSystemSolver<double>> solver_;
    std::unique_ptr<solvers::DiaMatrix<double>> l_;  // L on the back-end (theta < 1)
    solvers::Array<double> rhs_, data_term_, weights_, lu_;
    std::vector<double> host_data_;
};

}  // namespace

std::unique_ptr<TimeIntegrator> make_theta_integrator(const IntegratorSetup& setup) {
    return std::make_unique<ThetaIntegrator>(setup);
}

}  // namespace simrun::framework

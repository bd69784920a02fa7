// The theta method (theta = 1 backward Euler, theta = 1/2 Crank-Nicolson) on the free nodes,
//   S (I - theta dt L) u^{n+1} = S [u^n + (1 - theta) dt L u^n
//                                   + dt (theta F^{n+1} + (1 - theta) F^n + theta L G^{n+1})]
// and u^{n+1} = G^{n+1} at Dirichlet nodes (S the symmetrising row scale). The matrix is
// assembled once; each step updates the right-hand side and warm-starts from u^n.
#include "device_data_term.hpp"
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
            l_ = owned_operator(op_.matrix());
            lu_ = solvers::Array<double>(backend_, n);
        }
        const SystemScaling system = system_scaling(setup.time);
        solver_ = make_solver(release_system_matrix(op_, system.shift, system.scale), setup.solver);
        rhs_ = solvers::Array<double>(backend_, n);
        device_data_ = parts_.distributed()
                           ? nullptr
                           : DeviceDataTerm::make(grid_, setup.problem, boundary_, op_, backend_,
                                                  theta_, dt_, true, data_details_, setup_times_);
        if (parts_.distributed()) data_details_ = distributed_data_details;
        if (!device_data_) {
            data_term_ = solvers::Array<double>(backend_, n);
            weights_ = node_weights(1.0, 0.0, true);
            host_data_.resize(n);
        }
    }

    std::optional<solvers::SolveReport> advance() override {
        const double t_now = time();
        const double t_next = static_cast<double>(step_ + 1) * dt_;
        if (device_data_) {
            // One wait, for the data term's time and its finiteness record, before the solve.
            forming_data([&] {
                if (l_) l_->apply(u_, lu_);
                device_data_->form(t_now, t_next, &u_, l_ ? &lu_ : nullptr, rhs_);
                backend_->synchronize();
                device_data_->check(t_now, t_next);
            });
        } else {
            // A value that is not finite at a node of one rank's box stops every rank alike.
            forming_data([&] { agreeing_on_step_data([&] { update_data_term(t_now, t_next); }); });
            // rhs = S .* (u + (1 - theta) dt L u) at free nodes, then + e
            solvers::copy(u_, rhs_);
            if (l_) {
                l_->apply(u_, lu_);
                solvers::axpy((1.0 - theta_) * dt_, lu_, rhs_);
            }
            solvers::multiply(weights_, rhs_, rhs_);
            solvers::axpy(1.0, data_term_, rhs_);
        }
        solvers::SolveReport report = solver_->solve(rhs_, u_);
        ++step_;
        return report;
    }

    const solvers::SolverPlan* plan() const override { return &solver_->plan(); }
    std::string preconditioner_details() const override {
        return solver_->preconditioner_details();
    }
    const solvers::MatrixProperties* matrix_properties() const override { return &properties_; }
    std::string data_details() const override { return data_details_; }
    bool data_on_device() const override { return device_data_ != nullptr; }
    void check_data_on_device(double t_now, double t_next) override {
        device_data_->check_step(t_now, t_next, &u_, rhs_);
    }

private:
    // e = S dt (theta (F + L G)^{n+1} + (1 - theta) F^n) at free nodes, G^{n+1} at Dirichlet.
    // Crank-Nicolson's F^n is the previous step's F^{n+1}, kept as (1 - theta) F^n.
    void update_data_term(double t_now, double t_next) {
        if (uploaded_ && !data_.depends_on_time()) return;
        const auto fixed = owned(op_.dirichlet());
        const auto scale = owned(op_.row_scale());
        if (theta_ < 1.0 && kept_at_ != t_now) {
            data_.evaluate(t_now);
            keep_forcing(t_now);
        }
        data_.evaluate(t_next);
        const auto f = owned(data_.forcing());
        const auto g = owned(data_.dirichlet_values());
        const auto lg = owned(data_.dirichlet_coupling());
        for (std::size_t i = 0; i < host_data_.size(); ++i) {
            double value = theta_ * (f[i] + lg[i]);
            if (theta_ < 1.0) value += kept_forcing_[i];
            host_data_[i] = fixed[i] ? g[i] : scale[i] * dt_ * value;
        }
        if (theta_ < 1.0) keep_forcing(t_next);
        data_term_.copy_from_host(host_data_);
        uploaded_ = true;
    }
    // kept_forcing_ = (1 - theta) F at t, F the data just evaluated.
    void keep_forcing(double t) {
        const auto f = owned(data_.forcing());
        kept_forcing_.resize(f.size());
        for (std::size_t i = 0; i < f.size(); ++i) kept_forcing_[i] = (1.0 - theta_) * f[i];
        kept_at_ = t;
    }

    double theta_;
    bool uploaded_ = false;
    std::unique_ptr<solvers::LinearSystemSolver<double>> solver_;
    std::unique_ptr<solvers::LinearOperator<double>> l_;  // L on the back-end (theta < 1)
    solvers::Array<double> rhs_, data_term_, weights_, lu_;
    std::vector<double> host_data_;
    std::vector<double> kept_forcing_;  // (1 - theta) F at kept_at_ (Crank-Nicolson)
    std::optional<double> kept_at_;
    std::unique_ptr<DeviceDataTerm> device_data_;  // where the back-end forms the data
    std::string data_details_;
};

}  // namespace

std::unique_ptr<TimeIntegrator> make_theta_integrator(const IntegratorSetup& setup) {
    return std::make_unique<ThetaIntegrator>(setup);
}

}  // namespace simrun::framework

// The steady problem -L u = f: S (-L) u = S (F + B + L G) on the free nodes, u = G at Dirichlet
// nodes, solved once from the initial guess.
#include <string>

#include "device_data_term.hpp"
#include "grid_integrator.hpp"

namespace simrun::framework {
namespace {

class SteadyIntegrator final : public GridIntegrator {
public:
    explicit SteadyIntegrator(const IntegratorSetup& setup) : GridIntegrator(setup) {
        const SystemScaling system = system_scaling(setup.time);
        solver_ = make_solver(release_system_matrix(op_, system.shift, system.scale), setup.solver);
        // The theta term at theta = 1, dt = 1 without the state: S (F + B + L G), G at
        // Dirichlet nodes.
        device_data_ = parts_.distributed()
                           ? nullptr
                           : DeviceDataTerm::make(grid_, setup.problem, boundary_, op_, backend_,
                                                  1.0, 1.0, true, data_details_, setup_times_);
        if (parts_.distributed()) data_details_ = distributed_data_details;
        on_device_ = device_data_ != nullptr;
        // Formed once, not each step.
        if (const auto at = data_details_.find(" each step");
            on_device_ && at != std::string::npos) {
            data_details_.replace(at, std::string(" each step").size(), " once");
        }
        if (on_device_) rhs_ = solvers::Array<double>(backend_, u_.size());
    }

    std::optional<solvers::SolveReport> advance() override {
        if (on_device_) {
            // Formed and checked where the state was set (its data are those of t = 0 alone).
            if (device_data_) forming_data([&] { check_data_on_device(0.0, 0.0); });
            return solver_->solve(rhs_, u_);
        }
        solvers::Array<double> b;
        // A value that is not finite at a node of one rank's box stops every rank alike.
        forming_data([&] { agreeing(ranks(), [&] { data_.evaluate(0.0); }); });
        forming_data([&] {
            const auto fixed = owned(op_.dirichlet());
            const auto scale = owned(op_.row_scale());
            const auto f = owned(data_.forcing());
            const auto g = owned(data_.dirichlet_values());
            const auto lg = owned(data_.dirichlet_coupling());
            std::vector<double> rhs(f.size());
            const auto n = static_cast<std::int64_t>(rhs.size());
#pragma omp parallel for schedule(static)
            for (std::int64_t i = 0; i < n; ++i) {
                const auto r = static_cast<std::size_t>(i);
                rhs[r] = fixed[r] ? g[r] : scale[r] * (f[r] + lg[r]);
            }
            b = solvers::Array<double>::from_host(backend_, rhs);
        });
        return solver_->solve(b, u_);
    }

    const solvers::SolverPlan* plan() const override { return &solver_->plan(); }
    std::string preconditioner_details() const override {
        return solver_->preconditioner_details();
    }
    const solvers::MatrixProperties* matrix_properties() const override { return &properties_; }
    std::string data_details() const override { return data_details_; }
    bool data_on_device() const override { return on_device_; }
    // The right-hand side itself, formed into rhs_ (read by no state) and kept for the solve; the
    // data term's arrays (9 bytes a node and its node lists) are then released.
    void check_data_on_device(double t_now, double t_next) override {
        if (!device_data_) return;  // formed already
        device_data_->check_step(t_now, t_next, nullptr, rhs_);
        device_data_.reset();
    }

private:
    std::unique_ptr<solvers::LinearSystemSolver<double>> solver_;
    std::unique_ptr<DeviceDataTerm> device_data_;  // where the back-end forms the data
    solvers::Array<double> rhs_;
    bool on_device_ = false;  // the right-hand side formed by the device's data term
    std::string data_details_;
};

}  // namespace

std::unique_ptr<TimeIntegrator> make_steady_integrator(const IntegratorSetup& setup) {
    return std::make_unique<SteadyIntegrator>(setup);
}

}  // namespace simrun::framework

// Explicit Euler on the free nodes, u^{n+1} = u^n + dt (L u^n + F^n) (L u^n holds the coupling
// to the Dirichlet values, which u^n carries), and
// u^{n+1} = G^{n+1} at Dirichlet nodes. No linear solve; the step must satisfy the stability
// limit, which is checked when the integrator is built.
#include <chrono>
#include <cmath>
#include <cstdio>

#include "device_data_term.hpp"
#include "grid_integrator.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/solvers/base/vector_ops.hpp"

namespace simrun::framework {
namespace {

class ExplicitEulerIntegrator final : public GridIntegrator {
public:
    explicit ExplicitEulerIntegrator(const IntegratorSetup& setup) : GridIntegrator(setup) {
        // The limit is a minimum over rows: over the ranks, the minimum of theirs.
        require_stable_explicit_step(setup.time, ranks().min(op_.largest_stable_explicit_step()));
        l_ = owned_operator(op_.release_matrix());
        // No solver to make: the assembly is the operator assembled and uploaded.
        setup_times_.assembly =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - constructed_).count();
        lu_ = solvers::Array<double>(backend_, u_.size());
        // theta = 0 without the row scale: the device's right-hand side is u^{n+1} itself.
        device_data_ = parts_.distributed()
                           ? nullptr
                           : DeviceDataTerm::make(grid_, setup.problem, boundary_, op_, backend_,
                                                  0.0, dt_, false, data_details_, setup_times_);
        if (parts_.distributed()) data_details_ = distributed_data_details;
        if (device_data_) {
            next_ = solvers::Array<double>(backend_, u_.size());
        } else {
            data_term_ = solvers::Array<double>(backend_, u_.size());
            free_ = node_weights(1.0, 0.0, false);
            host_data_.resize(u_.size());
        }
    }

    std::optional<solvers::SolveReport> advance() override {
        if (device_data_) {
            const double t_now = time(), t_next = static_cast<double>(step_ + 1) * dt_;
            forming_data([&] {
                l_->apply(u_, lu_);
                device_data_->form(t_now, t_next, &u_, &lu_, next_);
                backend_->synchronize();
                device_data_->check(t_now, t_next);
            });
            std::swap(u_, next_);
        } else {
            step_on_host();
        }
        ++step_;
        // The guard on the field each step makes (one pass: ||u||, read back with the step):
        // a NaN or Inf, or growth past ~1e154, stops the run before the step is written.
        const double norm = solvers::norm2(u_);
        if (!std::isfinite(norm)) {
            char text[256];
            std::snprintf(text, sizeof text,
                          "step %lld (t = %.6g): the field is no longer finite (||u|| = %g); "
                          "outputs up to the previous written step are complete",
                          static_cast<long long>(step_), time(), norm);
            throw FieldNotFinite(text);
        }
        return std::nullopt;
    }

    const solvers::SolverPlan* plan() const override { return nullptr; }
    std::string data_details() const override { return data_details_; }
    bool data_on_device() const override { return device_data_ != nullptr; }
    void check_data_on_device(double t_now, double t_next) override {
        device_data_->check_step(t_now, t_next, &u_, next_);
    }

private:
    void step_on_host() {
        // A value that is not finite at a node of one rank's box stops every rank alike.
        forming_data([&] {
            agreeing_on_step_data([&] {
                const auto fixed = owned(op_.dirichlet());
                // e = dt F^n at free nodes, G^{n+1} at Dirichlet nodes
                data_.evaluate(time());
                const auto f = owned(data_.forcing());
                for (std::size_t i = 0; i < host_data_.size(); ++i) host_data_[i] = dt_ * f[i];
                data_.evaluate(static_cast<double>(step_ + 1) * dt_);
                const auto g = owned(data_.dirichlet_values());
                for (std::size_t i = 0; i < host_data_.size(); ++i) {
                    if (fixed[i]) host_data_[i] = g[i];
                }
                data_term_.copy_from_host(host_data_);
            });
        });
        // u = free .* (u + dt L u) + e
        l_->apply(u_, lu_);
        solvers::axpy(dt_, lu_, u_);
        solvers::multiply(free_, u_, u_);
        solvers::axpy(1.0, data_term_, u_);
    }

    std::unique_ptr<solvers::LinearOperator<double>> l_;
    solvers::Array<double> lu_, data_term_, free_, next_;
    std::vector<double> host_data_;
    std::unique_ptr<DeviceDataTerm> device_data_;  // where the back-end forms the step
    std::string data_details_;
};

}  // namespace

std::unique_ptr<TimeIntegrator> make_explicit_euler_integrator(const IntegratorSetup& setup) {
    return std::make_unique<ExplicitEulerIntegrator>(setup);
}

}  // namespace simrun::framework

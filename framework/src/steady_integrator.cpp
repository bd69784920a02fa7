// The steady problem -L u = f: S (-L) u = S (F + L G) on the free nodes, u = G at Dirichlet
// nodes, solved once from the initial guess.
#include "grid_integrator.hpp"

namespace simrun::framework {
namespace {

class SteadyIntegrator final : public GridIntegrator {
public:
    explicit SteadyIntegrator(const IntegratorSetup& setup) : GridIntegrator(setup) {
        solver_ = make_solver(system_matrix(op_, 0.0, 1.0), setup.solver);
    }

    std::optional<solvers::SolveReport> advance() override {
        data_.evaluate(0.0);
        const auto& fixed = op_.dirichlet();
        const auto& scale = op_.row_scale();
        const auto& f = data_.forcing();
        const auto g = data_.dirichlet_values();
        const auto lg = data_.dirichlet_coupling();
        std::vector<double> rhs(f.size());
        for (std::size_t i = 0; i < rhs.size(); ++i) {
            rhs[i] = fixed[i] ? g[i] : scale[i] * (f[i] + lg[i]);
        }
        const auto b = solvers::Array<double>::from_host(backend_, rhs);
        return solver_->solve(b, u_);
    }

    const solvers::SolverPlan* plan() const override { return &solver_->plan(); }
    const solvers::MatrixProperties* matrix_properties() const override { return &properties_; }

private:
    std::unique_ptr<solvers::LinearSystemSolver<double>> solver_;
};

}  // namespace

std::unique_ptr<TimeIntegrator> make_steady_integrator(const IntegratorSetup& setup) {
    return std::make_unique<SteadyIntegrator>(setup);
}

}  // namespace simrun::framework

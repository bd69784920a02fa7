// The steady problem -L u = f: S (-L) u = S (F + L G) on the free nodes, u = G at Dirichlet
// nodes, solved once from the initial guess.
#include "grid_integrator.hpp"

namespace simrun::framework {
namespace {

class SteadyIntegrator final : public GridIntegrator {
public:
    explicit SteadyIntegrator(const IntegratorSetup& setup) : GridIntegrator(setup) {
        const SystemScaling system = system_scaling(setup.time);
        solver_ = make_solver(release_system_matrix(op_, system.shift, system.scale), setup.solver);
    }

    std::optional<solvers::SolveReport> advance() override {
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

private:
    std::unique_ptr<solvers::LinearSystemSolver<double>> solver_;
};

}  // namespace

std::unique_ptr<TimeIntegrator> make_steady_integrator(const IntegratorSetup& setup) {
    return std::make_unique<SteadyIntegrator>(setup);
}

}  // namespace simrun::framework

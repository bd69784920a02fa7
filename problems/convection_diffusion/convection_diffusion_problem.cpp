// convection_diffusion: u_t + v . grad(u) = eps lap(u) + f, steady or transient, with central
// or first-order upwind convection (nonsymmetric matrix: BiCGStab's case). Reports the cell
// Peclet number |v_a| h_a / (2 eps) and warns when central convection loses diagonal
// dominance (Peclet > 1). Registered as problem type "convection_diffusion".
//
// [problem] keys: type = "convection_diffusion", epsilon (> 0), velocity = [vx, vy(, vz)],
// convection = "central" | "upwind" (default central), source (default "0"), initial
// (default "0", transient runs), exact (optional).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "problems/problem_support.hpp"
#include "simrun/framework/discretisation/grid_sampling.hpp"
#include "simrun/framework/discretisation/stencil.hpp"
#include "simrun/framework/problem/problem_registry.hpp"

namespace simrun::problems {
namespace {

using framework::ConfigSection;
using framework::Expression;
using framework::Grid;

class ConvectionDiffusionProblem final : public framework::Problem {
public:
    ConvectionDiffusionProblem(const ConfigSection& section, const Grid& grid)
        : epsilon_(section.require<double>("epsilon")),
          upwind_(false),
          source_(read_expression(section, "source", "0")),
          initial_(read_expression(section, "initial", "0")),
          exact_(read_exact(section)) {
        if (!(epsilon_ > 0.0) || !std::isfinite(epsilon_)) {
            section.fail("epsilon", "the diffusion coefficient must be positive");
        }
        const auto velocity = section.require<std::vector<double>>("velocity");
        if (static_cast<int>(velocity.size()) != grid.dimension()) {
            section.fail("velocity", "needs " + std::to_string(grid.dimension()) +
                                         " components on this grid, got " +
                                         std::to_string(velocity.size()));
        }
        for (std::size_t a = 0; a < velocity.size(); ++a) {
            if (!std::isfinite(velocity[a])) section.fail("velocity", "components must be finite");
            velocity_[a] = velocity[a];
        }
        const std::string convection = section.get<std::string>("convection", "central");
        if (convection != "central" && convection != "upwind") {
            section.fail("convection", "'" + convection + "' is not one of: central, upwind");
        }
        upwind_ = convection == "upwind";
    }

    std::string description() const override {
        std::ostringstream text;
        text << "convection_diffusion: u_t + (" << velocity_[0] << ", " << velocity_[1];
        if (velocity_[2] != 0.0) text << ", " << velocity_[2];
        text << ") . grad(u) = " << epsilon_ << " lap(u) + (" << source_.text() << "), "
             << space_scheme() << " convection";
        return text.str();
    }

    std::vector<std::string> notes(const Grid& grid) const override {
        double peclet = 0.0;
        for (int a = 0; a < grid.dimension(); ++a) {
            peclet = std::max(peclet, std::abs(velocity_[a]) * grid.spacing(a) / (2.0 * epsilon_));
        }
        char text[320];
        std::snprintf(text, sizeof text, "cell Peclet number %.3g (max over axes of |v| h / 2 eps)",
                      peclet);
        std::vector<std::string> lines{text};
        if (!upwind_ && peclet > 1.0) {
            std::snprintf(text, sizeof text,
                          "warning: central convection at cell Peclet number %.3g > 1 loses "
                          "diagonal dominance; the solution may oscillate (refine the grid or "
                          "use convection = \"upwind\")",
                          peclet);
            lines.emplace_back(text);
        }
        return lines;
    }

    std::string space_scheme() const override { return upwind_ ? "upwind" : "central"; }

    // eps lap(u) - v . grad(u): central (u_+ - u_-) / 2h, or upwind one-sided differences.
    framework::StencilCoefficients stencil(const Grid& grid, std::int64_t, std::int64_t,
                                           std::int64_t) const override {
        const auto spacing = grid.spacing();
        auto s = framework::diffusion_stencil(epsilon_, spacing.data(), grid.dimension());
        for (int a = 0; a < grid.dimension(); ++a) {
            const double v = velocity_[a], h = spacing[static_cast<std::size_t>(a)];
            if (!upwind_) {
                s.minus[a] += v / (2.0 * h);
                s.plus[a] -= v / (2.0 * h);
            } else if (v > 0.0) {
                s.minus[a] += v / h;
                s.centre -= v / h;
            } else {
                s.plus[a] -= v / h;
                s.centre += v / h;
            }
        }
        return s;
    }

    void initial_condition(const Grid& grid, const framework::Box& box,
                           std::span<double> u) const override {
        framework::sample(grid, box, initial_, 0.0, u);
    }
    void source(const Grid& grid, const framework::Box& box, double t,
                std::span<double> f) const override {
        framework::sample(grid, box, source_, t, f);
    }
    bool source_depends_on_time() const override { return source_.depends_on_time(); }
    const Expression* source_expression() const override { return &source_; }
    const Expression* exact_solution() const override { return exact_ ? &*exact_ : nullptr; }

private:
    double epsilon_;
    double velocity_[3] = {0.0, 0.0, 0.0};
    bool upwind_;
    Expression source_;
    Expression initial_;
    std::optional<Expression> exact_;
};

std::unique_ptr<framework::Problem> make_convection_diffusion(const ConfigSection& section,
                                                              const Grid& grid) {
    return std::make_unique<ConvectionDiffusionProblem>(section, grid);
}

SIMRUN_REGISTER_PROBLEM("convection_diffusion", make_convection_diffusion);

}  // namespace
}  // namespace simrun::problems

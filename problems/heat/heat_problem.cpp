// heat: u_t = alpha lap(u) + f(x, y, z, t), the initial condition and source as expressions.
// Registers itself with the framework as problem type "heat".
//
// [problem] keys: type = "heat", alpha (> 0), initial (expression), source (expression,
// default "0"), exact (optional expression: the exact solution, used by verification).
#include <cmath>
#include <optional>
#include <sstream>

#include "simrun/framework/grid_sampling.hpp"
#include "simrun/framework/problem_registry.hpp"
#include "simrun/framework/stencil.hpp"
#include "simrun/framework/stencil_assembly.hpp"

namespace simrun::problems {
namespace {

using framework::ConfigSection;
using framework::Expression;
using framework::Grid;

Expression read_expression(const ConfigSection& section, const char* key,
                           std::optional<std::string> default_text) {
    const std::string text = default_text ? section.get<std::string>(key, *default_text)
                                          : section.require<std::string>(key);
    return Expression(text, section.full_key(key), section.place(key));
}

class HeatProblem final : public framework::Problem {
public:
    explicit HeatProblem(const ConfigSection& section)
        : alpha_(section.require<double>("alpha")),
          initial_(read_expression(section, "initial", std::nullopt)),
          source_(read_expression(section, "source", "0")) {
        if (!(alpha_ > 0.0) || !std::isfinite(alpha_)) {
            section.fail("alpha", "the diffusivity must be positive");
        }
        if (section.has("exact")) exact_.emplace(read_expression(section, "exact", std::nullopt));
    }

    std::string description() const override {
        std::ostringstream text;
        text << "heat: u_t = " << alpha_ << " lap(u) + (" << source_.text() << ")";
        return text.str();
    }

    solvers::DiaData<double> spatial_operator(const Grid& grid) const override {
        const auto spacing = grid.spacing();
        const auto stencil = framework::diffusion_stencil(alpha_, spacing.data(), grid.dimension());
        return framework::assemble_stencil_operator(
            grid, [&](std::int64_t, std::int64_t, std::int64_t) { return stencil; });
    }

    void initial_condition(const Grid& grid, std::span<double> u) const override {
        framework::sample(grid, initial_, 0.0, u);
    }

    void source(const Grid& grid, double t, std::span<double> f) const override {
        framework::sample(grid, source_, t, f);
    }

    bool source_depends_on_time() const override { return source_.depends_on_time(); }

    const Expression* exact_solution() const override { return exact_ ? &*exact_ : nullptr; }

private:
    double alpha_;
    Expression initial_;
    Expression source_;
    std::optional<Expression> exact_;
};

std::unique_ptr<framework::Problem> make_heat(const ConfigSection& section, const Grid&) {
    return std::make_unique<HeatProblem>(section);
}

SIMRUN_REGISTER_PROBLEM("heat", make_heat);

}  // namespace
}  // namespace simrun::problems

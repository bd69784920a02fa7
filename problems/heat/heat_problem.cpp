// heat: u_t = alpha lap(u) + f(x, y, z, t), registered as problem type "heat".
//
// [problem] keys: type = "heat", alpha (> 0), initial (expression) or initial_image (a grayscale
// PNG, relative to the input file, mapped onto the x-y extent; black and white become
// initial_range = [low, high], default [0, 1]), source (expression, default "0"), exact
// (optional exact solution, for verification).
#include <cmath>
#include <optional>
#include <sstream>

#include "problems/problem_support.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/discretisation/grid_sampling.hpp"
#include "simrun/framework/discretisation/image_field.hpp"
#include "simrun/framework/discretisation/stencil.hpp"
#include "simrun/framework/problem/problem_registry.hpp"

namespace simrun::problems {
namespace {

using framework::ConfigSection;
using framework::Expression;
using framework::Grid;

class HeatProblem final : public framework::Problem {
public:
    HeatProblem(const ConfigSection& section, const Grid& grid)
        : alpha_(section.require<double>("alpha")),
          source_(read_expression(section, "source", "0")),
          exact_(read_exact(section)) {
        if (!(alpha_ > 0.0) || !std::isfinite(alpha_)) {
            section.fail("alpha", "the diffusivity must be positive");
        }
        // The stencil's centre, -2 alpha sum 1/h^2, the largest coefficient: a double or no
        // operator at all.
        if (!std::isfinite(stencil(grid, 0, 0, 0).centre)) {
            std::ostringstream text;
            text << "alpha = " << alpha_
                 << " over h^2 overflows a double on this grid (h = " << grid.spacing(0)
                 << "): the operator would be infinite";
            section.fail("alpha", text.str());
        }
        const bool from_image = section.has("initial_image");
        if (from_image == section.has("initial")) {
            section.fail(from_image ? "initial" : "initial",
                         "give the initial condition either as `initial` (an expression) or as "
                         "`initial_image` (a grayscale PNG), not both or neither");
        }
        if (!from_image) {
            initial_.emplace(read_expression(section, "initial"));
            return;
        }
        const auto path = section.base_directory() / section.path("initial_image");
        try {
            image_.emplace(framework::GrayImage::load(path));
        } catch (const framework::InputError& error) {
            section.fail("initial_image", error.what());
        }
        range_ = section.get<std::array<double, 2>>("initial_range", {0.0, 1.0});
        if (!std::isfinite(range_[0]) || !std::isfinite(range_[1])) {
            section.fail("initial_range", "must be two finite numbers [low, high]");
        }
    }

    std::string description() const override {
        std::ostringstream text;
        text << "heat: u_t = " << alpha_ << " lap(u) + (" << source_.text() << ")";
        return text.str();
    }

    bool allows_steady() const override { return false; }

    framework::StencilCoefficients stencil(const Grid& grid, std::int64_t, std::int64_t,
                                           std::int64_t) const override {
        const auto spacing = grid.spacing();
        return framework::diffusion_stencil(alpha_, spacing.data(), grid.dimension());
    }

    void initial_condition(const Grid& grid, const framework::Box& box,
                           std::span<double> u) const override {
        if (image_) {
            framework::sample_image(grid, box, *image_, range_[0], range_[1], u);
        } else {
            framework::sample(grid, box, *initial_, 0.0, u);
        }
    }

    void source(const Grid& grid, const framework::Box& box, double t,
                std::span<double> f) const override {
        framework::sample(grid, box, source_, t, f);
    }

    bool source_depends_on_time() const override { return source_.depends_on_time(); }

    const Expression* source_expression() const override { return &source_; }
    const Expression* exact_solution() const override { return exact_ ? &*exact_ : nullptr; }

private:
    double alpha_;
    std::optional<Expression> initial_;
    std::optional<framework::GrayImage> image_;  // the initial condition as a picture
    std::array<double, 2> range_{0.0, 1.0};      // values of black and white
    Expression source_;
    std::optional<Expression> exact_;
};

std::unique_ptr<framework::Problem> make_heat(const ConfigSection& section, const Grid& grid) {
    return std::make_unique<HeatProblem>(section, grid);
}

SIMRUN_REGISTER_PROBLEM("heat", make_heat);

}  // namespace
}  // namespace simrun::problems

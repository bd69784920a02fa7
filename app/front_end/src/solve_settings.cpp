#include "front_end/solve_settings.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/solvers/boxes/box.hpp"

namespace simrun::front_end {
namespace {

using framework::InputError;

// A setting by its [solver] key (or "grid"), in the caller's words.
std::string setting_name(std::string_view key, SettingNames names) {
    if (names == SettingNames::keywords) return std::string(key);
    if (key == "max_iterations") return "--max-iters";
    if (key == "restart") return "--restart-length";
    return "--" + std::string(key);
}

}  // namespace

void SolveSettings::set_rtol(double rtol) {
    solver.method.criteria.relative_tolerance = rtol;
    rtol_given = true;
}

void SolveSettings::set_max_iterations(std::int64_t limit) {
    solver.method.criteria.max_iterations = limit;
    max_iterations_given = true;
}

solvers::StoppingCriteria criteria_for(const SolveSettings& settings, std::int64_t rows) {
    solvers::StoppingCriteria c = settings.solver.method.criteria;
    if (!settings.rtol_given) {
        c.relative_tolerance =
            settings.precision == solvers::Precision::single_precision ? 1e-6 : 1e-8;
    }
    if (!settings.max_iterations_given) {
        // CG's exact-arithmetic bound is n.
        c.max_iterations = std::clamp<std::int64_t>(2 * rows, 1000, 10000);
    }
    return c;
}

void set_grid(SolveSettings& settings, const std::string& text, SettingNames names) {
    try {
        settings.solver.request.grid = solvers::parse_grid_box(text);
    } catch (const std::invalid_argument& e) {
        throw InputError(setting_name("grid", names) + ": " + e.what());
    }
}

void check_settings(SolveSettings& settings, std::int64_t restart, SettingNames names) {
    if (const auto problem = framework::find_solver_problem(criteria_for(settings, 1), restart,
                                                            settings.precision)) {
        throw InputError(setting_name(problem->key, names) + " " + problem->message);
    }
    settings.solver.method.restart = static_cast<int>(restart);
}

void check_grid(const SolveSettings& settings, std::int64_t rows, SettingNames names) {
    const std::optional<solvers::GridBox>& grid = settings.solver.request.grid;
    if (grid && grid->size() != rows) {
        throw InputError(setting_name("grid", names) + " " + grid->describe() + " has " +
                         std::to_string(grid->size()) + " points, but the matrix has " +
                         std::to_string(rows) +
                         " rows: the rows must be the box's points, x fastest");
    }
}

}  // namespace simrun::front_end

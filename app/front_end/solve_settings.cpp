#include "solve_settings.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/solvers/boxes/box.hpp"
#include "simrun/solvers/methods/gmres.hpp"

namespace simrun::front_end {
namespace {

using framework::InputError;

std::string setting_name(std::string_view key, SettingNames names) {
    if (names == SettingNames::keywords) return std::string(key);
    return key == "max_iterations" ? "--max-iters" : "--" + std::string(key);
}

}  // namespace

void SolveSettings::set_rtol(double rtol) {
    method.criteria.relative_tolerance = rtol;
    rtol_given = true;
}

void SolveSettings::set_max_iterations(std::int64_t limit) {
    method.criteria.max_iterations = limit;
    max_iterations_given = true;
}

solvers::StoppingCriteria criteria_for(const SolveSettings& settings, std::int64_t rows) {
    solvers::StoppingCriteria c = settings.method.criteria;
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
        settings.request.grid = solvers::parse_grid_box(text);
    } catch (const std::invalid_argument& e) {
        throw InputError((names == SettingNames::keywords ? "grid: " : "--grid: ") +
                         std::string(e.what()));
    }
}

void check_settings(const SolveSettings& settings, SettingNames names) {
    if (const auto problem = solvers::find_problem(criteria_for(settings, 1), settings.precision)) {
        throw InputError(setting_name(problem->key, names) + " " + problem->message);
    }
}

void set_restart(SolveSettings& settings, std::int64_t restart, SettingNames names) {
    if (const auto problem = solvers::find_restart_problem(restart)) {
        throw InputError((names == SettingNames::keywords ? "restart " : "--restart-length ") +
                         *problem);
    }
    settings.method.restart = static_cast<int>(restart);
}

void check_grid(const SolveSettings& settings, std::int64_t rows, SettingNames names) {
    const std::optional<solvers::GridBox>& grid = settings.request.grid;
    if (grid && grid->size() != rows) {
        throw InputError(std::string(names == SettingNames::keywords ? "grid " : "--grid ") +
                         grid->describe() + " has " + std::to_string(grid->size()) +
                         " points, but the matrix has " + std::to_string(rows) +
                         " rows: the rows must be the box's points, x fastest");
    }
}

}  // namespace simrun::front_end

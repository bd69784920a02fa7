#include "simrun/framework/discretisation/boundary_conditions.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/discretisation/grid_loops.hpp"

namespace simrun::framework {
namespace {

constexpr std::array<std::string_view, 6> side_names{"left", "right", "bottom",
                                                     "top",  "front", "back"};

SideCondition read_side(const ConfigSection& section, const std::string& key) {
    if (!section.is_table(key)) {  // shorthand: a Dirichlet value
        return {BoundaryType::dirichlet,
                Expression(section.require<std::string>(key), section.full_key(key),
                           section.place(key)),
                0.0};
    }
    const ConfigSection table = section.subsection(key);
    SideCondition condition{BoundaryType::dirichlet,
                            Expression(table.require<std::string>("value"), table.full_key("value"),
                                       table.place("value")),
                            0.0};
    const std::string type = table.require<std::string>("type");
    if (type == "dirichlet") {
        condition.type = BoundaryType::dirichlet;
    } else if (type == "neumann") {
        condition.type = BoundaryType::neumann;
    } else if (type == "robin") {
        condition.type = BoundaryType::robin;
        condition.coefficient = table.require<double>("coefficient");
        if (!(condition.coefficient > 0.0) || !std::isfinite(condition.coefficient)) {
            table.fail("coefficient", "the Robin coefficient a in du/dn + a u = g must be > 0");
        }
    } else {
        table.fail("type", "'" + type + "' is not one of: dirichlet, neumann, robin");
    }
    return condition;
}

}  // namespace

std::string_view to_string(BoundaryType type) {
    switch (type) {
        case BoundaryType::dirichlet:
            return "dirichlet";
        case BoundaryType::neumann:
            return "neumann";
        case BoundaryType::robin:
            return "robin";
    }
    return "unknown";
}

std::string_view side_name(Side side) { return side_names[static_cast<std::size_t>(side)]; }
int side_axis(Side side) { return static_cast<int>(side) / 2; }
int side_direction(Side side) { return static_cast<int>(side) % 2 == 0 ? -1 : 1; }

BoundaryConditions BoundaryConditions::from_config(const ConfigSection& section, const Grid& grid) {
    const int sides = 2 * grid.dimension();
    std::optional<SideCondition> all;
    if (section.has("all")) all = read_side(section, "all");
    std::vector<SideCondition> conditions;
    for (int s = 0; s < 6; ++s) {
        const std::string name(side_names[static_cast<std::size_t>(s)]);
        if (section.has(name)) {
            if (s >= sides) section.fail(name, "a 2D grid has no front or back side");
            conditions.push_back(read_side(section, name));
        } else if (s < sides) {
            if (!all) {
                section.fail(name, "no boundary condition for side '" + name + "' (give " + name +
                                       " = \"expression\", a table with type and value, or "
                                       "all = ...)");
            }
            conditions.push_back(*all);
        }
    }
    return BoundaryConditions(grid.dimension(), std::move(conditions));
}

BoundaryConditions::BoundaryConditions(int dimension, std::vector<SideCondition> sides)
    : sides_(std::move(sides)) {
    if (static_cast<int>(sides_.size()) != 2 * dimension) {
        throw std::invalid_argument("boundary conditions: " + std::to_string(sides_.size()) +
                                    " sides given for a " + std::to_string(dimension) + "D grid");
    }
}

bool BoundaryConditions::depends_on_time() const {
    for (const auto& s : sides_) {
        if (s.value.depends_on_time()) return true;
    }
    return false;
}

std::vector<std::uint8_t> BoundaryConditions::dirichlet_nodes(const Grid& grid,
                                                              const Box& box) const {
    std::vector<std::uint8_t> fixed(static_cast<std::size_t>(box.size()), 0);
    const auto n = grid.points();
    const auto dirichlet = [&](int s) {
        return sides_[static_cast<std::size_t>(s)].type == BoundaryType::dirichlet;
    };
    // A line along x on a Dirichlet side of y or z is fixed whole; another holds at most its
    // two ends on the left and right sides.
    for_each_line_in_blocks(box, [&](std::int64_t j, std::int64_t k, int) {
        const std::int64_t index[3] = {0, j, k};
        bool whole = false;
        for (int s = 2; s < num_sides(); ++s) {
            const int axis = s / 2;
            const std::int64_t edge = s % 2 == 0 ? 0 : n[static_cast<std::size_t>(axis)] - 1;
            whole = whole || (index[axis] == edge && dirichlet(s));
        }
        const auto first = static_cast<std::size_t>(box.index(box.lower[0], j, k));
        const auto width = static_cast<std::size_t>(box.points(0));
        if (whole) {
            std::fill_n(fixed.begin() + static_cast<std::ptrdiff_t>(first), width, 1);
            return;
        }
        if (box.lower[0] == 0 && dirichlet(0)) fixed[first] = 1;
        if (box.upper[0] == n[0] && dirichlet(1)) fixed[first + width - 1] = 1;
    });
    return fixed;
}

int BoundaryConditions::dirichlet_side(const Grid& grid, std::int64_t i, std::int64_t j,
                                       std::int64_t k) const {
    const std::int64_t index[3] = {i, j, k};
    for (int s = num_sides() - 1; s >= 0; --s) {
        const int axis = s / 2;
        const std::int64_t edge = s % 2 == 0 ? 0 : grid.points(axis) - 1;
        if (index[axis] == edge &&
            sides_[static_cast<std::size_t>(s)].type == BoundaryType::dirichlet)
            return s;
    }
    return -1;
}

void BoundaryConditions::fill_dirichlet(const Grid& grid, const Box& box, double t,
                                        std::span<double> values) const {
    for_each_node(box, [&](std::int64_t i, std::int64_t j, std::int64_t k) {
        const int s = dirichlet_side(grid, i, j, k);
        if (s < 0) return;
        values[static_cast<std::size_t>(box.index(i, j, k))] =
            sides_[static_cast<std::size_t>(s)].value(grid.coordinate(0, i), grid.coordinate(1, j),
                                                      grid.coordinate(2, k), t);
    });
}

std::string BoundaryConditions::describe() const {
    std::ostringstream text;
    for (int s = 0; s < num_sides(); ++s) {
        const auto& side = sides_[static_cast<std::size_t>(s)];
        text << (s > 0 ? ", " : "") << side_names[static_cast<std::size_t>(s)] << " "
             << to_string(side.type);
        if (side.type == BoundaryType::robin) text << " (a = " << side.coefficient << ")";
    }
    return text.str();
}

}  // namespace simrun::framework

#include "simrun/framework/dirichlet_boundary.hpp"

#include <string>

namespace simrun::framework {
namespace {

constexpr std::array<const char*, 6> side_names{"left", "right", "bottom", "top", "front", "back"};

}  // namespace

DirichletBoundary DirichletBoundary::from_config(const ConfigSection& section, const Grid& grid) {
    const int sides = 2 * grid.dimension();
    std::optional<Expression> all;
    if (section.has("all")) {
        all.emplace(section.require<std::string>("all"), section.full_key("all"),
                    section.place("all"));
    }
    std::array<std::optional<Expression>, 6> values;
    for (int s = 0; s < 6; ++s) {
        const char* name = side_names[static_cast<std::size_t>(s)];
        if (section.has(name)) {
            if (s >= sides) section.fail(name, "a 2D grid has no front or back side");
            values[static_cast<std::size_t>(s)].emplace(
                section.require<std::string>(name), section.full_key(name), section.place(name));
        } else if (s < sides) {
            if (!all) {
                section.fail(name, std::string("no boundary value for side '") + name + "' (give " +
                                       name + " = \"expression\" or all = ...)");
            }
            values[static_cast<std::size_t>(s)] = all;
        }
    }
    return DirichletBoundary(std::move(values));
}

DirichletBoundary::DirichletBoundary(std::array<std::optional<Expression>, 6> values)
    : values_(std::move(values)) {}

bool DirichletBoundary::depends_on_time() const {
    for (const auto& value : values_) {
        if (value && value->depends_on_time()) return true;
    }
    return false;
}

void DirichletBoundary::fill(const Grid& grid, double t, std::span<double> values) const {
    const auto n = grid.points();
    auto set = [&](Side side, std::int64_t i, std::int64_t j, std::int64_t k) {
        const auto& g = values_[static_cast<std::size_t>(side)];
        values[static_cast<std::size_t>(grid.index(i, j, k))] =
            (*g)(grid.coordinate(0, i), grid.coordinate(1, j), grid.coordinate(2, k), t);
    };
    for (std::int64_t k = 0; k < n[2]; ++k) {
        for (std::int64_t j = 0; j < n[1]; ++j) {
            set(Side::left, 0, j, k);
            set(Side::right, n[0] - 1, j, k);
        }
        for (std::int64_t i = 0; i < n[0]; ++i) {
            set(Side::bottom, i, 0, k);
            set(Side::top, i, n[1] - 1, k);
        }
    }
    if (grid.dimension() == 3) {
        for (std::int64_t j = 0; j < n[1]; ++j) {
            for (std::int64_t i = 0; i < n[0]; ++i) {
                set(Side::front, i, j, 0);
                set(Side::back, i, j, n[2] - 1);
            }
        }
    }
}

std::vector<double> interior_mask(const Grid& grid) {
    std::vector<double> mask(static_cast<std::size_t>(grid.num_points()), 0.0);
    for (std::int64_t k = 0; k < grid.points(2); ++k) {
        for (std::int64_t j = 0; j < grid.points(1); ++j) {
            for (std::int64_t i = 0; i < grid.points(0); ++i) {
                if (!grid.is_boundary(i, j, k)) {
                    mask[static_cast<std::size_t>(grid.index(i, j, k))] = 1.0;
                }
            }
        }
    }
    return mask;
}

solvers::DiaData<double> eliminate_dirichlet(const Grid& grid, const solvers::DiaData<double>& l,
                                             double shift, double scale) {
    const std::vector<double> interior = interior_mask(grid);
    solvers::DiaData<double> m = l;
    for (int d = 0; d < m.num_diagonals(); ++d) {
        const int offset = m.offsets[static_cast<std::size_t>(d)];
        for (std::int64_t i = 0; i < m.n; ++i) {
            const std::int64_t j = i + offset;
            const bool inside = j >= 0 && j < m.n;
            const bool keep = inside && interior[static_cast<std::size_t>(i)] > 0.0 &&
                              interior[static_cast<std::size_t>(j)] > 0.0;
            double value = keep ? -scale * l.at(d, i) : 0.0;
            if (offset == 0)
                value = interior[static_cast<std::size_t>(i)] > 0.0 ? shift + value : 1.0;
            m.at(d, i) = value;
        }
    }
    return m;
}

}  // namespace simrun::framework

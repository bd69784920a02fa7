#include "simrun/framework/discretisation/spatial_operator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "simrun/framework/discretisation/grid_loops.hpp"

namespace simrun::framework {
namespace {

// The DIA offsets of a 5-point (2D) or 7-point (3D) stencil, sorted ascending.
std::vector<int> stencil_offsets(const Grid& grid) {
    std::vector<int> offsets{0};
    for (int axis = 0; axis < grid.dimension(); ++axis) {
        offsets.push_back(static_cast<int>(grid.stride(axis)));
        offsets.push_back(-static_cast<int>(grid.stride(axis)));
    }
    std::sort(offsets.begin(), offsets.end());
    return offsets;
}

}  // namespace

SpatialOperator::SpatialOperator(const Grid& grid, const StencilFunction& stencil,
                                 const BoundaryConditions& boundary)
    : grid_(grid), boundary_(boundary), dirichlet_(boundary.dirichlet_nodes(grid)) {
    const auto n = grid.points();
    l_.n = grid.num_points();
    l_.offsets = stencil_offsets(grid);
    l_.values.assign(l_.offsets.size() * static_cast<std::size_t>(l_.n), 0.0);
    row_scale_.assign(static_cast<std::size_t>(l_.n), 1.0);
    const int centre = l_.find_diagonal(0);
    int minus[3] = {0, 0, 0}, plus[3] = {0, 0, 0};
    for (int axis = 0; axis < grid.dimension(); ++axis) {
        minus[axis] = l_.find_diagonal(-static_cast<int>(grid.stride(axis)));
        plus[axis] = l_.find_diagonal(static_cast<int>(grid.stride(axis)));
    }
    // Ghost terms and Dirichlet couplings per block of lines, joined in block (node) order.
    std::vector<std::vector<GhostTerm>> ghosts(static_cast<std::size_t>(omp_get_max_threads()));
    std::vector<std::vector<Coupling>> couplings(ghosts.size());
    const int blocks = for_each_node_in_blocks(
        grid, [&](std::int64_t i, std::int64_t j, std::int64_t k, int block) {
            const std::int64_t row = grid.index(i, j, k);
            if (dirichlet_[static_cast<std::size_t>(row)]) return;
            StencilCoefficients s = stencil(i, j, k);
            const std::int64_t index[3] = {i, j, k};
            for (int axis = 0; axis < grid.dimension(); ++axis) {
                const double h = grid.spacing(axis);
                for (int direction : {-1, 1}) {
                    const bool at_edge = direction < 0
                                             ? index[axis] == 0
                                             : index[axis] == n[static_cast<std::size_t>(axis)] - 1;
                    if (!at_edge) continue;
                    const int side = 2 * axis + (direction < 0 ? 0 : 1);
                    const SideCondition& condition = boundary.side(static_cast<Side>(side));
                    double& ghost = direction < 0 ? s.minus[axis] : s.plus[axis];
                    double& inner = direction < 0 ? s.plus[axis] : s.minus[axis];
                    // u_ghost = u_inner + 2 h (g - a u_node)
                    inner += ghost;
                    s.centre -= 2.0 * h * condition.coefficient * ghost;
                    ghosts[static_cast<std::size_t>(block)].push_back({row, side, 2.0 * h * ghost});
                    ghost = 0.0;
                    row_scale_[static_cast<std::size_t>(row)] *= 0.5;
                }
            }
            l_.at(centre, row) = s.centre;
            for (int axis = 0; axis < grid.dimension(); ++axis) {
                l_.at(minus[axis], row) = s.minus[axis];
                l_.at(plus[axis], row) = s.plus[axis];
            }
            // The row's couplings to Dirichlet nodes, in diagonal order (as an SpMV sums them).
            for (int d = 0; d < l_.num_diagonals(); ++d) {
                const std::int64_t column = row + l_.offsets[static_cast<std::size_t>(d)];
                if (column < 0 || column >= l_.n || !dirichlet_[static_cast<std::size_t>(column)] ||
                    l_.at(d, row) == 0.0) {
                    continue;
                }
                couplings[static_cast<std::size_t>(block)].push_back({row, column, l_.at(d, row)});
            }
        });
    for (int block = 0; block < blocks; ++block) {
        const auto b = static_cast<std::size_t>(block);
        ghost_terms_.insert(ghost_terms_.end(), ghosts[b].begin(), ghosts[b].end());
        couplings_.insert(couplings_.end(), couplings[b].begin(), couplings[b].end());
    }
}

void SpatialOperator::add_boundary_forcing(double t, std::span<double> forcing) const {
    for (const GhostTerm& term : ghost_terms_) {
        std::int64_t rest = term.node;
        const std::int64_t i = rest % grid_.points(0);
        rest /= grid_.points(0);
        const std::int64_t j = rest % grid_.points(1);
        const std::int64_t k = rest / grid_.points(1);
        const SideCondition& condition = boundary_.side(static_cast<Side>(term.side));
        forcing[static_cast<std::size_t>(term.node)] +=
            term.weight * condition.value(grid_.coordinate(0, i), grid_.coordinate(1, j),
                                          grid_.coordinate(2, k), t);
    }
}

void SpatialOperator::dirichlet_coupling(std::span<const double> g, std::span<double> lg) const {
    std::fill(lg.begin(), lg.end(), 0.0);
    // lg_i = sum_j l_ij g_j over the Dirichlet nodes j; the terms of a row are adjacent.
    for (std::size_t c = 0; c < couplings_.size();) {
        const std::int64_t row = couplings_[c].row;
        double sum = 0.0;
        for (; c < couplings_.size() && couplings_[c].row == row; ++c) {
            sum += couplings_[c].value * g[static_cast<std::size_t>(couplings_[c].column)];
        }
        lg[static_cast<std::size_t>(row)] = sum;
    }
}

solvers::DiaData<double> SpatialOperator::release_matrix() {
    solvers::DiaData<double> l = std::move(l_);
    l_ = {};
    return l;
}

bool SpatialOperator::boundary_forcing_depends_on_time() const {
    for (const GhostTerm& term : ghost_terms_) {
        if (boundary_.side(static_cast<Side>(term.side)).value.depends_on_time()) return true;
    }
    return false;
}

double SpatialOperator::largest_stable_explicit_step() const {
    double largest_sum = 0.0;
    for (std::int64_t i = 0; i < l_.n; ++i) {
        if (dirichlet_[static_cast<std::size_t>(i)]) continue;
        double sum = 0.0;
        for (int d = 0; d < l_.num_diagonals(); ++d) sum += std::abs(l_.at(d, i));
        largest_sum = std::max(largest_sum, sum);
    }
    return largest_sum > 0.0 ? 2.0 / largest_sum : std::numeric_limits<double>::infinity();
}

namespace {

// Turns m, holding L on entry, into the system matrix (see spatial_operator.hpp); entry by
// entry, so it may be done in place.
void make_system_matrix(const SpatialOperator& op, double shift, double scale,
                        solvers::DiaData<double>& m) {
    const auto& fixed = op.dirichlet();
    const auto& row_scale = op.row_scale();
    for (int d = 0; d < m.num_diagonals(); ++d) {
        const int offset = m.offsets[static_cast<std::size_t>(d)];
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < m.n; ++i) {
            const std::int64_t j = i + offset;
            const auto row = static_cast<std::size_t>(i);
            if (fixed[row]) {
                m.at(d, i) = offset == 0 ? 1.0 : 0.0;
                continue;
            }
            const bool keep = j >= 0 && j < m.n && !fixed[static_cast<std::size_t>(j)];
            const double value = (offset == 0 ? shift : 0.0) - scale * (keep ? m.at(d, i) : 0.0);
            m.at(d, i) = row_scale[row] * value;
        }
    }
}

}  // namespace

solvers::DiaData<double> system_matrix(const SpatialOperator& op, double shift, double scale) {
    solvers::DiaData<double> m = op.matrix();
    make_system_matrix(op, shift, scale, m);
    return m;
}

solvers::DiaData<double> release_system_matrix(SpatialOperator& op, double shift, double scale) {
    solvers::DiaData<double> m = op.release_matrix();
    make_system_matrix(op, shift, scale, m);
    return m;
}

}  // namespace simrun::framework

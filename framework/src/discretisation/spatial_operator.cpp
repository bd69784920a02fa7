#include "simrun/framework/discretisation/spatial_operator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/discretisation/grid_loops.hpp"
#include "simrun/solvers/matrices/first_touch.hpp"

namespace simrun::framework {
namespace {

// The DIA offsets of a 5-point (2D) or 7-point (3D) stencil on a box, sorted ascending.
std::vector<int> stencil_offsets(const Grid& grid, const Box& box) {
    std::vector<int> offsets{0};
    for (int axis = 0; axis < grid.dimension(); ++axis) {
        offsets.push_back(static_cast<int>(box.stride(axis)));
        offsets.push_back(-static_cast<int>(box.stride(axis)));
    }
    std::sort(offsets.begin(), offsets.end());
    return offsets;
}

bool all_finite(const StencilCoefficients& s, int dimension) {
    for (int axis = 0; axis < dimension; ++axis) {
        if (!std::isfinite(s.minus[axis]) || !std::isfinite(s.plus[axis])) return false;
    }
    return std::isfinite(s.centre);
}

// "(0.5, 0.25)": a node's coordinates.
std::string coordinates(const Grid& grid, const Box& box, std::int64_t row) {
    const auto index = box.node(row);
    std::string text = "(";
    for (int axis = 0; axis < grid.dimension(); ++axis) {
        char number[32];
        std::snprintf(number, sizeof number, "%s%.6g", axis > 0 ? ", " : "",
                      grid.coordinate(axis, index[static_cast<std::size_t>(axis)]));
        text += number;
    }
    return text + ")";
}

// The problem's coefficients over h^2 (or their sum on the diagonal) overflow a double: no
// solver can work with the operator, so the input is refused where it is assembled, by the run
// and by `simrun check` alike.
[[noreturn]] void throw_not_finite_operator(const Grid& grid, const Box& box, std::int64_t row) {
    char spacing[32];
    std::snprintf(spacing, sizeof spacing, "%.6g", grid.spacing(0));
    throw InputError(
        "key 'problem': the discretised operator is not finite at " + coordinates(grid, box, row) +
        ": the problem's coefficients over the grid spacing squared (h = " + spacing +
        ") overflow a double; scale the problem (smaller coefficients) or use a coarser grid");
}

// The system matrix's entry at row i, diagonal `offset`: S_i ((offset == 0 ? shift : 0) -
// scale l_ij), l_ij counted only where `keep` (j a free node of the matrix).
inline double system_entry(double shift, double scale, int offset, bool keep, double l,
                           double row_scale) {
    const double value = (offset == 0 ? shift : 0.0) - scale * (keep ? l : 0.0);
    return row_scale * value;
}

// The implicit step's matrix overflows at `row`.
[[noreturn]] void throw_not_finite_system(const Grid& grid, const Box& box, std::int64_t row) {
    throw InputError("key 'time.dt': the implicit step's matrix I - theta dt L is not finite at " +
                     coordinates(grid, box, row) +
                     ": dt times the problem's coefficients over h^2 overflows a double; use "
                     "a smaller dt");
}

}  // namespace

SpatialOperator::SpatialOperator(const Grid& grid, const StencilFunction& stencil,
                                 const BoundaryConditions& boundary)
    : SpatialOperator(grid, line_stencils(stencil), boundary, grid.box(), std::nullopt) {}

SpatialOperator::SpatialOperator(const Grid& grid, const StencilFunction& stencil,
                                 const BoundaryConditions& boundary, const Box& box)
    : SpatialOperator(grid, line_stencils(stencil), boundary, box, std::nullopt) {}

namespace {

// What one block of lines collects: its ghost terms and Dirichlet couplings (in node order),
// its first row whose coefficients are not finite, its first system row not finite, and the
// stencils of the line at hand.
struct BlockTerms {
    std::vector<SpatialOperator::GhostTerm> ghosts;
    std::vector<SpatialOperator::Coupling> couplings;
    std::optional<std::int64_t> not_finite;
    std::int64_t system_not_finite = -1;
    std::vector<StencilCoefficients> line;
};

// Writes the rows of L (or of the system matrix, where `system` is set) into m, and the row
// scale, a row at a time.
struct RowAssembly {
    const Grid& grid;
    const Box& box;
    const BoundaryConditions& boundary;
    const std::vector<std::uint8_t>& fixed;
    const std::optional<SystemForm>& system;
    solvers::DiaData<double>& m;
    std::vector<double>& row_scale;
    int centre = 0;  // where each axis's couplings lie among m's diagonals
    int minus[3] = {0, 0, 0}, plus[3] = {0, 0, 0};

    void find_diagonals() {
        centre = m.find_diagonal(0);
        for (int axis = 0; axis < grid.dimension(); ++axis) {
            minus[axis] = m.find_diagonal(-static_cast<int>(box.stride(axis)));
            plus[axis] = m.find_diagonal(static_cast<int>(box.stride(axis)));
        }
    }

    // The nodes x of the line (j, k) (box-numbered, x = i - box.lower[0]) in [first, last)
    // whose row is an inner one (inner_row); an empty range where the line has none.
    std::pair<std::int64_t, std::int64_t> inner_run(std::int64_t j, std::int64_t k) const {
        const std::int64_t index[3] = {0, j, k};
        for (int axis = 1; axis < grid.dimension(); ++axis) {
            if (!inner_along(axis, index[axis])) return {0, 0};
        }
        const auto n = grid.points(0);
        const std::int64_t first = std::max({box.lower[0] + 1, std::int64_t{2}});
        const std::int64_t last = std::min({box.upper[0] - 1, n - 2});
        return {first - box.lower[0], std::max(first, last) - box.lower[0]};
    }
    // Whether index i along `axis` is two nodes or more from the grid's sides (no side to fold,
    // no Dirichlet neighbour along any axis) and one or more inside the box's faces (both
    // neighbours held).
    bool inner_along(int axis, std::int64_t i) const {
        const auto a = static_cast<std::size_t>(axis);
        return i >= 2 && i <= grid.points(axis) - 3 && i > box.lower[a] && i + 1 < box.upper[a];
    }

    // An inner node's row (inner_run): free, its neighbours free and held, nothing folded; as
    // free_row makes it, without its cases.
    void inner_row(BlockTerms& terms, std::int64_t row, const StencilCoefficients& s) const {
        row_scale[static_cast<std::size_t>(row)] = 1.0;
        if (!terms.not_finite && !all_finite(s, grid.dimension())) terms.not_finite = row;
        double l[7] = {};
        l[centre] = s.centre;
        for (int axis = 0; axis < grid.dimension(); ++axis) {
            l[minus[axis]] = s.minus[axis];
            l[plus[axis]] = s.plus[axis];
        }
        for (int d = 0; d < m.num_diagonals(); ++d) {
            if (!system) {
                m.at(d, row) = l[d];
                continue;
            }
            m.at(d, row) = system_entry(system->shift, system->scale,
                                        m.offsets[static_cast<std::size_t>(d)], true, l[d], 1.0);
            if (!std::isfinite(m.at(d, row)) && terms.system_not_finite < 0) {
                terms.system_not_finite = row;
            }
        }
    }

    // A Dirichlet node's row: zero in L, the identity's in the system matrix.
    void fixed_row(std::int64_t row) const {
        row_scale[static_cast<std::size_t>(row)] = 1.0;
        for (int d = 0; d < m.num_diagonals(); ++d) {
            m.at(d, row) = system && m.offsets[static_cast<std::size_t>(d)] == 0 ? 1.0 : 0.0;
        }
    }

    // A free node's row from its stencil s: the ghosts of the sides it lies on folded in, then
    // L's entries (or the system matrix's, from them) and its couplings to Dirichlet nodes.
    void free_row(BlockTerms& terms, std::int64_t row, const std::int64_t (&index)[3],
                  StencilCoefficients s) const {
        const auto n = grid.points();
        double scale = 1.0;
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
                terms.ghosts.push_back({row, side, 2.0 * h * ghost});
                ghost = 0.0;
                scale *= 0.5;
            }
        }
        row_scale[static_cast<std::size_t>(row)] = scale;
        if (!terms.not_finite && !all_finite(s, grid.dimension())) terms.not_finite = row;
        // L's entries in diagonal order; a coupling leaving the box is not held (along x it
        // would meet the box's previous or next line in the box's numbering).
        double l[7] = {};
        l[centre] = s.centre;
        for (int axis = 0; axis < grid.dimension(); ++axis) {
            const auto a = static_cast<std::size_t>(axis);
            l[minus[axis]] = index[axis] > box.lower[a] ? s.minus[axis] : 0.0;
            l[plus[axis]] = index[axis] + 1 < box.upper[a] ? s.plus[axis] : 0.0;
        }
        for (int d = 0; d < m.num_diagonals(); ++d) {
            const int offset = m.offsets[static_cast<std::size_t>(d)];
            const std::int64_t column = row + offset;
            const bool inside = column >= 0 && column < m.n;
            const bool to_fixed = inside && fixed[static_cast<std::size_t>(column)] != 0;
            // The row's couplings to Dirichlet nodes, in diagonal order (as an SpMV sums them).
            if (to_fixed && l[d] != 0.0) terms.couplings.push_back({row, column, l[d]});
            if (!system) {
                m.at(d, row) = l[d];
                continue;
            }
            m.at(d, row) = system_entry(system->shift, system->scale, offset, inside && !to_fixed,
                                        l[d], scale);
            if (!std::isfinite(m.at(d, row)) && terms.system_not_finite < 0) {
                terms.system_not_finite = row;
            }
        }
    }
};

}  // namespace

// One pass over the box's lines (a line's free nodes' stencils asked at once), writing every
// entry of the rows (on pages the threads touched first; the vector's own zero fill then meets
// them present) and of the row scale: per node 8 bytes a diagonal and 8 of scale written, the
// Dirichlet mask read.
SpatialOperator::SpatialOperator(const Grid& grid, LineStencils stencils,
                                 const BoundaryConditions& boundary, const Box& box,
                                 std::optional<SystemForm> system)
    : grid_(grid),
      boundary_(boundary),
      box_(box),
      system_(system),
      dirichlet_(boundary.dirichlet_nodes(grid, box)) {
    solvers::DiaData<double>& m = system_ ? system_rows_ : l_;
    m.n = box.size();
    m.offsets = stencil_offsets(grid, box);
    // First touched by the threads that fill them (for_each_line_in_blocks's blocks of rows,
    // the threads' equal shares of each diagonal).
    solvers::resize_first_touched(m.values, static_cast<std::size_t>(m.n), m.offsets.size());
    solvers::resize_first_touched(row_scale_, static_cast<std::size_t>(m.n));
    RowAssembly rows{grid, box, boundary, dirichlet_, system_, m, row_scale_};
    rows.find_diagonals();
    std::vector<BlockTerms> terms(static_cast<std::size_t>(omp_get_max_threads()));
    const int blocks = for_each_line_in_blocks(box, [&](std::int64_t j, std::int64_t k, int block) {
        BlockTerms& mine = terms[static_cast<std::size_t>(block)];
        const std::int64_t first = box.index(box.lower[0], j, k);
        const std::int64_t width = box.points(0);
        // A line's free nodes are a run (its Dirichlet nodes lie at its ends, or fill it).
        std::int64_t begin = 0, end = width;
        while (begin < end && dirichlet_[static_cast<std::size_t>(first + begin)]) ++begin;
        while (end > begin && dirichlet_[static_cast<std::size_t>(first + end - 1)]) --end;
        mine.line.resize(static_cast<std::size_t>(width));
        if (end > begin) {
            stencils.fill(stencils.stencil, box.lower[0] + begin, box.lower[0] + end, j, k,
                          mine.line.data());
        }
        const auto [inner_first, inner_last] = rows.inner_run(j, k);
        for (std::int64_t x = 0; x < width; ++x) {
            const std::int64_t row = first + x;
            if (x >= inner_first && x < inner_last) {
                rows.inner_row(mine, row, mine.line[static_cast<std::size_t>(x - begin)]);
            } else if (dirichlet_[static_cast<std::size_t>(row)]) {
                rows.fixed_row(row);
            } else {
                rows.free_row(mine, row, {box.lower[0] + x, j, k},
                              mine.line[static_cast<std::size_t>(x - begin)]);
            }
        }
    });
    for (int block = 0; block < blocks; ++block) {
        const auto& b = terms[static_cast<std::size_t>(block)];
        if (b.not_finite) throw_not_finite_operator(grid, box, *b.not_finite);
    }
    std::size_t ghosts = 0, couplings = 0;
    for (int block = 0; block < blocks; ++block) {
        ghosts += terms[static_cast<std::size_t>(block)].ghosts.size();
        couplings += terms[static_cast<std::size_t>(block)].couplings.size();
    }
    ghost_terms_.reserve(ghosts);
    couplings_.reserve(couplings);
    for (int block = 0; block < blocks; ++block) {
        const auto& b = terms[static_cast<std::size_t>(block)];
        ghost_terms_.insert(ghost_terms_.end(), b.ghosts.begin(), b.ghosts.end());
        couplings_.insert(couplings_.end(), b.couplings.begin(), b.couplings.end());
        if (system_not_finite_ < 0) system_not_finite_ = b.system_not_finite;
    }
}

Box SpatialOperator::complete_box() const {
    Box complete = box_;
    for (std::size_t a = 0; a < static_cast<std::size_t>(grid_.dimension()); ++a) {
        if (box_.lower[a] > 0) ++complete.lower[a];
        if (box_.upper[a] < grid_.points()[a]) --complete.upper[a];
    }
    return complete;
}

void SpatialOperator::add_boundary_forcing(double t, std::span<double> forcing) const {
    for (const GhostTerm& term : ghost_terms_) {
        const auto [i, j, k] = box_.node(term.node);
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

namespace {

// One free row of L for the bound below: the diagonal l_ii and, per off-diagonal, the pair
// (l_ij, (s_j / s_i) l_ji), s the row scale; couplings to fixed nodes are (0, 0).
struct ExplicitRow {
    double diagonal;
    const std::array<double, 2>* pairs;
    int width;

    // cos(phi) l_ii + sum_j |e^{i phi} a_ij + e^{-i phi} b_ij| / 2 over the pairs (a, b), with
    // |e^{i phi} a + e^{-i phi} b|^2 = a^2 + b^2 + 2 a b cos(2 phi).
    double hermitian_bound(double phi) const {
        const double c2 = std::cos(2 * phi);
        double sum = std::cos(phi) * diagonal;
        for (int k = 0; k < width; ++k) {
            const auto& [a, b] = pairs[k];
            sum += 0.5 * std::sqrt(std::max(0.0, a * a + b * b + 2 * a * b * c2));
        }
        return sum;
    }

    // min over phi in (0, pi] of (1 - cos phi) / hermitian_bound(phi) where the bound is
    // positive: searched on 128 angles, denser near 0 where the convective limit sits, then
    // refined by a golden-section search around the best one; phi = pi (the diffusive limit) is
    // sampled exactly.
    double largest_step() const {
        const auto limit_at = [&](double phi) {
            const double s = hermitian_bound(phi);
            const double half = std::sin(phi / 2);  // 1 - cos(phi) = 2 sin^2(phi / 2)
            return s > 0.0 ? 2 * half * half / s : std::numeric_limits<double>::infinity();
        };
        constexpr int samples = 128;
        const double pi = std::acos(-1.0);
        const auto angle = [&](int k) {
            const double x = static_cast<double>(k) / samples;
            return pi * x * x;
        };
        double best = std::numeric_limits<double>::infinity();
        int best_k = samples;
        for (int k = 1; k <= samples; ++k) {
            const double value = limit_at(angle(k));
            if (value < best) {
                best = value;
                best_k = k;
            }
        }
        if (best_k == samples || !std::isfinite(best)) return best;
        double lo = angle(best_k - 1), hi = angle(best_k + 1);
        const double ratio = (std::sqrt(5.0) - 1.0) / 2.0;
        for (int iteration = 0; iteration < 40; ++iteration) {
            const double a = hi - ratio * (hi - lo), b = lo + ratio * (hi - lo);
            const double fa = limit_at(a), fb = limit_at(b);
            best = std::min({best, fa, fb});
            if (fa < fb) {
                hi = b;
            } else {
                lo = a;
            }
        }
        return best;
    }
};

}  // namespace

// In the norm of the row scale (u -> S^1/2 u, in which diffusion is symmetric) the step is
// G' = S^1/2 (I + dt L) S^-1/2, with numerical radius w(G') = max_phi lambda_max(H(phi)), H(phi)
// the Hermitian part of e^{i phi} G'. Gershgorin on D^-1 H(phi) D with D = diag(s^1/2) (same
// eigenvalues): lambda_max <= cos(phi) + dt max_i S_i(phi), S_i the hermitian_bound of row i.
// So w(G') <= 1 when dt S_i(phi) <= 1 - cos(phi) for every row i and phi in (0, pi] (S_i is even
// in phi; at phi = 0 it is the row sum of L, <= 0 for a dissipative operator, and needs no dt):
// dt <= min over rows of min over phi with S_i(phi) > 0 of (1 - cos phi) / S_i(phi) -- the
// minimum over rows may be taken first, which makes the bound a minimum over rows of a number
// per row. For a symmetric S L the pairs are equal and phi = pi gives 2 / max_i sum_j |l_ij|.
double SpatialOperator::largest_stable_explicit_step() const {
    std::vector<int> transpose(static_cast<std::size_t>(l_.num_diagonals()));
    for (int d = 0; d < l_.num_diagonals(); ++d) {
        transpose[static_cast<std::size_t>(d)] =
            l_.find_diagonal(-l_.offsets[static_cast<std::size_t>(d)]);
    }
    const int centre = l_.find_diagonal(0);
    const int width = l_.num_diagonals() - (centre >= 0 ? 1 : 0);
    // A free row as its bound reads it: l_ii, then the pairs.
    const auto row_of = [&](std::int64_t i, std::vector<double>& row) {
        row.assign(1, centre >= 0 ? l_.at(centre, i) : 0.0);
        for (int d = 0; d < l_.num_diagonals(); ++d) {
            if (d == centre) continue;
            const std::int64_t j = i + l_.offsets[static_cast<std::size_t>(d)];
            std::array<double, 2> pair{0.0, 0.0};
            if (j >= 0 && j < l_.n && !dirichlet_[static_cast<std::size_t>(j)]) {
                const double ratio = row_scale_[static_cast<std::size_t>(j)] /
                                     row_scale_[static_cast<std::size_t>(i)];
                const int t = transpose[static_cast<std::size_t>(d)];
                pair = {l_.at(d, i), t >= 0 ? ratio * l_.at(t, j) : 0.0};
            }
            row.insert(row.end(), pair.begin(), pair.end());
        }
    };
    // Rows alike in every coefficient (bit for bit) bound alike: each distinct row is kept once
    // (a constant-coefficient operator has a few dozen, whatever the grid), found per block of
    // lines (a row like the one before it costs a comparison), then over the blocks.
    const auto key = [](const std::vector<double>& row) {
        return std::string(reinterpret_cast<const char*>(row.data()), row.size() * sizeof(double));
    };
    struct BlockRows {
        std::unordered_set<std::string> seen;
        std::vector<std::string> found;  // in the order met
        std::vector<double> row, last;
    };
    const Box complete = complete_box();
    std::vector<BlockRows> block_rows(static_cast<std::size_t>(omp_get_max_threads()));
    const int blocks =
        for_each_line_in_blocks(complete, [&](std::int64_t y, std::int64_t z, int block) {
            BlockRows& mine = block_rows[static_cast<std::size_t>(block)];
            mine.last.clear();
            for (std::int64_t x = complete.lower[0]; x < complete.upper[0]; ++x) {
                const std::int64_t i = box_.index(x, y, z);
                if (dirichlet_[static_cast<std::size_t>(i)]) continue;
                row_of(i, mine.row);
                if (mine.row.size() == mine.last.size() &&
                    std::memcmp(mine.row.data(), mine.last.data(),
                                mine.row.size() * sizeof(double)) == 0) {
                    continue;
                }
                mine.last = mine.row;
                if (mine.seen.insert(key(mine.row)).second) mine.found.push_back(key(mine.row));
            }
        });
    std::vector<double> diagonals;
    std::vector<std::array<double, 2>> pairs;
    std::unordered_set<std::string> seen;
    for (int block = 0; block < blocks; ++block) {
        for (const std::string& row : block_rows[static_cast<std::size_t>(block)].found) {
            if (!seen.insert(row).second) continue;
            std::vector<double> values(row.size() / sizeof(double));
            std::memcpy(values.data(), row.data(), row.size());
            diagonals.push_back(values[0]);
            for (int k = 0; k < width; ++k) {
                pairs.push_back({values[static_cast<std::size_t>(1 + 2 * k)],
                                 values[static_cast<std::size_t>(2 + 2 * k)]});
            }
        }
    }
    const auto rows = static_cast<std::int64_t>(diagonals.size());
    double limit = std::numeric_limits<double>::infinity();
#pragma omp parallel for schedule(dynamic, 64) reduction(min : limit) if (rows > 64)
    for (std::int64_t r = 0; r < rows; ++r) {
        const ExplicitRow explicit_row{diagonals[static_cast<std::size_t>(r)],
                                       pairs.data() + r * width, width};
        limit = std::min(limit, explicit_row.largest_step());
    }
    return limit;
}

namespace {

// Turns m, holding L on entry, into the system matrix (see spatial_operator.hpp); row by row,
// in place: 8 bytes a diagonal read and written, 9 a row of mask and scale read.
void make_system_matrix(const SpatialOperator& op, double shift, double scale,
                        solvers::DiaData<double>& m) {
    const auto& fixed = op.dirichlet();
    const auto& row_scale = op.row_scale();
    std::int64_t not_finite = m.n;  // the first row holding an entry that is not finite
    const int diagonals = m.num_diagonals();
#pragma omp parallel for schedule(static) reduction(min : not_finite)
    for (std::int64_t i = 0; i < m.n; ++i) {
        const auto row = static_cast<std::size_t>(i);
        for (int d = 0; d < diagonals; ++d) {
            const int offset = m.offsets[static_cast<std::size_t>(d)];
            if (fixed[row]) {
                m.at(d, i) = offset == 0 ? 1.0 : 0.0;
                continue;
            }
            const std::int64_t j = i + offset;
            const bool keep = j >= 0 && j < m.n && !fixed[static_cast<std::size_t>(j)];
            m.at(d, i) = system_entry(shift, scale, offset, keep, m.at(d, i), row_scale[row]);
            if (!std::isfinite(m.at(d, i))) not_finite = std::min(not_finite, i);
        }
    }
    // L is finite (checked at assembly): only a step dt large enough overflows shift - scale L.
    if (not_finite < m.n) throw_not_finite_system(op.grid(), op.box(), not_finite);
}

// Whether two doubles are the same value, bit for bit.
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

solvers::DiaData<double> system_matrix(const SpatialOperator& op, double shift, double scale) {
    if (op.matrix().n != op.box().size()) {
        throw std::logic_error("system_matrix: the spatial operator holds no L");
    }
    solvers::DiaData<double> m = op.matrix();
    make_system_matrix(op, shift, scale, m);
    return m;
}

solvers::DiaData<double> release_system_matrix(SpatialOperator& op, double shift, double scale) {
    if (op.system_) {  // assembled as the system matrix
        if (!same_bits(op.system_->shift, shift) || !same_bits(op.system_->scale, scale)) {
            throw std::logic_error(
                "release_system_matrix: the operator was assembled as another system matrix");
        }
        if (op.system_not_finite_ >= 0) {
            throw_not_finite_system(op.grid(), op.box(), op.system_not_finite_);
        }
        op.system_.reset();
        solvers::DiaData<double> m = std::move(op.system_rows_);
        op.system_rows_ = {};
        return m;
    }
    if (op.matrix().n != op.box().size()) {
        throw std::logic_error("release_system_matrix: the spatial operator holds no L");
    }
    solvers::DiaData<double> m = op.release_matrix();
    make_system_matrix(op, shift, scale, m);
    return m;
}

}  // namespace simrun::framework

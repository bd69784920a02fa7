#include "simrun/framework/distributed/decomposition.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace simrun::framework {
namespace {

const char* const axis_names[] = {"x", "y", "z"};

// The first node of part p of `parts` along an axis of n nodes.
std::int64_t part_start(std::int64_t n, std::int64_t parts, std::int64_t p) {
    return p * (n / parts) + std::min(p, n % parts);
}

// The part holding node i along an axis of n nodes in `parts` parts.
std::int64_t part_holding(std::int64_t n, std::int64_t parts, std::int64_t i) {
    const std::int64_t base = n / parts, extra = n % parts;
    // The first `extra` parts hold base + 1 nodes each.
    const std::int64_t long_nodes = extra * (base + 1);
    return i < long_nodes ? i / (base + 1) : extra + (i - long_nodes) / base;
}

std::array<std::int64_t, 3> position(const std::array<std::int64_t, 3>& parts, int rank) {
    return {rank % parts[0], rank / parts[0] % parts[1], rank / (parts[0] * parts[1])};
}

Box box_at(const Grid& grid, const std::array<std::int64_t, 3>& parts, int rank) {
    const auto at = position(parts, rank);
    Box box;
    for (std::size_t a = 0; a < 3; ++a) {
        const std::int64_t n = grid.points()[a];
        box.lower[a] = part_start(n, parts[a], at[a]);
        box.upper[a] = part_start(n, parts[a], at[a] + 1);
    }
    return box;
}

}  // namespace

Decomposition Decomposition::whole(const Grid& grid) {
    return {{1, 1, 1}, grid.box(), grid.box(), 0, 1};
}

Decomposition Decomposition::of(const Grid& grid, int rank, std::array<std::int64_t, 3> parts) {
    const std::int64_t ranks = parts[0] * parts[1] * parts[2];
    if (parts[0] < 1 || parts[1] < 1 || parts[2] < 1 || rank < 0 || rank >= ranks) {
        throw std::invalid_argument("rank " + std::to_string(rank) + " of a process grid of " +
                                    describe_parts(grid, parts));
    }
    if (grid.dimension() == 2 && parts[2] != 1) {
        throw std::invalid_argument("a 2D grid is split along x and y only");
    }
    // Boxes (more than the slowest axis split) hold at least 2 nodes along each axis, so that
    // their rows' couplings along different axes lie on different diagonals.
    bool slabs = true;
    for (int a = 0; a < grid.slowest_axis(); ++a) {
        slabs = slabs && parts[static_cast<std::size_t>(a)] == 1;
    }
    const std::int64_t least = slabs ? 1 : 2;
    for (std::size_t a = 0; a < 3; ++a) {
        if (parts[a] > 1 && grid.points()[a] < least * parts[a]) {
            throw std::invalid_argument(
                "the grid has " + std::to_string(grid.points()[a]) + " nodes along " +
                axis_names[a] + " for " + std::to_string(parts[a]) + " parts of the process grid " +
                describe_parts(grid, parts) + ": each rank needs at least " +
                (slabs ? "one" : "two") + "; use fewer ranks or a finer grid");
        }
    }
    Decomposition d{parts, box_at(grid, parts, rank), {}, rank, static_cast<int>(ranks)};
    d.assembled = grid.with_neighbours(d.owned);
    return d;
}

std::array<std::int64_t, 3> Decomposition::slab_parts(const Grid& grid, int ranks) {
    std::array<std::int64_t, 3> parts{1, 1, 1};
    parts[static_cast<std::size_t>(grid.slowest_axis())] = ranks;
    return parts;
}

std::optional<std::array<std::int64_t, 3>> Decomposition::box_parts(const Grid& grid, int ranks,
                                                                    std::int64_t least) {
    std::optional<std::array<std::int64_t, 3>> best;
    double fewest = std::numeric_limits<double>::infinity();
    const auto n = grid.points();
    const std::int64_t z_parts = grid.dimension() == 3 ? ranks : 1;
    for (std::int64_t pz = 1; pz <= z_parts; ++pz) {
        if (ranks % pz != 0) continue;
        for (std::int64_t py = 1; py <= ranks / pz; ++py) {
            if ((ranks / pz) % py != 0) continue;
            const std::array<std::int64_t, 3> parts{ranks / pz / py, py, pz};
            bool fits = true;
            double faces = 0.0;  // nodes on the faces between boxes (on either side)
            for (std::size_t a = 0; a < 3; ++a) {
                if (parts[a] > 1 && n[a] / parts[a] < least) fits = false;
                faces += static_cast<double>(parts[a] - 1) *
                         static_cast<double>(grid.num_points()) / static_cast<double>(n[a]);
            }
            // Equal faces: the later candidate has more parts along the slower axes.
            if (fits && faces <= fewest) {
                fewest = faces;
                best = parts;
            }
        }
    }
    return best;
}

std::string Decomposition::describe_parts(const Grid& grid, std::array<std::int64_t, 3> parts) {
    std::string text = std::to_string(parts[0]) + "x" + std::to_string(parts[1]);
    if (grid.dimension() == 3 || parts[2] != 1) text += "x" + std::to_string(parts[2]);
    return text;
}

Box Decomposition::box_of(const Grid& grid, int q) const { return box_at(grid, parts, q); }

std::int64_t Decomposition::first_row(const Grid& grid, int q) const {
    // The boxes before q: whole layers of boxes along z, rows of boxes along y, then boxes
    // along x, each sum over parts of the lengths along one axis.
    const auto at = position(parts, q);
    const auto n = grid.points();
    std::array<std::int64_t, 3> before{};  // nodes along each axis in the parts before q's
    for (std::size_t a = 0; a < 3; ++a) before[a] = part_start(n[a], parts[a], at[a]);
    const Box box = box_of(grid, q);
    return before[2] * n[0] * n[1] + before[1] * n[0] * box.points(2) +
           before[0] * box.points(1) * box.points(2);
}

int Decomposition::rank_of(const Grid& grid, std::int64_t i, std::int64_t j, std::int64_t k) const {
    const auto n = grid.points();
    const std::int64_t px = part_holding(n[0], parts[0], i);
    const std::int64_t py = part_holding(n[1], parts[1], j);
    const std::int64_t pz = part_holding(n[2], parts[2], k);
    return static_cast<int>(px + parts[0] * (py + parts[1] * pz));
}

std::int64_t Decomposition::row_of(const Grid& grid, std::int64_t i, std::int64_t j,
                                   std::int64_t k) const {
    const int q = rank_of(grid, i, j, k);
    return first_row(grid, q) + box_of(grid, q).index(i, j, k);
}

std::vector<Box> Decomposition::output_pieces(const Grid& grid) const {
    std::vector<Box> pieces;
    for (int q = 0; q < ranks; ++q) {
        Box piece = box_of(grid, q);
        for (std::size_t a = 0; a < 3; ++a) {
            if (piece.upper[a] < grid.points()[a]) piece.upper[a] += 1;
        }
        pieces.push_back(piece);
    }
    return pieces;
}

std::vector<double> Decomposition::to_grid_order(const Grid& grid,
                                                 std::span<const double> gathered) const {
    if (slabs(grid)) return {gathered.begin(), gathered.end()};
    std::vector<double> field(static_cast<std::size_t>(grid.num_points()));
    for (int q = 0; q < ranks; ++q) {
        const Box box = box_of(grid, q);
        const std::int64_t first = first_row(grid, q);
        for (std::int64_t r = 0; r < box.size(); ++r) {
            const auto [i, j, k] = box.node(r);
            field[static_cast<std::size_t>(grid.index(i, j, k))] =
                gathered[static_cast<std::size_t>(first + r)];
        }
    }
    return field;
}

}  // namespace simrun::framework

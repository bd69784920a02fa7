#include "simrun/framework/discretisation/grid.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "simrun/framework/distributed/decomposition.hpp"

namespace simrun::framework {
namespace {

TEST(Grid, TwoDimensionalGeometry) {
    const Grid grid(2, {5, 3, 7}, {-1.0, 0.0, 4.0}, {1.0, 0.5, 9.0});
    EXPECT_EQ(grid.dimension(), 2);
    EXPECT_EQ(grid.points(2), 1);  // z collapses in 2D
    EXPECT_EQ(grid.num_points(), 15);
    EXPECT_DOUBLE_EQ(grid.spacing(0), 0.5);
    EXPECT_DOUBLE_EQ(grid.spacing(1), 0.25);
    EXPECT_DOUBLE_EQ(grid.coordinate(0, 4), 1.0);  // the last node sits on the upper bound
    EXPECT_DOUBLE_EQ(grid.coordinate(1, 1), 0.25);
    EXPECT_EQ(grid.index(2, 1), 7);  // x fastest
    EXPECT_EQ(grid.stride(1), 5);
    EXPECT_TRUE(grid.is_boundary(0, 1));
    EXPECT_TRUE(grid.is_boundary(2, 2));
    EXPECT_FALSE(grid.is_boundary(2, 1));
}

TEST(Grid, ThreeDimensionalNumbering) {
    const Grid grid(3, {4, 5, 6}, {0, 0, 0}, {3, 4, 5});
    EXPECT_EQ(grid.num_points(), 120);
    EXPECT_EQ(grid.index(1, 2, 3), 1 + 4 * (2 + 5 * 3));
    EXPECT_EQ(grid.stride(2), 20);
    EXPECT_DOUBLE_EQ(grid.spacing(2), 1.0);
    EXPECT_TRUE(grid.is_boundary(1, 2, 5));
    EXPECT_FALSE(grid.is_boundary(1, 2, 3));
}

TEST(Grid, RejectsImpossibleGrids) {
    EXPECT_THROW(Grid(1, {5, 5, 1}, {0, 0, 0}, {1, 1, 1}), std::invalid_argument);
    EXPECT_THROW(Grid(2, {2, 5, 1}, {0, 0, 0}, {1, 1, 1}), std::invalid_argument);
    EXPECT_THROW(Grid(2, {5, 5, 1}, {0, 1, 0}, {1, 1, 1}), std::invalid_argument);
    EXPECT_THROW(Grid(3, {100000, 100000, 100000}, {0, 0, 0}, {1, 1, 1}), std::invalid_argument);
}

// Slabs of whole planes over the ranks: consecutive, covering the grid once, at most one plane
// apart in size, each assembled with the planes beside it; fewer planes than ranks refused.
TEST(Decomposition, ConsecutiveUnevenSlabsCoverTheGrid) {
    for (const int dimension : {2, 3}) {
        const Grid grid(dimension, {5, 7, dimension == 3 ? 11 : 1}, {0, 0, 0}, {1, 1, 1});
        const std::int64_t planes = grid.all_planes().count();
        const auto axis = static_cast<std::size_t>(grid.slowest_axis());
        for (int ranks = 1; ranks <= planes; ++ranks) {
            std::int64_t next = 0, nodes = 0;
            for (int r = 0; r < ranks; ++r) {
                const Decomposition slab =
                    Decomposition::of(grid, r, Decomposition::slab_parts(grid, ranks));
                EXPECT_TRUE(slab.slabs(grid));
                EXPECT_EQ(slab.owned.lower[axis], next);
                EXPECT_GE(slab.owned.points(grid.slowest_axis()), planes / ranks);
                EXPECT_LE(slab.owned.points(grid.slowest_axis()), planes / ranks + 1);
                EXPECT_EQ(slab.assembled.lower[axis],
                          std::max<std::int64_t>(0, slab.owned.lower[axis] - 1));
                EXPECT_EQ(slab.assembled.upper[axis], std::min(planes, slab.owned.upper[axis] + 1));
                // The ranks' numbering is the grid's: a slab's first row is its first node.
                EXPECT_EQ(slab.first_row(grid, r), grid.first_node(slab.owned));
                next = slab.owned.upper[axis];
                nodes += slab.num_points();
            }
            EXPECT_EQ(next, planes);
            EXPECT_EQ(nodes, grid.num_points());
        }
        EXPECT_THROW(Decomposition::of(
                         grid, 0, Decomposition::slab_parts(grid, static_cast<int>(planes) + 1)),
                     std::invalid_argument);
    }
}

// A process grid of boxes: every node in exactly one rank's box, the one rank_of names; the
// ranks' numbering (first_row, row_of) a permutation of the grid's that takes the boxes in rank
// order, each x fastest, which to_grid_order undoes; a box's owned values cut from its
// assembled box; the output pieces widened by a node towards each next box.
TEST(Decomposition, BoxesOfAProcessGridCoverTheGridOnce) {
    struct Case {
        int dimension;
        std::array<std::int64_t, 3> points, parts;
    };
    for (const Case& c : {Case{2, {11, 9, 1}, {3, 2, 1}}, Case{2, {7, 8, 1}, {1, 4, 1}},
                          Case{3, {7, 6, 9}, {2, 2, 3}}, Case{3, {8, 5, 5}, {3, 1, 2}}}) {
        const Grid grid(c.dimension, c.points, {0, 0, 0}, {1, 1, 1});
        SCOPED_TRACE(Decomposition::describe_parts(grid, c.parts));
        const int ranks = static_cast<int>(c.parts[0] * c.parts[1] * c.parts[2]);
        std::vector<int> holder(static_cast<std::size_t>(grid.num_points()), -1);
        std::vector<std::int64_t> row(holder.size(), -1);
        std::int64_t first = 0;
        const Decomposition any = Decomposition::of(grid, 0, c.parts);
        const auto pieces = any.output_pieces(grid);
        for (int r = 0; r < ranks; ++r) {
            const Decomposition d = Decomposition::of(grid, r, c.parts);
            EXPECT_EQ(d.owned, any.box_of(grid, r));
            EXPECT_EQ(d.assembled, grid.with_neighbours(d.owned));
            EXPECT_EQ(d.first_row(grid, r), first);
            for (std::int64_t n = 0; n < d.owned.size(); ++n) {
                const auto [i, j, k] = d.owned.node(n);
                const auto g = static_cast<std::size_t>(grid.index(i, j, k));
                EXPECT_EQ(holder[g], -1) << "node " << g << " in two boxes";
                holder[g] = r;
                row[g] = first + n;
                EXPECT_EQ(d.rank_of(grid, i, j, k), r);
                EXPECT_EQ(d.row_of(grid, i, j, k), first + n);
            }
            first += d.owned.size();
            // The owned values of a field over the assembled box.
            std::vector<double> assembled(static_cast<std::size_t>(d.assembled.size()));
            for (std::int64_t n = 0; n < d.assembled.size(); ++n) {
                const auto [i, j, k] = d.assembled.node(n);
                assembled[static_cast<std::size_t>(n)] = static_cast<double>(grid.index(i, j, k));
            }
            const auto owned = d.owned_part(std::span<const double>(assembled));
            ASSERT_EQ(owned.size(), static_cast<std::size_t>(d.owned.size()));
            for (std::int64_t n = 0; n < d.owned.size(); ++n) {
                const auto [i, j, k] = d.owned.node(n);
                EXPECT_EQ(owned[static_cast<std::size_t>(n)],
                          static_cast<double>(grid.index(i, j, k)));
            }
            // The piece: the box and one node more along each axis where a box follows.
            const Box& piece = pieces[static_cast<std::size_t>(r)];
            for (std::size_t a = 0; a < 3; ++a) {
                EXPECT_EQ(piece.lower[a], d.owned.lower[a]);
                EXPECT_EQ(piece.upper[a], std::min(grid.points()[a], d.owned.upper[a] + 1));
            }
            // The values handed over for it: the owned nodes in their order, then the others
            // in the piece's order, counted on.
            std::int64_t other = d.owned.size();
            for (std::int64_t p = 0; p < piece.size(); ++p) {
                const auto [i, j, k] = piece.node(p);
                const bool own = d.owned.contains(i, j, k);
                EXPECT_EQ(Decomposition::piece_value_index(piece, d.owned, i, j, k),
                          own ? d.owned.index(i, j, k) : other++)
                    << "piece node " << p << " of rank " << r;
            }
            EXPECT_EQ(other, piece.size());
        }
        EXPECT_EQ(first, grid.num_points());
        EXPECT_EQ(std::count(holder.begin(), holder.end(), -1), 0);
        // to_grid_order undoes the ranks' numbering.
        std::vector<double> gathered(holder.size());
        for (std::size_t g = 0; g < row.size(); ++g) {
            gathered[static_cast<std::size_t>(row[g])] = static_cast<double>(g);
        }
        const std::vector<double> field = any.to_grid_order(grid, gathered);
        for (std::size_t g = 0; g < field.size(); ++g) EXPECT_EQ(field[g], static_cast<double>(g));
    }
}

// The process grid chosen for K ranks: the fewest nodes on the faces between boxes, each box
// at least `least` nodes along the axes it splits; none where no factorisation allows that.
TEST(Decomposition, BoxPartsHaveTheFewestFaceNodes) {
    const Grid square(2, {101, 101, 1}, {0, 0, 0}, {1, 1, 1});
    EXPECT_EQ(Decomposition::box_parts(square, 4), (std::array<std::int64_t, 3>{2, 2, 1}));
    EXPECT_EQ(Decomposition::box_parts(square, 6), (std::array<std::int64_t, 3>{2, 3, 1}));
    EXPECT_EQ(Decomposition::box_parts(square, 7), (std::array<std::int64_t, 3>{1, 7, 1}));
    const Grid cube(3, {65, 65, 65}, {0, 0, 0}, {1, 1, 1});
    EXPECT_EQ(Decomposition::box_parts(cube, 8), (std::array<std::int64_t, 3>{2, 2, 2}));
    EXPECT_EQ(Decomposition::box_parts(cube, 64), (std::array<std::int64_t, 3>{4, 4, 4}));
    // A long thin grid splits along its long axis.
    const Grid strip(2, {1001, 11, 1}, {0, 0, 0}, {1, 1, 1});
    EXPECT_EQ(Decomposition::box_parts(strip, 4), (std::array<std::int64_t, 3>{4, 1, 1}));
    EXPECT_FALSE(Decomposition::box_parts(Grid(2, {5, 5, 1}, {0, 0, 0}, {1, 1, 1}), 7));
}

}  // namespace
}  // namespace simrun::framework

#include "simrun/framework/discretisation/grid.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "simrun/framework/distributed/slab_decomposition.hpp"

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
TEST(SlabDecomposition, ConsecutiveUnevenSlabsCoverTheGrid) {
    for (const int dimension : {2, 3}) {
        const Grid grid(dimension, {5, 7, dimension == 3 ? 11 : 1}, {0, 0, 0}, {1, 1, 1});
        const std::int64_t planes = grid.all_planes().count();
        for (int ranks = 1; ranks <= planes; ++ranks) {
            std::int64_t next = 0, nodes = 0;
            for (int r = 0; r < ranks; ++r) {
                const SlabDecomposition slab = SlabDecomposition::of(grid, r, ranks);
                EXPECT_EQ(slab.owned.first, next);
                EXPECT_GE(slab.owned.count(), planes / ranks);
                EXPECT_LE(slab.owned.count(), planes / ranks + 1);
                EXPECT_EQ(slab.assembled.first, std::max<std::int64_t>(0, slab.owned.first - 1));
                EXPECT_EQ(slab.assembled.last, std::min(planes, slab.owned.last + 1));
                EXPECT_EQ(slab.owned_offset(grid),
                          (slab.owned.first - slab.assembled.first) * grid.plane_size());
                next = slab.owned.last;
                nodes += slab.num_points(grid);
            }
            EXPECT_EQ(next, planes);
            EXPECT_EQ(nodes, grid.num_points());
        }
        EXPECT_THROW(SlabDecomposition::of(grid, 0, static_cast<int>(planes) + 1),
                     std::invalid_argument);
    }
}

}  // namespace
}  // namespace simrun::framework

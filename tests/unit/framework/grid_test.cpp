#include "simrun/framework/discretisation/grid.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

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

}  // namespace
}  // namespace simrun::framework

#pragma once
// A uniform, node-centred structured grid in 2D or 3D.
//
// Nodes include the boundary: axis a has points[a] nodes at lower[a] + i * spacing(a),
// i = 0 .. points[a]-1, so the last node sits on upper[a]. In 2D the z axis has one node.
// Nodes are numbered x fastest, then y, then z (the order VTK image data uses), so a field is
// one contiguous array of num_points() values.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "simrun/solvers/boxes/box.hpp"

namespace simrun::framework {

enum class Side { left, right, bottom, top, front, back };  // -x, +x, -y, +y, -z, +z

// A run of whole planes across a grid's slowest axis (y in 2D, z in 3D): planes first to
// last - 1. Their nodes are contiguous in the grid's numbering, so a field on them is the slice
// of the grid's field from the range's first node (Grid::first_node) on. A part of the grid that
// can be assembled and checked on its own, in memory that does not grow with the grid.
struct PlaneRange {
    std::int64_t first = 0;
    std::int64_t last = 0;
    std::int64_t count() const { return last - first; }
};

// A box of a grid's nodes (the solver layer's Box: indices lower[a] .. upper[a] - 1 along each
// axis a, z 0 .. 0 in 2D). A box of whole planes (Grid::box(PlaneRange)) holds a run of the
// grid's numbering, its values the slice of the grid's field from its first node on; any other
// box's values are its own. The part of a grid a rank of a distributed run owns, or assembles
// with the nodes around it.
using solvers::Box;

class Grid {
public:
    // Throws std::invalid_argument when dimension is not 2 or 3, an axis has fewer than 3
    // nodes, an extent is empty or inverted, or the node count overflows.
    Grid(int dimension, std::array<std::int64_t, 3> points, std::array<double, 3> lower,
         std::array<double, 3> upper);

    int dimension() const { return dimension_; }
    std::int64_t points(int axis) const { return points_[axis]; }
    std::array<std::int64_t, 3> points() const { return points_; }
    double lower(int axis) const { return lower_[axis]; }
    double upper(int axis) const { return upper_[axis]; }
    // Distance between neighbouring nodes along an axis (1 for the unused z axis in 2D).
    double spacing(int axis) const { return spacing_[axis]; }
    std::array<double, 3> origin() const { return lower_; }
    std::array<double, 3> spacing() const { return spacing_; }
    std::int64_t num_points() const { return points_[0] * points_[1] * points_[2]; }

    std::int64_t index(std::int64_t i, std::int64_t j, std::int64_t k = 0) const {
        return i + points_[0] * (j + points_[1] * k);
    }
    // Stride between neighbours along an axis in the flat numbering.
    std::int64_t stride(int axis) const {
        return axis == 0 ? 1 : axis == 1 ? points_[0] : points_[0] * points_[1];
    }
    double coordinate(int axis, std::int64_t i) const {
        return lower_[axis] + static_cast<double>(i) * spacing_[axis];
    }
    bool is_boundary(std::int64_t i, std::int64_t j, std::int64_t k = 0) const;

    // The axis PlaneRange counts planes along (the slowest), and the nodes of one plane.
    int slowest_axis() const { return dimension_ - 1; }
    std::int64_t plane_size() const { return stride(slowest_axis()); }
    PlaneRange all_planes() const { return {0, points_[slowest_axis()]}; }
    std::int64_t first_node(PlaneRange planes) const { return planes.first * plane_size(); }
    std::int64_t num_points(PlaneRange planes) const { return planes.count() * plane_size(); }
    // `planes` widened by one plane on each side that has one: every node of `planes` has all
    // its stencil neighbours in it.
    PlaneRange with_neighbours(PlaneRange planes) const;

    // The whole grid as a box, and the box of whole planes `planes`.
    Box box() const { return box(all_planes()); }
    Box box(PlaneRange planes) const;
    // Whether `box` is whole planes (its values a slice of the grid's field from first_node()).
    bool whole_planes(const Box& box) const;
    // The grid's index of a box's first node.
    std::int64_t first_node(const Box& box) const {
        return index(box.lower[0], box.lower[1], box.lower[2]);
    }
    // `box` widened by one node on each side that has one: every node of `box` has all its
    // stencil neighbours (diagonal ones too) in it.
    Box with_neighbours(const Box& box) const;
    // Consecutive ranges covering the grid, each of at most `nodes` nodes (and at least one
    // plane), in order.
    std::vector<PlaneRange> plane_blocks(std::int64_t nodes) const;

private:
    int dimension_;
    std::array<std::int64_t, 3> points_;
    std::array<double, 3> lower_;
    std::array<double, 3> upper_;
    std::array<double, 3> spacing_;
};

}  // namespace simrun::framework

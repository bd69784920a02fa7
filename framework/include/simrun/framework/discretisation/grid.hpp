#pragma once
// A uniform, node-centred structured grid in 2D or 3D.
//
// Nodes include the boundary: axis a has points[a] nodes at lower[a] + i * spacing(a),
// i = 0 .. points[a]-1, so the last node sits on upper[a]. In 2D the z axis has one node.
// Nodes are numbered x fastest, then y, then z (the order VTK image data uses), so a field is
// one contiguous array of num_points() values.
#include <array>
#include <cstdint>

namespace simrun::framework {

enum class Side { left, right, bottom, top, front, back };  // -x, +x, -y, +y, -z, +z

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

private:
    int dimension_;
    std::array<std::int64_t, 3> points_;
    std::array<double, 3> lower_;
    std::array<double, 3> upper_;
    std::array<double, 3> spacing_;
};

}  // namespace simrun::framework

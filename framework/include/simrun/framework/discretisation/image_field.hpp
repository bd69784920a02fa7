#pragma once
// A grayscale picture read from a PNG file and seen as a function on the unit square, used as an
// initial condition (the seed paper heated an image).
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "simrun/framework/discretisation/grid.hpp"

namespace simrun::framework {

// Pixel values of a grayscale image, row 0 at the top of the picture (the order of the file).
class GrayImage {
public:
    // Reads a PNG file of any colour type and bit depth. Gray is used as stored; RGB becomes the
    // luminance 0.2126 R + 0.7152 G + 0.0722 B of the stored values; a palette is looked up first;
    // alpha and transparency are ignored; no gamma or colour profile is applied. Values are
    // scaled to [0, 1] (stored value / 255, or / 65535 for 16-bit files).
    // Throws InputError naming the path when the file cannot be opened, is not a PNG, is corrupt
    // or truncated, or its width or height is outside 1 .. max_side, it has more than
    // max_pixels pixels, or decoding it needs more memory than is available.
    static GrayImage load(const std::filesystem::path& path);

    static constexpr std::int64_t max_side = 100000;
    // At most this many pixels (10000 x 10000): past it a grid samples far below the image's
    // resolution, and decoding costs gigabytes.
    static constexpr std::int64_t max_pixels = 100'000'000;

    // An image from width * height values in row-major order, top row first, used as given.
    // Throws std::invalid_argument when width or height is < 1 or the value count differs.
    GrayImage(std::int64_t width, std::int64_t height, std::vector<double> values);

    std::int64_t width() const { return width_; }
    std::int64_t height() const { return height_; }

    // The value of pixel (col, row), row 0 at the top; throws std::out_of_range outside the image.
    double at(std::int64_t col, std::int64_t row) const;

    // Bilinear interpolation at normalised coordinates: u = 0 is the left edge and u = 1 the
    // right edge, v = 0 the BOTTOM edge and v = 1 the top, so the picture is upright on a grid
    // whose y axis points up. Pixel (col, row) has its centre at u = (col + 0.5) / width,
    // v = 1 - (row + 0.5) / height; outside the outermost centres (including u, v outside
    // [0, 1]) the nearest edge pixels are used. Throws std::invalid_argument for non-finite u, v.
    double sample(double u, double v) const;

private:
    double pixel(std::int64_t col, std::int64_t row) const {
        return values_[static_cast<std::size_t>(row * width_ + col)];
    }

    std::int64_t width_;
    std::int64_t height_;
    std::vector<double> values_;  // row-major, top row first
};

// values[index(i, j, k)] = low + (high - low) * image.sample(u, v) at every node, with
// u = (x - x0) / (x1 - x0) and v = (y - y0) / (y1 - y0) over the grid's extent (computed as
// i / (nx - 1) and j / (ny - 1), so the edges are exact); every z layer of a 3D grid gets the
// same values. On `box` only (values[box.index(i, j, k)]) when given. Throws
// std::invalid_argument when values does not have box.size() entries.
void sample_image(const Grid& grid, const Box& box, const GrayImage& image, double low,
                  double high, std::span<double> values);
inline void sample_image(const Grid& grid, const GrayImage& image, double low, double high,
                         std::span<double> values) {
    sample_image(grid, grid.box(), image, low, high, values);
}

}  // namespace simrun::framework

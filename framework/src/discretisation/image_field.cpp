#include "simrun/framework/discretisation/image_field.hpp"

#include <png.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/solvers/system/input_file.hpp"
#include "simrun/solvers/system/memory_budget.hpp"

namespace simrun::framework {
namespace {

// libpng reports an error by calling the error function, which must not return: ours records
// the message and longjmps back to the setjmp of read_info() or read_pixels(). A longjmp skips
// destructors, so those two functions own no object with one; the file, the libpng structures
// and the pixel buffers belong to load(), which calls no setjmp and cleans up when it throws.
struct PngState {
    png_structp png = nullptr;
    png_infop info = nullptr;
    std::array<char, 256> error{};  // libpng's message for the error that stopped reading
};

[[noreturn]] void record_png_error(png_structp png, png_const_charp message) {
    auto* state = static_cast<PngState*>(png_get_error_ptr(png));
    std::snprintf(state->error.data(), state->error.size(), "%s", message);
    png_longjmp(png, 1);
}

// Warnings concern ancillary chunks (text, colour profiles) that the pixel values do not use.
void ignore_png_warning(png_structp, png_const_charp) {}

// Owns the libpng read structures; not movable, since libpng keeps the address of its state.
class PngReader {
public:
    PngReader() {
        state_.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &state_, record_png_error,
                                            ignore_png_warning);
        if (state_.png != nullptr) state_.info = png_create_info_struct(state_.png);
        if (state_.info == nullptr) {
            png_destroy_read_struct(&state_.png, nullptr, nullptr);
            throw std::bad_alloc();
        }
    }
    ~PngReader() { png_destroy_read_struct(&state_.png, &state_.info, nullptr); }
    PngReader(const PngReader&) = delete;
    PngReader& operator=(const PngReader&) = delete;

    PngState& state() { return state_; }

private:
    PngState state_;
};

struct FileCloser {
    void operator()(std::FILE* file) const { std::fclose(file); }
};

constexpr std::size_t signature_bytes = 8;

// Reads the chunks before the image data (the 8 signature bytes are already consumed).
// Returns false when libpng reported an error.
bool read_info(PngState& state, std::FILE* file) {
    if (setjmp(png_jmpbuf(state.png)) != 0) return false;
    png_init_io(state.png, file);
    png_set_sig_bytes(state.png, static_cast<int>(signature_bytes));
    png_read_info(state.png, state.info);
    return true;
}

// Converts every colour type to 1 (gray) or 3 (RGB) channels of 8 or 16 bits and reads all
// rows (of row_bytes each) into rows. Returns false when libpng reported an error.
bool read_pixels(PngState& state, png_bytepp rows, std::size_t row_bytes) {
    if (setjmp(png_jmpbuf(state.png)) != 0) return false;
    const png_byte color_type = png_get_color_type(state.png, state.info);
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(state.png);
    if (color_type == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(state.png, state.info) < 8) {
        png_set_expand_gray_1_2_4_to_8(state.png);
    }
    png_set_strip_alpha(state.png);
    png_set_interlace_handling(state.png);
    png_read_update_info(state.png, state.info);
    if (png_get_rowbytes(state.png, state.info) != row_bytes) {
        png_error(state.png, "unexpected row size after the colour conversion");
    }
    png_read_image(state.png, rows);
    png_read_end(state.png, nullptr);
    return true;
}

}  // namespace

GrayImage GrayImage::load(const std::filesystem::path& path) {
    const std::string place = path.string();
    if (const auto problem = solvers::input_file_problem(path)) {
        throw InputError(place, "", "cannot open the image: " + *problem);
    }
    const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(place.c_str(), "rb"));
    if (!file) {
        const std::error_code error(errno, std::generic_category());
        throw InputError(place, "", "cannot open the image: " + error.message());
    }
    std::array<png_byte, signature_bytes> signature{};
    const std::size_t read = std::fread(signature.data(), 1, signature.size(), file.get());
    if (std::ferror(file.get()) != 0) {
        const std::error_code error(errno, std::generic_category());
        throw InputError(place, "", "cannot read the image: " + error.message());
    }
    if (read != signature.size() || png_sig_cmp(signature.data(), 0, signature.size()) != 0) {
        throw InputError(place, "", "not a PNG image (no PNG signature at the start)");
    }

    PngReader reader;
    PngState& state = reader.state();
    const auto fail = [&] {
        return InputError(place, "",
                          std::string("corrupt or truncated PNG image: ") + state.error.data());
    };
    if (!read_info(state, file.get())) throw fail();

    const auto width = static_cast<std::int64_t>(png_get_image_width(state.png, state.info));
    const auto height = static_cast<std::int64_t>(png_get_image_height(state.png, state.info));
    if (width < 1 || height < 1 || width > max_side || height > max_side) {
        throw InputError(place, "",
                         "the image is " + std::to_string(width) + " x " + std::to_string(height) +
                             " pixels; width and height must be 1 to " + std::to_string(max_side));
    }
    // Layout after read_pixels' conversion: a palette becomes 8-bit RGB, gray below 8 bits
    // becomes 8-bit gray, alpha is dropped.
    const png_byte color_type = png_get_color_type(state.png, state.info);
    const int bit_depth = png_get_bit_depth(state.png, state.info);
    const std::size_t channels = (color_type & PNG_COLOR_MASK_COLOR) != 0 ? 3 : 1;
    const std::size_t bytes_per_sample = bit_depth == 16 ? 2 : 1;
    const auto columns = static_cast<std::size_t>(width);
    const std::size_t row_bytes = columns * channels * bytes_per_sample;
    // A small file may decode to gigabytes (a PNG compresses a flat image ~1000:1): the decoded
    // size is checked before it is allocated, against a pixel limit and the memory available.
    const double pixels = static_cast<double>(width) * static_cast<double>(height);
    if (pixels > max_pixels) {
        throw InputError(place, "",
                         "the image is " + std::to_string(width) + " x " + std::to_string(height) +
                             " pixels, more than the " + std::to_string(max_pixels / 1'000'000) +
                             " million pixels an image may have; scale it down");
    }
    const double decoded_bytes =
        static_cast<double>(row_bytes) * static_cast<double>(height) + 8.0 * pixels;
    if (const auto problem = solvers::memory_problem(decoded_bytes)) {
        throw InputError(place, "",
                         "the image is " + std::to_string(width) + " x " + std::to_string(height) +
                             " pixels; decoding it " + *problem);
    }

    std::vector<png_byte> bytes(row_bytes * static_cast<std::size_t>(height));
    std::vector<png_bytep> rows(static_cast<std::size_t>(height));
    for (std::size_t r = 0; r < rows.size(); ++r) rows[r] = bytes.data() + r * row_bytes;
    if (!read_pixels(state, rows.data(), row_bytes)) throw fail();

    const double full_scale = bytes_per_sample == 2 ? 65535.0 : 255.0;
    const auto stored = [&](std::size_t index) -> unsigned {
        if (bytes_per_sample == 1) return bytes[index];
        return (unsigned{bytes[2 * index]} << 8) | bytes[2 * index + 1];  // big-endian
    };
    std::vector<double> values(columns * static_cast<std::size_t>(height));
    for (std::size_t p = 0; p < values.size(); ++p) {
        if (channels == 1) {
            values[p] = stored(p) / full_scale;
            continue;
        }
        const unsigned red = stored(3 * p), green = stored(3 * p + 1), blue = stored(3 * p + 2);
        if (red == green && red == blue) {
            values[p] = red / full_scale;  // gray stored as RGB stays exact
        } else {
            // Y = 0.2126 R + 0.7152 G + 0.0722 B (ITU-R BT.709 luminance weights).
            const double luminance = 0.2126 * red + 0.7152 * green + 0.0722 * blue;
            values[p] = std::min(luminance / full_scale, 1.0);
        }
    }
    return GrayImage(width, height, std::move(values));
}

GrayImage::GrayImage(std::int64_t width, std::int64_t height, std::vector<double> values)
    : width_(width), height_(height), values_(std::move(values)) {
    if (width < 1 || height < 1) {
        throw std::invalid_argument("GrayImage: width and height must be >= 1, got " +
                                    std::to_string(width) + " x " + std::to_string(height));
    }
    if (static_cast<std::int64_t>(values_.size()) != width * height) {
        throw std::invalid_argument("GrayImage: " + std::to_string(values_.size()) +
                                    " values for a " + std::to_string(width) + " x " +
                                    std::to_string(height) + " image");
    }
}

double GrayImage::at(std::int64_t col, std::int64_t row) const {
    if (col < 0 || col >= width_ || row < 0 || row >= height_) {
        throw std::out_of_range("GrayImage::at: pixel (" + std::to_string(col) + ", " +
                                std::to_string(row) + ") outside a " + std::to_string(width_) +
                                " x " + std::to_string(height_) + " image");
    }
    return pixel(col, row);
}

double GrayImage::sample(double u, double v) const {
    if (!std::isfinite(u) || !std::isfinite(v)) {
        throw std::invalid_argument("GrayImage::sample: coordinates must be finite");
    }
    // Continuous pixel coordinates with centres on integers: x counts columns from the left,
    // y counts rows from the bottom; clamping to the outermost centres repeats the edge pixels.
    const double x =
        std::clamp(u * static_cast<double>(width_) - 0.5, 0.0, static_cast<double>(width_ - 1));
    const double y =
        std::clamp(v * static_cast<double>(height_) - 0.5, 0.0, static_cast<double>(height_ - 1));
    const auto c0 = static_cast<std::int64_t>(x);  // floor, since x >= 0
    const auto b0 = static_cast<std::int64_t>(y);
    const std::int64_t c1 = std::min(c0 + 1, width_ - 1);
    const std::int64_t b1 = std::min(b0 + 1, height_ - 1);
    const double fx = x - static_cast<double>(c0);
    const double fy = y - static_cast<double>(b0);
    // Row b from the bottom is row height - 1 - b from the top.
    const std::int64_t r0 = height_ - 1 - b0;
    const std::int64_t r1 = height_ - 1 - b1;
    const double lower = (1.0 - fx) * pixel(c0, r0) + fx * pixel(c1, r0);
    const double upper = (1.0 - fx) * pixel(c0, r1) + fx * pixel(c1, r1);
    return (1.0 - fy) * lower + fy * upper;
}

void sample_image(const Grid& grid, const Box& box, const GrayImage& image, double low,
                  double high, std::span<double> values) {
    if (static_cast<std::int64_t>(values.size()) != box.size()) {
        throw std::invalid_argument("sample_image: " + std::to_string(values.size()) +
                                    " values for " + std::to_string(box.size()) + " nodes");
    }
    const std::int64_t nx = grid.points(0);
    const std::int64_t ny = grid.points(1);
    // The box's first z layer; in 3D every further layer repeats it.
    const std::int64_t k0 = box.lower[2];
    for (std::int64_t j = box.lower[1]; j < box.upper[1]; ++j) {
        // v = (y_j - y0) / (y1 - y0) = j / (ny - 1), likewise u.
        const double v = static_cast<double>(j) / static_cast<double>(ny - 1);
        for (std::int64_t i = box.lower[0]; i < box.upper[0]; ++i) {
            const double u = static_cast<double>(i) / static_cast<double>(nx - 1);
            values[static_cast<std::size_t>(box.index(i, j, k0))] =
                low + (high - low) * image.sample(u, v);
        }
    }
    const auto layer = values.first(static_cast<std::size_t>(box.points(0) * box.points(1)));
    for (std::int64_t k = k0 + 1; k < box.upper[2]; ++k) {
        std::copy(
            layer.begin(), layer.end(),
            values.begin() + static_cast<std::ptrdiff_t>(box.index(box.lower[0], box.lower[1], k)));
    }
}

}  // namespace simrun::framework

// GrayImage: PNG decoding of every colour type, bilinear sampling with the picture upright on
// the grid, and the input errors. The PNG files are written here with libpng.
#include "simrun/framework/discretisation/image_field.hpp"

#include <gtest/gtest.h>
#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "simrun/framework/config/input_error.hpp"

namespace simrun::framework {
namespace {

namespace fs = std::filesystem;

// A PNG to write: rows holds the raw samples as the file stores them (top row first, 16-bit
// samples big-endian, samples below 8 bits packed), row_bytes each.
struct PngSpec {
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    int bit_depth = 8;
    int color_type = PNG_COLOR_TYPE_GRAY;
    bool interlaced = false;
    std::vector<png_byte> rows{};
    std::vector<png_color> palette{};
    std::vector<png_byte> palette_alpha{};  // tRNS entries of a palette image
};

std::vector<png_byte> big_endian_16(std::initializer_list<unsigned> samples) {
    std::vector<png_byte> bytes;
    for (const unsigned s : samples) {
        bytes.push_back(static_cast<png_byte>(s >> 8));
        bytes.push_back(static_cast<png_byte>(s & 0xff));
    }
    return bytes;
}

struct FileCloser {
    void operator()(std::FILE* file) const { std::fclose(file); }
};

// libpng's default error handler longjmps here; this frame owns nothing with a destructor.
bool encode_png(png_structp png, png_infop info, std::FILE* file, const PngSpec* spec,
                png_bytepp rows) {
    if (setjmp(png_jmpbuf(png)) != 0) return false;
    png_init_io(png, file);
    png_set_IHDR(png, info, spec->width, spec->height, spec->bit_depth, spec->color_type,
                 spec->interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (!spec->palette.empty()) {
        png_set_PLTE(png, info, spec->palette.data(), static_cast<int>(spec->palette.size()));
    }
    if (!spec->palette_alpha.empty()) {
        png_set_tRNS(png, info, spec->palette_alpha.data(),
                     static_cast<int>(spec->palette_alpha.size()), nullptr);
    }
    png_write_info(png, info);
    png_write_image(png, rows);
    png_write_end(png, nullptr);
    return true;
}

void write_png(const fs::path& path, const PngSpec& spec) {
    std::vector<png_byte> data = spec.rows;
    const std::size_t row_bytes = data.size() / spec.height;
    ASSERT_EQ(row_bytes * spec.height, data.size());
    std::vector<png_bytep> rows(spec.height);
    for (std::size_t r = 0; r < rows.size(); ++r) rows[r] = data.data() + r * row_bytes;
    const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.string().c_str(), "wb"));
    ASSERT_TRUE(file) << path;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    ASSERT_NE(png, nullptr);
    png_infop info = png_create_info_struct(png);
    const bool written = info != nullptr && encode_png(png, info, file.get(), &spec, rows.data());
    png_destroy_write_struct(&png, &info);
    ASSERT_TRUE(written) << "libpng could not write " << path;
}

std::vector<char> read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::vector<char>& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The message of the InputError that load throws, or a failure when it throws none.
std::string load_error(const fs::path& path) {
    try {
        GrayImage::load(path);
    } catch (const InputError& error) {
        return error.what();
    }
    ADD_FAILURE() << "no InputError for " << path;
    return "";
}

class ImageFieldTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
        directory_ =
            fs::temp_directory_path() / ("simrun_image_field_" + std::string(test->name()) + "_" +
                                         std::to_string(std::random_device{}()));
        fs::create_directories(directory_);
    }
    void TearDown() override { fs::remove_all(directory_); }

    fs::path path(const std::string& name) const { return directory_ / name; }

    // A 4 x 2 8-bit gray image with four distinct corners:
    //     top row     0   51  102  153
    //     bottom row 255  204  170   17
    GrayImage corners_image() {
        const fs::path file = path("corners.png");
        write_png(file, {.width = 4, .height = 2, .rows = {0, 51, 102, 153, 255, 204, 170, 17}});
        return GrayImage::load(file);
    }

private:
    fs::path directory_;
};

TEST_F(ImageFieldTest, ReadsEightBitGrayExactly) {
    const GrayImage image = corners_image();
    ASSERT_EQ(image.width(), 4);
    ASSERT_EQ(image.height(), 2);
    EXPECT_EQ(image.at(0, 0), 0.0);
    EXPECT_EQ(image.at(1, 0), 51.0 / 255.0);
    EXPECT_EQ(image.at(3, 0), 153.0 / 255.0);
    EXPECT_EQ(image.at(0, 1), 1.0);
    EXPECT_EQ(image.at(3, 1), 17.0 / 255.0);
    EXPECT_THROW(image.at(4, 0), std::out_of_range);
    EXPECT_THROW(image.at(0, -1), std::out_of_range);
}

TEST_F(ImageFieldTest, ReadsSixteenBitGrayExactly) {
    const fs::path file = path("gray16.png");
    write_png(
        file,
        {.width = 2, .height = 2, .bit_depth = 16, .rows = big_endian_16({0, 65535, 1000, 40000})});
    const GrayImage image = GrayImage::load(file);
    EXPECT_EQ(image.at(0, 0), 0.0);
    EXPECT_EQ(image.at(1, 0), 1.0);
    EXPECT_EQ(image.at(0, 1), 1000.0 / 65535.0);
    EXPECT_EQ(image.at(1, 1), 40000.0 / 65535.0);
}

TEST_F(ImageFieldTest, ExpandsOneBitGray) {
    const fs::path file = path("gray1.png");
    write_png(file, {.width = 8, .height = 1, .bit_depth = 1, .rows = {0b10110001}});
    const GrayImage image = GrayImage::load(file);
    const std::vector<double> expected = {1, 0, 1, 1, 0, 0, 0, 1};
    for (std::int64_t c = 0; c < 8; ++c) EXPECT_EQ(image.at(c, 0), expected[c]) << c;
}

TEST_F(ImageFieldTest, IgnoresAlphaOfGrayAlpha) {
    const fs::path file = path("gray_alpha.png");
    write_png(file, {.width = 2,
                     .height = 1,
                     .color_type = PNG_COLOR_TYPE_GRAY_ALPHA,
                     .rows = {128, 7, 255, 0}});
    const GrayImage image = GrayImage::load(file);
    EXPECT_EQ(image.at(0, 0), 128.0 / 255.0);
    EXPECT_EQ(image.at(1, 0), 1.0);
}

TEST_F(ImageFieldTest, ConvertsRgbToLuminance) {
    const fs::path file = path("rgb.png");
    write_png(file, {.width = 3,
                     .height = 1,
                     .color_type = PNG_COLOR_TYPE_RGB,
                     .rows = {255, 0, 0, 10, 200, 30, 77, 77, 77}});
    const GrayImage image = GrayImage::load(file);
    EXPECT_NEAR(image.at(0, 0), 0.2126, 1e-15);
    EXPECT_NEAR(image.at(1, 0), (0.2126 * 10 + 0.7152 * 200 + 0.0722 * 30) / 255, 1e-15);
    EXPECT_EQ(image.at(2, 0), 77.0 / 255.0);  // gray stays exact
}

TEST_F(ImageFieldTest, ConvertsSixteenBitRgbaIgnoringAlpha) {
    const fs::path file = path("rgba16.png");
    write_png(file, {.width = 2,
                     .height = 1,
                     .bit_depth = 16,
                     .color_type = PNG_COLOR_TYPE_RGB_ALPHA,
                     .rows = big_endian_16({0, 0, 65535, 0, 30000, 50000, 20000, 65535})});
    const GrayImage image = GrayImage::load(file);
    EXPECT_NEAR(image.at(0, 0), 0.0722, 1e-15);
    EXPECT_NEAR(image.at(1, 0), (0.2126 * 30000 + 0.7152 * 50000 + 0.0722 * 20000) / 65535, 1e-15);
}

TEST_F(ImageFieldTest, ConvertsEightBitRgba) {
    const fs::path file = path("rgba8.png");
    write_png(file, {.width = 2,
                     .height = 1,
                     .color_type = PNG_COLOR_TYPE_RGB_ALPHA,
                     .rows = {0, 255, 0, 0, 100, 100, 100, 255}});
    const GrayImage image = GrayImage::load(file);
    EXPECT_NEAR(image.at(0, 0), 0.7152, 1e-15);
    EXPECT_EQ(image.at(1, 0), 100.0 / 255.0);
}

TEST_F(ImageFieldTest, LooksUpPaletteWithTransparency) {
    // Two bits per index, packed: indices 2 1 0 3 in one byte.
    const fs::path file = path("palette.png");
    write_png(file, {.width = 4,
                     .height = 1,
                     .bit_depth = 2,
                     .color_type = PNG_COLOR_TYPE_PALETTE,
                     .rows = {0b10'01'00'11},
                     .palette = {{0, 0, 0}, {255, 255, 255}, {0, 255, 0}, {51, 51, 51}},
                     .palette_alpha = {0, 128}});
    const GrayImage image = GrayImage::load(file);
    ASSERT_EQ(image.width(), 4);
    EXPECT_NEAR(image.at(0, 0), 0.7152, 1e-15);
    EXPECT_EQ(image.at(1, 0), 1.0);
    EXPECT_EQ(image.at(2, 0), 0.0);
    EXPECT_EQ(image.at(3, 0), 0.2);
}

TEST_F(ImageFieldTest, ReadsInterlacedImages) {
    PngSpec spec{.width = 5, .height = 5, .interlaced = true};
    for (png_byte p = 0; p < 25; ++p) spec.rows.push_back(static_cast<png_byte>(10 * p));
    const fs::path file = path("interlaced.png");
    write_png(file, spec);
    const GrayImage image = GrayImage::load(file);
    for (std::int64_t r = 0; r < 5; ++r) {
        for (std::int64_t c = 0; c < 5; ++c) {
            EXPECT_EQ(image.at(c, r), static_cast<double>(10 * (5 * r + c)) / 255.0);
        }
    }
}

TEST_F(ImageFieldTest, SamplesPixelCentresExactlyAndUpright) {
    const GrayImage image = corners_image();
    // Pixel (col, row) has its centre at u = (col + 0.5) / 4, v = 1 - (row + 0.5) / 2.
    for (std::int64_t row = 0; row < 2; ++row) {
        for (std::int64_t col = 0; col < 4; ++col) {
            const double u = (static_cast<double>(col) + 0.5) / 4.0;
            const double v = 1.0 - (static_cast<double>(row) + 0.5) / 2.0;
            EXPECT_EQ(image.sample(u, v), image.at(col, row)) << col << ", " << row;
        }
    }
}

TEST_F(ImageFieldTest, InterpolatesBilinearlyBetweenCentres) {
    const GrayImage image = corners_image();
    // Midway between the two left columns, level with the bottom row: (255 + 204) / 2.
    EXPECT_DOUBLE_EQ(image.sample(0.25, 0.25), 229.5 / 255.0);
    // u = 0.3, v = 0.6: x = 0.7 past column 0, y = 0.7 up from the bottom row:
    //   bottom 0.3 * 255 + 0.7 * 204 = 219.3, top 0.3 * 0 + 0.7 * 51 = 35.7,
    //   0.3 * 219.3 + 0.7 * 35.7 = 90.78 = 0.356 * 255.
    EXPECT_NEAR(image.sample(0.3, 0.6), 0.356, 1e-14);
    // At the middle of the image: the mean of columns 1 and 2, (51 + 102 + 204 + 170) / 4.
    EXPECT_DOUBLE_EQ(image.sample(0.5, 0.5), 131.75 / 255.0);
}

TEST_F(ImageFieldTest, ClampsAtTheEdges) {
    const GrayImage image = corners_image();
    EXPECT_EQ(image.sample(0.0, 0.0), 1.0);                  // bottom left: 255
    EXPECT_EQ(image.sample(1.0, 0.0), 17.0 / 255.0);         // bottom right
    EXPECT_EQ(image.sample(0.0, 1.0), 0.0);                  // top left
    EXPECT_EQ(image.sample(1.0, 1.0), 153.0 / 255.0);        // top right
    EXPECT_EQ(image.sample(0.1, 0.9), 0.0);                  // inside the outer half pixel
    EXPECT_EQ(image.sample(-3.0, 7.0), 0.0);                 // far outside: still the corner
    EXPECT_EQ(image.sample(0.0, 0.5), 127.5 / 255.0);        // left edge, between the rows
    EXPECT_DOUBLE_EQ(image.sample(0.5, 2.0), 76.5 / 255.0);  // top edge, between columns 1, 2
    EXPECT_THROW(image.sample(std::nan(""), 0.5), std::invalid_argument);
}

TEST(GrayImage, SinglePixelIsConstant) {
    const GrayImage image(1, 1, {0.25});
    EXPECT_EQ(image.sample(0.0, 0.0), 0.25);
    EXPECT_EQ(image.sample(0.7, 0.2), 0.25);
    EXPECT_THROW(GrayImage(2, 2, {0.0, 1.0}), std::invalid_argument);
    EXPECT_THROW(GrayImage(0, 1, {}), std::invalid_argument);
}

TEST(SampleImage, MapsTheImageOntoTheGridExtent) {
    // top row: 0.2 0.6, bottom row: 0.0 1.0
    const GrayImage image(2, 2, {0.2, 0.6, 0.0, 1.0});
    const Grid grid(2, {3, 3, 1}, {-1.0, 2.0, 0.0}, {3.0, 4.0, 0.0});
    std::vector<double> values(9);
    sample_image(grid, image, -1.0, 3.0, values);  // low + 4 * s
    // Nodes on the edges clamp to edge pixels; the middle node is the mean of all four.
    const std::vector<double> expected = {-1.0, 1.0, 3.0,   // y = y0: bottom row 0.0, 0.5, 1.0
                                          -0.6, 0.8, 2.2,   // middle: 0.1, 0.45, 0.8
                                          -0.2, 0.6, 1.4};  // y = y1: top row 0.2, 0.4, 0.6
    for (std::size_t n = 0; n < values.size(); ++n) EXPECT_NEAR(values[n], expected[n], 1e-15) << n;
}

TEST(SampleImage, TopBrightImageIsHotAtTheTopOfTheGrid) {
    std::vector<double> pixels(8 * 4, 0.0);
    std::fill(pixels.begin(), pixels.begin() + 8, 1.0);  // row 0: the top of the picture
    const GrayImage image(8, 4, pixels);
    const Grid grid(2, {9, 17, 1}, {0.0, -1.0, 0.0}, {2.0, 1.0, 0.0});
    std::vector<double> values(static_cast<std::size_t>(grid.num_points()));
    sample_image(grid, image, 2.0, 5.0, values);
    for (std::int64_t i = 0; i < 9; ++i) {
        EXPECT_EQ(values[static_cast<std::size_t>(grid.index(i, 16))], 5.0) << i;  // y = y1
        EXPECT_EQ(values[static_cast<std::size_t>(grid.index(i, 0))], 2.0) << i;   // y = y0
    }
}

TEST(SampleImage, RepeatsTheLayerAlongZAndChecksTheSize) {
    const GrayImage image(3, 2, {0.0, 0.5, 1.0, 0.25, 0.75, 0.125});
    const Grid plane(2, {5, 4, 1}, {0, 0, 0}, {1, 1, 0});
    const Grid box(3, {5, 4, 3}, {0, 0, -1}, {1, 1, 1});
    std::vector<double> layer(static_cast<std::size_t>(plane.num_points()));
    std::vector<double> values(static_cast<std::size_t>(box.num_points()));
    sample_image(plane, image, 0.0, 1.0, layer);
    sample_image(box, image, 0.0, 1.0, values);
    for (std::int64_t k = 0; k < 3; ++k) {
        for (std::int64_t j = 0; j < 4; ++j) {
            for (std::int64_t i = 0; i < 5; ++i) {
                EXPECT_EQ(values[static_cast<std::size_t>(box.index(i, j, k))],
                          layer[static_cast<std::size_t>(plane.index(i, j))]);
            }
        }
    }
    std::vector<double> wrong(7);
    EXPECT_THROW(sample_image(plane, image, 0.0, 1.0, wrong), std::invalid_argument);
}

// The CRC-32 of PNG chunks (ISO 3309), for the crafted header below.
std::uint32_t png_crc(const char* bytes, std::size_t count) {
    std::uint32_t crc = 0xffffffffu;
    for (std::size_t i = 0; i < count; ++i) {
        crc ^= static_cast<unsigned char>(bytes[i]);
        for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return crc ^ 0xffffffffu;
}

// A decompression bomb: a few hundred bytes whose header declares 30000 x 30000 pixels (a flat
// image of that size compresses to under a megabyte). It is refused from the header, before
// anything of that size is allocated.
TEST_F(ImageFieldTest, AHugeImageIsRefusedFromItsHeader) {
    const fs::path file = path("bomb.png");
    write_png(file, {.width = 2, .height = 2, .rows = {0, 1, 2, 3}});
    std::vector<char> bytes = read_bytes(file);
    // IHDR: length (4) and type (4) after the 8-byte signature, then width and height
    // big-endian at offsets 16 and 20, the chunk's CRC (over type and data) at 29.
    for (const int offset : {16, 20}) {
        const std::uint32_t side = 30000;
        for (int k = 0; k < 4; ++k) {
            bytes[static_cast<std::size_t>(offset + k)] = static_cast<char>(side >> (24 - 8 * k));
        }
    }
    const std::uint32_t crc = png_crc(bytes.data() + 12, 17);
    for (int k = 0; k < 4; ++k)
        bytes[static_cast<std::size_t>(29 + k)] = static_cast<char>(crc >> (24 - 8 * k));
    write_bytes(file, bytes);
    const std::string message = load_error(file);
    EXPECT_NE(message.find("the image is 30000 x 30000 pixels, more than the 100 million pixels"),
              std::string::npos)
        << message;
}

TEST_F(ImageFieldTest, MissingFileNamesThePath) {
    const fs::path missing = path("no_such_image.png");
    const std::string message = load_error(missing);
    EXPECT_NE(message.find(missing.string()), std::string::npos) << message;
    EXPECT_NE(message.find("cannot open"), std::string::npos) << message;
}

TEST_F(ImageFieldTest, RejectsATextFileNamedPng) {
    const fs::path file = path("text.png");
    std::ofstream(file) << "This is not an image.\n";
    const std::string message = load_error(file);
    EXPECT_NE(message.find(file.string()), std::string::npos) << message;
    EXPECT_NE(message.find("not a PNG"), std::string::npos) << message;
    std::ofstream(path("short.png")) << "\x89PN";
    EXPECT_NE(load_error(path("short.png")).find("not a PNG"), std::string::npos);
}

// A 64 x 64 gray image of noise, which compresses badly, so its IDAT is large.
PngSpec noise_spec() {
    PngSpec spec{.width = 64, .height = 64};
    std::mt19937 engine(7);
    for (int p = 0; p < 64 * 64; ++p) spec.rows.push_back(static_cast<png_byte>(engine() & 0xff));
    return spec;
}

TEST_F(ImageFieldTest, RejectsATruncatedFile) {
    const fs::path whole = path("whole.png");
    write_png(whole, noise_spec());
    std::vector<char> bytes = read_bytes(whole);
    ASSERT_GT(bytes.size(), 2000u);
    for (const std::size_t keep : {bytes.size() / 2, bytes.size() - 12, std::size_t{20}}) {
        const fs::path file = path("truncated.png");
        write_bytes(file, std::vector<char>(bytes.begin(), bytes.begin() + keep));
        const std::string message = load_error(file);
        EXPECT_NE(message.find(file.string()), std::string::npos) << message;
        EXPECT_NE(message.find("corrupt or truncated"), std::string::npos) << keep << message;
    }
}

TEST_F(ImageFieldTest, RejectsCorruptImageData) {
    const fs::path file = path("corrupt.png");
    write_png(file, noise_spec());
    std::vector<char> bytes = read_bytes(file);
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);  // IDAT CRC fails
    write_bytes(file, bytes);
    EXPECT_NE(load_error(file).find("corrupt or truncated"), std::string::npos);
}

// Rewrites the width in the IHDR chunk (bytes 16..19, CRC at 29..32) of a valid file.
void patch_width(const fs::path& file, std::uint32_t width) {
    std::vector<char> bytes = read_bytes(file);
    for (int b = 0; b < 4; ++b) bytes[16 + b] = static_cast<char>((width >> (24 - 8 * b)) & 0xff);
    const auto* ihdr = reinterpret_cast<const Bytef*>(bytes.data() + 12);  // type and data
    const auto crc = static_cast<std::uint32_t>(crc32(0L, ihdr, 17));
    for (int b = 0; b < 4; ++b) bytes[29 + b] = static_cast<char>((crc >> (24 - 8 * b)) & 0xff);
    write_bytes(file, bytes);
}

TEST_F(ImageFieldTest, RejectsEmptyAndHugeImages) {
    const fs::path zero = path("zero.png");
    write_png(zero, {.width = 1, .height = 1, .rows = {9}});
    patch_width(zero, 0);
    EXPECT_NE(load_error(zero).find(zero.string()), std::string::npos);

    const fs::path huge = path("huge.png");
    write_png(huge, {.width = 1, .height = 1, .rows = {9}});
    patch_width(huge, 200000);
    EXPECT_NE(load_error(huge).find("200000 x 1 pixels"), std::string::npos) << load_error(huge);

    const fs::path wide = path("wide.png");
    write_png(wide, {.width = 100001, .height = 1, .rows = std::vector<png_byte>(100001, 3)});
    EXPECT_NE(load_error(wide).find("must be 1 to 100000"), std::string::npos);
    write_png(wide, {.width = 100000, .height = 1, .rows = std::vector<png_byte>(100000, 3)});
    EXPECT_EQ(GrayImage::load(wide).at(99999, 0), 3.0 / 255.0);
}

TEST(GrayImage, LoadsTheDemoImage) {
    const GrayImage image = GrayImage::load(SIMRUN_SOURCE_DIR "/inputs/simrun.png");
    EXPECT_EQ(image.width(), 256);
    EXPECT_EQ(image.height(), 128);
    double low = 1.0;
    double high = 0.0;
    for (std::int64_t r = 0; r < image.height(); ++r) {
        for (std::int64_t c = 0; c < image.width(); ++c) {
            low = std::min(low, image.at(c, r));
            high = std::max(high, image.at(c, r));
        }
    }
    EXPECT_EQ(low, 0.0);
    EXPECT_EQ(high, 1.0);
    EXPECT_EQ(image.at(0, 0), 0.0);  // a dark border, matching boundaries held at 0
}

}  // namespace
}  // namespace simrun::framework

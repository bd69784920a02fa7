// Matrix Market reading (the real matrices of tests/data/matrices, every header variant, and
// each malformed case with its FILE:LINE: message) and exact write-then-read round trips.
#include "simrun/solvers/matrices/matrix_market.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "simrun/solvers/matrices/conversions.hpp"

namespace simrun::solvers {
namespace {

namespace fs = std::filesystem;

const fs::path matrices_dir = fs::path(SIMRUN_SOURCE_DIR) / "tests" / "data" / "matrices";

// A fresh directory under the system's temporary directory, removed with its contents.
class TempDir {
public:
    TempDir() {
        const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string name = std::string("simrun-mm-") + test->test_suite_name() + "-" +
                           test->name() + "-" + std::to_string(std::random_device{}());
        for (char& c : name) {
            if (c == '/') c = '_';
        }
        path_ = fs::temp_directory_path() / name;
        fs::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    fs::path write(const std::string& name, const std::string& contents) const {
        const fs::path file = path_ / name;
        std::ofstream(file, std::ios::binary) << contents;
        return file;
    }
    fs::path path() const { return path_; }

private:
    fs::path path_;
};

CsrData<double> read_csr(const fs::path& path) { return to_csr(read_matrix_market(path)); }

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

struct ReadmeEntry {
    std::int32_t n = 0;
    std::int64_t nnz = 0;
    bool symmetric = false;
};

std::string trim(const std::string& text) {
    const auto first = text.find_first_not_of(' ');
    const auto last = text.find_last_not_of(' ');
    return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

// "a, b" -> {"a", "b"}; thousands separators ("1,024") have no space after the comma.
std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::size_t start = 0;
    while (true) {
        const auto comma = text.find(", ", start);
        items.push_back(trim(text.substr(start, comma - start)));
        if (comma == std::string::npos) return items;
        start = comma + 2;
    }
}

std::int64_t parse_count(std::string text) {
    std::erase(text, ',');
    return std::stoll(text);
}

// The table of README.md: | file(s) | name | n | nnz (full) | symmetry | ... |.
std::map<std::string, ReadmeEntry> read_readme_table() {
    std::ifstream readme(matrices_dir / "README.md");
    std::map<std::string, ReadmeEntry> table;
    std::string line;
    while (std::getline(readme, line)) {
        if (line.rfind("| ", 0) != 0 || line.find(".mtx") == std::string::npos) continue;
        std::vector<std::string> cells;
        std::stringstream row(line.substr(1));
        for (std::string cell; std::getline(row, cell, '|');) cells.push_back(trim(cell));
        const auto files = split_list(cells.at(0));
        const auto sizes = split_list(cells.at(2));
        const auto counts = split_list(cells.at(3));
        const bool symmetric =
            cells.at(4).rfind("SPD", 0) == 0 || cells.at(4).rfind("symmetric", 0) == 0;
        for (std::size_t k = 0; k < files.size(); ++k) {
            table[files[k]] = {static_cast<std::int32_t>(parse_count(sizes.at(k))),
                               parse_count(counts.at(k)), symmetric};
        }
    }
    return table;
}

TEST(MatrixMarket, ReadsEveryRealMatrixWithItsReadmeSizeAndSymmetry) {
    const auto table = read_readme_table();
    ASSERT_GE(table.size(), 15u);
    int files = 0;
    for (const auto& entry : fs::directory_iterator(matrices_dir)) {
        if (entry.path().extension() != ".mtx") continue;
        ++files;
        const std::string name = entry.path().filename().string();
        SCOPED_TRACE(name);
        ASSERT_EQ(table.count(name), 1u) << "not in README.md";
        const ReadmeEntry& expected = table.at(name);
        const auto a = read_csr(entry.path());
        EXPECT_EQ(a.rows, expected.n);
        EXPECT_EQ(a.cols, expected.n);
        EXPECT_EQ(a.nnz(), expected.nnz);
        const auto t = transpose(a);
        const bool symmetric = t.col == a.col && t.row_ptr == a.row_ptr && t.values == a.values;
        if (expected.symmetric) {
            EXPECT_TRUE(symmetric);
        }
    }
    EXPECT_EQ(files, static_cast<int>(table.size()));
}

TEST(MatrixMarket, ReadsNos3FirstColumnAndMirrorsIt) {
    const auto a = read_csr(matrices_dir / "nos3.mtx");
    // "3 1 -1.7463532000000001e+01" stored in the lower triangle gives A(2, 0) and A(0, 2).
    EXPECT_EQ(a.col[a.row_ptr[0]], 0);
    EXPECT_EQ(a.values[a.row_ptr[0]], 8.6867810000000006e+01);
    const auto dense = to_dense(a);
    EXPECT_EQ(dense.at(2, 0), -1.7463532000000001e+01);
    EXPECT_EQ(dense.at(0, 2), -1.7463532000000001e+01);
}

TEST(MatrixMarket, ReadsPatternAndIntegerFiles) {
    TempDir dir;
    const auto pattern = read_matrix_market(dir.write("p.mtx",
                                                      "%%MatrixMarket matrix coordinate pattern "
                                                      "symmetric\n3 3 3\n1 1\n3 1\n2 2\n"));
    EXPECT_EQ(pattern.row, (std::vector<std::int32_t>{0, 2, 0, 1}));
    EXPECT_EQ(pattern.col, (std::vector<std::int32_t>{0, 0, 2, 1}));
    EXPECT_EQ(pattern.values, (std::vector<double>{1, 1, 1, 1}));

    const auto integer = read_csr(
        dir.write("i.mtx",
                  "%%MatrixMarket matrix coordinate integer general\n2 3 4\n1 3 -7\n2 1 +12\n"
                  "1 3 2\n2 2 9007199254740993\n"));
    EXPECT_EQ(integer.rows, 2);
    EXPECT_EQ(integer.cols, 3);
    EXPECT_EQ(integer.row_ptr, (std::vector<std::int32_t>{0, 1, 3}));
    EXPECT_EQ(integer.col, (std::vector<std::int32_t>{2, 0, 1}));
    EXPECT_EQ(integer.values, (std::vector<double>{-5.0, 12.0, 9007199254740992.0}));
}

TEST(MatrixMarket, ReadsGeneralArrayColumnMajorSkippingZeros) {
    TempDir dir;
    // A = [1 0 3; 2 0 -4] stored column by column.
    const auto a = read_csr(dir.write(
        "a.mtx",
        "%%MatrixMarket matrix array real general\n% comment\n2 3\n1\n2\n0\n0.0\n3\n-4\n"));
    EXPECT_EQ(a.rows, 2);
    EXPECT_EQ(a.cols, 3);
    EXPECT_EQ(a.row_ptr, (std::vector<std::int32_t>{0, 2, 4}));
    EXPECT_EQ(a.col, (std::vector<std::int32_t>{0, 2, 0, 2}));
    EXPECT_EQ(a.values, (std::vector<double>{1, 3, 2, -4}));
}

TEST(MatrixMarket, ReadsSymmetricArrayLowerTriangleByColumns) {
    TempDir dir;
    // Lower triangle of [1 2 3; 2 4 5; 3 5 6], column by column: 1 2 3 | 4 5 | 6.
    const auto a = read_csr(
        dir.write("s.mtx", "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n"));
    const auto dense = to_dense(a);
    EXPECT_EQ(dense.values, (std::vector<double>{1, 2, 3, 2, 4, 5, 3, 5, 6}));
}

TEST(MatrixMarket, SymmetricUpperTriangleAloneReadsAsTheLowerOne) {
    TempDir dir;
    const auto lower = to_dense(
        read_csr(dir.write("l.mtx",
                           "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n2 1 -1\n"
                           "3 1 2\n3 3 5\n")));
    const auto upper = to_dense(
        read_csr(dir.write("u.mtx",
                           "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n1 2 -1\n"
                           "1 3 2\n3 3 5\n")));
    EXPECT_EQ(lower.values, (std::vector<double>{4, -1, 2, -1, 0, 0, 2, 0, 5}));
    EXPECT_EQ(upper.values, lower.values);
}

TEST(MatrixMarket, ReadsSkewSymmetricCoordinateAndArray) {
    TempDir dir;
    const auto coordinate = to_dense(read_csr(dir.write(
        "k.mtx",
        "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 2 -2\n")));
    EXPECT_EQ(coordinate.values, (std::vector<double>{0, -1.5, 0, 1.5, 0, 2, 0, -2, 0}));
    // Strict lower triangle, column by column: A(2,1) A(3,1) | A(3,2).
    const auto array = to_dense(read_csr(
        dir.write("ka.mtx", "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1.5\n0\n-2\n")));
    EXPECT_EQ(array.values, coordinate.values);
}

TEST(MatrixMarket, ToleratesCaseCommentsBlankLinesAndSpacing) {
    TempDir dir;
    const auto a = read_csr(dir.write("c.mtx",
                                      "%%matrixmarket MATRIX Coordinate REAL General\r\n"
                                      "% a comment\r\n"
                                      "\r\n"
                                      "   \t\r\n"
                                      "%another\n"
                                      "2 2 3\n"
                                      "\t1   1\t+2.5e+00 \n"
                                      "\n"
                                      "% between entries\n"
                                      "2 2 -.25\n"
                                      "1 2 1E-3"));
    EXPECT_EQ(a.row_ptr, (std::vector<std::int32_t>{0, 2, 3}));
    EXPECT_EQ(a.col, (std::vector<std::int32_t>{0, 1, 1}));
    EXPECT_EQ(a.values, (std::vector<double>{2.5, 1e-3, -0.25}));
}

TEST(MatrixMarket, MissingFileSaysCannotOpen) {
    TempDir dir;
    const fs::path missing = dir.path() / "missing.mtx";
    try {
        read_matrix_market(missing);
        FAIL() << "expected MatrixMarketError";
    } catch (const MatrixMarketError& error) {
        EXPECT_EQ(std::string(error.what()).rfind(missing.string() + ": cannot open", 0), 0u)
            << error.what();
    }
    EXPECT_THROW(read_matrix_market_vector(missing), MatrixMarketError);
}

// A malformed file: its contents, the line the error must name and a phrase it must contain.
struct MalformedCase {
    const char* name;
    const char* contents;
    int line;
    const char* phrase;
    bool vector = false;
};

std::ostream& operator<<(std::ostream& out, const MalformedCase& c) { return out << c.name; }

class MatrixMarketMalformed : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MatrixMarketMalformed, ThrowsWithFileLineAndReason) {
    const MalformedCase& c = GetParam();
    TempDir dir;
    const fs::path file = dir.write(std::string(c.name) + ".mtx", c.contents);
    try {
        if (c.vector) {
            read_matrix_market_vector(file);
        } else {
            read_matrix_market(file);
        }
        FAIL() << "expected MatrixMarketError";
    } catch (const MatrixMarketError& error) {
        const std::string message = error.what();
        const std::string prefix = file.string() + ":" + std::to_string(c.line) + ": ";
        EXPECT_EQ(message.rfind(prefix, 0), 0u) << message << "\nexpected prefix " << prefix;
        EXPECT_NE(message.find(c.phrase), std::string::npos) << message;
    }
}

#define MM_GENERAL "%%MatrixMarket matrix coordinate real general\n"

INSTANTIATE_TEST_SUITE_P(
    MatrixMarket, MatrixMarketMalformed,
    ::testing::Values(
        MalformedCase{"empty_file", "", 1, "expected the banner"},
        // Found by the fuzzer: a declared count near 2^62 overflowed the reservation.
        MalformedCase{"declared_count_near_2_to_the_62",
                      "%%MatrixMarket matrix coordinate real symmetric\n3 3 4844445808069642743\n"
                      "1 1 2\n",
                      3, "the file ended after 1 of the 4844445808069642743 entries declared"},
        MalformedCase{"symmetric_with_both_triangles",
                      "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n2 1 -1\n"
                      "2 2 4\n1 2 -1\n",
                      6, "line 4 has one below it: a symmetric file stores one triangle"},
        MalformedCase{"skew_symmetric_with_both_triangles",
                      "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n1 3 2\n"
                      "3 2 1\n",
                      4, "lies below the diagonal, but line 3 has one above it"},
        MalformedCase{"missing_banner", "3 3 1\n1 1 1.0\n", 1, "expected the banner"},
        MalformedCase{"comment_before_banner", "% hello\n" MM_GENERAL "1 1 1\n1 1 1\n", 1,
                      "expected the banner"},
        MalformedCase{"short_banner", "%%MatrixMarket matrix coordinate real\n1 1 0\n", 1,
                      "(5 fields), got 4"},
        MalformedCase{"wrong_object", "%%MatrixMarket vector coordinate real general\n", 1,
                      "unsupported object 'vector', expected 'matrix'"},
        MalformedCase{"unknown_format", "%%MatrixMarket matrix sparse real general\n", 1,
                      "unknown format 'sparse'"},
        MalformedCase{"unknown_field", "%%MatrixMarket matrix coordinate double general\n", 1,
                      "unknown field 'double'"},
        MalformedCase{"unknown_symmetry", "%%MatrixMarket matrix coordinate real upper\n", 1,
                      "unknown symmetry 'upper'"},
        MalformedCase{"complex_field", "%%MatrixMarket matrix coordinate complex general\n", 1,
                      "complex matrices are not supported"},
        MalformedCase{"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n", 1,
                      "complex matrices are not supported"},
        MalformedCase{"array_pattern", "%%MatrixMarket matrix array pattern general\n2 2\n", 1,
                      "'pattern' field needs the 'coordinate' format"},
        MalformedCase{"missing_size_line", MM_GENERAL "% only a comment\n", 2,
                      "expected the size line 'rows columns entries'"},
        MalformedCase{"size_line_two_numbers", MM_GENERAL "%\n\n3 3\n", 4,
                      "expected the size line 'rows columns entries' (3 non-negative integers), "
                      "got '3 3'"},
        MalformedCase{"size_line_not_numeric", MM_GENERAL "3 three 1\n", 2,
                      "expected the size line"},
        MalformedCase{"size_line_negative", MM_GENERAL "-3 3 1\n", 2, "expected the size line"},
        MalformedCase{"array_size_line", "%%MatrixMarket matrix array real general\n2 2 4\n", 2,
                      "expected the size line 'rows columns' (2 non-negative integers)"},
        MalformedCase{"size_too_large", MM_GENERAL "3000000000 1 0\n", 2,
                      "exceed the 32-bit index limit"},
        MalformedCase{"symmetric_not_square",
                      "%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n", 2,
                      "must be square, got 3 x 4"},
        MalformedCase{"too_few_fields", MM_GENERAL "3 3 2\n1 1 1.0\n2 2\n", 4,
                      "expected 3 fields (row column value), got 2"},
        MalformedCase{"too_many_fields", MM_GENERAL "3 3 1\n1 1 1.0 7\n", 3,
                      "expected 3 fields (row column value), got 4"},
        MalformedCase{"pattern_with_value",
                      "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1.0\n", 3,
                      "expected 2 fields (row column), got 3"},
        MalformedCase{"non_numeric_value", MM_GENERAL "3 3 1\n1 1 abc\n", 3,
                      "expected a real value, got 'abc'"},
        MalformedCase{"trailing_garbage_value", MM_GENERAL "3 3 1\n1 1 1.5x\n", 3,
                      "expected a real value, got '1.5x'"},
        MalformedCase{"non_numeric_index", MM_GENERAL "3 3 1\n1.0 1 2.0\n", 3,
                      "expected an integer row index, got '1.0'"},
        MalformedCase{"row_index_zero", MM_GENERAL "3 3 2\n1 1 1\n0 2 1.0\n", 4,
                      "row index 0 out of range 1..3"},
        MalformedCase{"row_index_too_large", MM_GENERAL "3 4 1\n4 1 1.0\n", 3,
                      "row index 4 out of range 1..3"},
        MalformedCase{"column_index_too_large", MM_GENERAL "3 4 1\n1 5 1.0\n", 3,
                      "column index 5 out of range 1..4"},
        MalformedCase{"column_index_negative", MM_GENERAL "3 4 1\n1 -1 1.0\n", 3,
                      "column index -1 out of range 1..4"},
        MalformedCase{"fewer_entries", MM_GENERAL "3 3 3\n1 1 1.0\n2 2 1.0\n\n", 5,
                      "the file ended after 2 of the 3 entries declared"},
        MalformedCase{"fewer_entries_no_newline", MM_GENERAL "3 3 3\n1 1 1.0\n2 2 1.0", 4,
                      "the file ended after 2 of the 3 entries declared"},
        MalformedCase{"more_entries", MM_GENERAL "3 3 1\n1 1 1.0\n\n2 2 1.0\n3 3 1.0\n", 5,
                      "more entries than the 1 declared in the size line (line 2)"},
        MalformedCase{"nan_value", MM_GENERAL "3 3 1\n1 1 nan\n", 3, "non-finite value 'nan'"},
        MalformedCase{"infinite_value", MM_GENERAL "3 3 2\n1 1 1\n2 2 -Inf\n", 4,
                      "non-finite value '-Inf'"},
        MalformedCase{"overflowing_value", MM_GENERAL "3 3 1\n1 1 1e999\n", 3,
                      "non-finite value '1e999'"},
        MalformedCase{"skew_symmetric_diagonal",
                      "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 "
                      "5\n",
                      4, "diagonal entry (2, 2) in a skew-symmetric file"},
        MalformedCase{"integer_with_fraction",
                      "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3,
                      "expected an integer value, got '1.5'"},
        MalformedCase{"array_too_few_values",
                      "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 5,
                      "the file ended after 3 of the 4 entries declared"},
        MalformedCase{"array_too_many_values",
                      "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n4\n", 6,
                      "more entries than the 3 declared"},
        MalformedCase{"array_two_values_on_a_line",
                      "%%MatrixMarket matrix array real general\n2 1\n1 2\n", 3,
                      "expected 1 field (value), got 2"},
        MalformedCase{"vector_with_two_columns",
                      "%%MatrixMarket matrix array real general\n%\n2 2\n1\n2\n3\n4\n", 3,
                      "expected a vector (1 column), got 2 x 2", true}),
    [](const ::testing::TestParamInfo<MalformedCase>& param) { return param.param.name; });

#undef MM_GENERAL

TEST(MatrixMarket, ReadsCoordinateAndArrayVectors) {
    TempDir dir;
    const auto coordinate = read_matrix_market_vector(dir.write(
        "v.mtx", "%%MatrixMarket matrix coordinate real general\n4 1 3\n3 1 2.5\n1 1 1\n3 1 1\n"));
    EXPECT_EQ(coordinate, (std::vector<double>{1.0, 0.0, 3.5, 0.0}));
    const auto array = read_matrix_market_vector(
        dir.write("a.mtx", "%%MatrixMarket matrix array integer general\n3 1\n4\n0\n-6\n"));
    EXPECT_EQ(array, (std::vector<double>{4.0, 0.0, -6.0}));
}

TEST(MatrixMarket, VectorWriteThenReadIsExact) {
    TempDir dir;
    const std::vector<double> values = {0.1,
                                        1.0 / 3.0,
                                        -0.0,
                                        0.0,
                                        std::numeric_limits<double>::max(),
                                        -std::numeric_limits<double>::min(),
                                        std::numeric_limits<double>::denorm_min(),
                                        4.9406564584124654e-320,
                                        -123456789012345678.0,
                                        std::acos(-1.0),
                                        std::nextafter(1.0, 2.0)};
    const fs::path file = dir.path() / "x.mtx";
    write_matrix_market_vector(file, values);
    const auto back = read_matrix_market_vector(file);
    ASSERT_EQ(back.size(), values.size());
    for (std::size_t k = 0; k < values.size(); ++k) {
        EXPECT_TRUE(same_bits(back[k], values[k])) << k << ": " << back[k] << " vs " << values[k];
    }
    EXPECT_FALSE(fs::exists(dir.path() / ".x.mtx.tmp"));
}

TEST(MatrixMarket, MatrixWriteThenReadIsExact) {
    TempDir dir;
    std::mt19937 random(42);
    std::uniform_real_distribution<double> value(-1e6, 1e6);
    std::uniform_int_distribution<std::int32_t> column(0, 36);
    CooData<double> coo;
    coo.rows = 50;
    coo.cols = 37;
    for (int k = 0; k < 400; ++k) {
        coo.row.push_back(k % 50);
        coo.col.push_back(column(random));
        coo.values.push_back(k % 17 == 0 ? 0.0 : value(random) * std::pow(10.0, k % 40 - 20));
    }
    const auto a = to_csr(coo);  // rows 0..49 all non-empty, explicit zeros kept
    const fs::path file = dir.path() / "a.mtx";
    write_matrix_market(file, a);
    const auto back = read_csr(file);
    EXPECT_EQ(back.rows, a.rows);
    EXPECT_EQ(back.cols, a.cols);
    EXPECT_EQ(back.row_ptr, a.row_ptr);
    EXPECT_EQ(back.col, a.col);
    ASSERT_EQ(back.values.size(), a.values.size());
    for (std::size_t k = 0; k < a.values.size(); ++k) {
        EXPECT_TRUE(same_bits(back.values[k], a.values[k])) << k;
    }
}

TEST(MatrixMarket, WritersRejectNonFiniteValuesAndKeepTheOldFile) {
    TempDir dir;
    const fs::path file = dir.path() / "x.mtx";
    write_matrix_market_vector(file, std::vector<double>{1.0, 2.0});
    const std::vector<double> bad = {1.0, std::numeric_limits<double>::quiet_NaN()};
    EXPECT_THROW(write_matrix_market_vector(file, bad), std::runtime_error);
    EXPECT_EQ(read_matrix_market_vector(file), (std::vector<double>{1.0, 2.0}));

    CsrData<double> a;
    a.rows = 1;
    a.cols = 1;
    a.row_ptr = {0, 1};
    a.col = {0};
    a.values = {std::numeric_limits<double>::infinity()};
    EXPECT_THROW(write_matrix_market(dir.path() / "a.mtx", a), std::runtime_error);
    EXPECT_FALSE(fs::exists(dir.path() / "a.mtx"));
}

}  // namespace
}  // namespace simrun::solvers

// Conversions between COO, CSR, ELL, DIA and dense: exact round trips on random matrices,
// duplicate summation, transposition, diagonal counting and input checks.
#include "simrun/solvers/matrices/conversions.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace simrun::solvers {
namespace {

// A random CSR matrix with nonzero values: about a quarter of the rows empty, the others with
// up to 6 distinct columns, and row `long_row` (if in range) holding every column.
template <typename T>
CsrData<T> random_csr(std::int32_t rows, std::int32_t cols, std::uint32_t seed,
                      std::int32_t long_row) {
    std::mt19937 random(seed);
    std::uniform_int_distribution<std::int32_t> length(0, std::min(cols, 6));
    std::uniform_real_distribution<double> magnitude(0.5, 2.0);
    std::vector<std::int32_t> columns(static_cast<std::size_t>(cols));
    std::iota(columns.begin(), columns.end(), 0);
    CsrData<T> a;
    a.rows = rows;
    a.cols = cols;
    for (std::int32_t i = 0; i < rows; ++i) {
        std::int32_t count = random() % 4 == 0 ? 0 : length(random);
        if (i == long_row) count = cols;
        std::shuffle(columns.begin(), columns.end(), random);
        std::vector<std::int32_t> chosen(columns.begin(), columns.begin() + count);
        std::sort(chosen.begin(), chosen.end());
        for (const std::int32_t j : chosen) {
            a.col.push_back(j);
            const double sign = random() % 2 == 0 ? 1.0 : -1.0;
            a.values.push_back(static_cast<T>(sign * magnitude(random)));
        }
        a.row_ptr.push_back(static_cast<std::int32_t>(a.col.size()));
    }
    return a;
}

template <typename T>
void expect_equal(const CsrData<T>& actual, const CsrData<T>& expected) {
    EXPECT_EQ(actual.rows, expected.rows);
    EXPECT_EQ(actual.cols, expected.cols);
    EXPECT_EQ(actual.row_ptr, expected.row_ptr);
    EXPECT_EQ(actual.col, expected.col);
    EXPECT_EQ(actual.values, expected.values);
}

// The 5-point Laplacian of an m x m grid, row i = x + m y: 4 on the diagonal, -1 to each
// neighbour.
CsrData<double> laplacian_5pt(std::int32_t m) {
    CooData<double> coo;
    coo.rows = coo.cols = m * m;
    const auto add = [&](std::int32_t i, std::int32_t j, double v) {
        coo.row.push_back(i);
        coo.col.push_back(j);
        coo.values.push_back(v);
    };
    for (std::int32_t y = 0; y < m; ++y) {
        for (std::int32_t x = 0; x < m; ++x) {
            const std::int32_t i = x + m * y;
            add(i, i, 4.0);
            if (x > 0) add(i, i - 1, -1.0);
            if (x + 1 < m) add(i, i + 1, -1.0);
            if (y > 0) add(i, i - m, -1.0);
            if (y + 1 < m) add(i, i + m, -1.0);
        }
    }
    return to_csr(coo);
}

template <typename F>
void expect_invalid(F&& f, const std::string& phrase) {
    try {
        f();
        ADD_FAILURE() << "expected std::invalid_argument mentioning '" << phrase << "'";
    } catch (const std::invalid_argument& error) {
        EXPECT_NE(std::string(error.what()).find(phrase), std::string::npos) << error.what();
    }
}

template <typename T>
class ConversionRoundTrip : public ::testing::Test {};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ConversionRoundTrip, ValueTypes);

TYPED_TEST(ConversionRoundTrip, CsrCooCsrIsExactAndIgnoresTripletOrder) {
    for (const auto& [rows, cols] : {std::pair{40, 40}, std::pair{57, 13}, std::pair{9, 70}}) {
        const auto a = random_csr<TypeParam>(rows, cols, 11u + static_cast<unsigned>(rows), 3);
        auto coo = to_coo(a);
        ASSERT_EQ(coo.nnz(), a.nnz());
        expect_equal(to_csr(coo), a);

        std::vector<std::size_t> order(coo.values.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::shuffle(order.begin(), order.end(), std::mt19937(5));
        CooData<TypeParam> shuffled;
        shuffled.rows = coo.rows;
        shuffled.cols = coo.cols;
        for (const std::size_t k : order) {
            shuffled.row.push_back(coo.row[k]);
            shuffled.col.push_back(coo.col[k]);
            shuffled.values.push_back(coo.values[k]);
        }
        expect_equal(to_csr(shuffled), a);
    }
}

TYPED_TEST(ConversionRoundTrip, CsrEllCsrIsExactWithColumnMajorPadding) {
    const auto a = random_csr<TypeParam>(50, 31, 7u, 17);
    const auto ell = to_ell(a);
    EXPECT_EQ(ell.width, 31);  // the long row
    ASSERT_EQ(ell.col.size(), std::size_t{31} * 50);
    for (std::int32_t i = 0; i < a.rows; ++i) {
        ASSERT_EQ(ell.row_length[i], a.row_length(i));
        for (std::int32_t k = 0; k < ell.width; ++k) {
            if (k < a.row_length(i)) {
                EXPECT_EQ(ell.col[ell.slot(k, i)], a.col[a.row_ptr[i] + k]);
                EXPECT_EQ(ell.values[ell.slot(k, i)], a.values[a.row_ptr[i] + k]);
            } else {
                EXPECT_EQ(ell.col[ell.slot(k, i)], 0);
                EXPECT_EQ(ell.values[ell.slot(k, i)], TypeParam(0));
            }
        }
    }
    expect_equal(to_csr(ell), a);
}

TYPED_TEST(ConversionRoundTrip, CsrDiaCsrIsExact) {
    const auto a = random_csr<TypeParam>(45, 45, 3u, 44);
    const auto dia = to_dia(a, 2 * 45 - 1);
    EXPECT_EQ(dia.num_diagonals(), count_diagonals(a));
    EXPECT_TRUE(std::is_sorted(dia.offsets.begin(), dia.offsets.end()));
    for (std::int32_t i = 0; i < a.rows; ++i) {
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            const int d = dia.find_diagonal(a.col[k] - i);
            ASSERT_GE(d, 0);
            EXPECT_EQ(dia.at(d, i), a.values[k]);
        }
    }
    expect_equal(to_csr(dia), a);
}

TYPED_TEST(ConversionRoundTrip, CsrDenseCsrIsExact) {
    const auto a = random_csr<TypeParam>(23, 38, 19u, 0);
    const auto dense = to_dense(a);
    ASSERT_EQ(dense.values.size(), std::size_t{23} * 38);
    for (std::int32_t i = 0; i < a.rows; ++i) {
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            EXPECT_EQ(dense.at(i, a.col[k]), a.values[k]);
        }
    }
    const auto stored = static_cast<std::ptrdiff_t>(a.nnz());
    EXPECT_EQ(std::count(dense.values.begin(), dense.values.end(), TypeParam(0)),
              static_cast<std::ptrdiff_t>(dense.values.size()) - stored);
    expect_equal(to_csr(dense), a);
}

TYPED_TEST(ConversionRoundTrip, TransposeSwapsEntriesAndTwiceIsIdentity) {
    const auto a = random_csr<TypeParam>(33, 21, 23u, 5);
    const auto t = transpose(a);
    EXPECT_EQ(t.rows, 21);
    EXPECT_EQ(t.cols, 33);
    EXPECT_EQ(t.nnz(), a.nnz());
    const auto dense_a = to_dense(a);
    const auto dense_t = to_dense(t);
    for (std::int32_t i = 0; i < t.rows; ++i) {
        for (std::int32_t j = 0; j < t.cols; ++j) EXPECT_EQ(dense_t.at(i, j), dense_a.at(j, i));
    }
    expect_equal(transpose(t), a);
}

TEST(Conversions, CooToCsrSortsAndSumsDuplicatesInInputOrder) {
    CooData<double> coo;
    coo.rows = 3;
    coo.cols = 4;
    // (row, column, value), unsorted, (2, 1) three times, (0, 3) twice, an explicit zero at (1, 2).
    coo.row = {2, 0, 2, 1, 0, 2, 0};
    coo.col = {1, 3, 1, 2, 0, 1, 3};
    coo.values = {1e16, 5.0, 1.0, 0.0, 2.0, -1e16, 0.5};
    const auto csr = to_csr(coo);
    EXPECT_EQ(csr.row_ptr, (std::vector<std::int32_t>{0, 2, 3, 4}));
    EXPECT_EQ(csr.col, (std::vector<std::int32_t>{0, 3, 2, 1}));
    // (1e16 + 1) - 1e16 = 0 in input order (1e16 + 1 rounds to 1e16); another order gives 1.
    EXPECT_EQ(csr.values, (std::vector<double>{2.0, 5.5, 0.0, 0.0}));
}

TEST(Conversions, CountDiagonalsOfFivePointLaplacianIsFive) {
    const auto a = laplacian_5pt(10);
    EXPECT_EQ(a.nnz(), 5 * 100 - 4 * 10);
    EXPECT_EQ(count_diagonals(a), 5);
    const auto dia = to_dia(a, 5);
    EXPECT_EQ(dia.offsets, (std::vector<int>{-10, -1, 0, 1, 10}));
    EXPECT_EQ(dia.at(dia.find_diagonal(0), 37), 4.0);
    EXPECT_EQ(dia.at(dia.find_diagonal(1), 9), 0.0);  // (9, 10) crosses the grid's edge
    expect_equal(to_csr(dia), a);
}

TEST(Conversions, ToDiaThrowsAboveMaxDiagonalsAndForNonSquare) {
    const auto a = laplacian_5pt(4);
    EXPECT_NO_THROW(to_dia(a, 5));
    expect_invalid([&] { to_dia(a, 4); }, "5 distinct diagonals, more than max_diagonals = 4");
    expect_invalid([] { to_dia(random_csr<double>(4, 5, 1u, 0)); }, "square");
}

TEST(Conversions, DiaToCsrSkipsEntriesOutsideTheMatrixAndOptionallyZeros) {
    DiaData<double> dia;
    dia.n = 3;
    dia.offsets = {-1, 0, 2};
    // values[d * n + i] = A(i, i + offset_d); A(0, -1), A(1, 3), A(2, 4) lie outside.
    dia.values = {9.0, 1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 9.0, 9.0};
    const auto dropped = to_csr(dia);
    EXPECT_EQ(dropped.row_ptr, (std::vector<std::int32_t>{0, 2, 3, 5}));
    EXPECT_EQ(dropped.col, (std::vector<std::int32_t>{0, 2, 0, 1, 2}));
    EXPECT_EQ(dropped.values, (std::vector<double>{3.0, 5.0, 1.0, 2.0, 4.0}));
    const auto kept = to_csr(dia, false);
    EXPECT_EQ(kept.col, (std::vector<std::int32_t>{0, 2, 0, 1, 1, 2}));
    EXPECT_EQ(kept.values, (std::vector<double>{3.0, 5.0, 1.0, 0.0, 2.0, 4.0}));
}

TEST(Conversions, DenseToCsrDropsExactZeros) {
    DenseData<double> dense;
    dense.rows = 2;
    dense.cols = 3;
    dense.values = {0.0, 1.5, 0.0, -0.0, 0.0, -2.0};
    const auto csr = to_csr(dense);
    EXPECT_EQ(csr.row_ptr, (std::vector<std::int32_t>{0, 1, 2}));
    EXPECT_EQ(csr.col, (std::vector<std::int32_t>{1, 2}));
    EXPECT_EQ(csr.values, (std::vector<double>{1.5, -2.0}));
    expect_invalid([&] { to_dense(laplacian_5pt(10), 9999); }, "exceed max_entries = 9999");
}

TEST(Conversions, EmptyMatricesConvert) {
    CooData<double> coo;
    coo.rows = 4;
    coo.cols = 0;
    const auto csr = to_csr(coo);
    EXPECT_EQ(csr.row_ptr, (std::vector<std::int32_t>(5, 0)));
    EXPECT_EQ(to_ell(csr).width, 0);
    EXPECT_EQ(count_diagonals(csr), 0);
    EXPECT_EQ(transpose(csr).rows, 0);
    const CsrData<double> none;
    EXPECT_EQ(to_dia(none).n, 0);
    EXPECT_EQ(to_csr(to_dia(none)).rows, 0);
    EXPECT_EQ(to_csr(to_ell(none)).nnz(), 0);
}

TEST(Conversions, RejectsInconsistentInput) {
    CooData<double> coo;
    coo.rows = 2;
    coo.cols = 2;
    coo.row = {0, 2};
    coo.col = {0, 1};
    coo.values = {1.0, 2.0};
    expect_invalid([&] { to_csr(coo); }, "row index 2 out of range [0, 2)");
    coo.row = {0, 1};
    coo.col = {0, -1};
    expect_invalid([&] { to_csr(coo); }, "column index -1 out of range [0, 2)");
    coo.values.push_back(3.0);
    expect_invalid([&] { to_csr(coo); }, "expected equal");
    coo.rows = -1;
    expect_invalid([&] { to_csr(coo); }, "negative size");

    auto csr = random_csr<double>(5, 5, 2u, 1);
    auto bad = csr;
    bad.row_ptr.pop_back();
    expect_invalid([&] { to_coo(bad); }, "expected rows + 1 = 6");
    bad = csr;
    bad.col[0] = 5;
    expect_invalid([&] { transpose(bad); }, "column index 5 out of range [0, 5)");
    bad = csr;
    std::swap(bad.col[bad.row_ptr[1]], bad.col[bad.row_ptr[1] + 1]);
    expect_invalid([&] { to_ell(bad); }, "columns not strictly increasing");
    bad = csr;
    bad.row_ptr[2] = bad.row_ptr[3] + 1;
    expect_invalid([&] { count_diagonals(bad); }, "row_ptr decreases");

    auto ell = to_ell(csr);
    ell.row_length[2] = ell.width + 1;
    expect_invalid([&] { to_csr(ell); }, "out of range [0, width");

    DiaData<double> dia;
    dia.n = 3;
    dia.offsets = {1, 0};
    dia.values.assign(6, 1.0);
    expect_invalid([&] { to_csr(dia); }, "sorted and distinct");
    dia.offsets = {0};
    expect_invalid([&] { to_csr(dia); }, "need 3 values, got 6");

    DenseData<double> dense;
    dense.rows = 2;
    dense.cols = 2;
    dense.values.assign(3, 1.0);
    expect_invalid([&] { to_csr(dense); }, "expected rows * cols = 4");
}

TEST(Conversions, ConvertValuesRoundsToFloatAndRejectsOverflow) {
    auto a = random_csr<double>(12, 12, 4u, 6);
    a.values[0] = 0.1;
    const auto f = convert_values<float>(a);
    EXPECT_EQ(f.col, a.col);
    EXPECT_EQ(f.row_ptr, a.row_ptr);
    EXPECT_EQ(f.values[0], 0.1f);
    expect_equal(convert_values<double>(f), convert_values<double>(convert_values<float>(f)));
    expect_equal(convert_values<double>(a), a);
    a.values[1] = 1e300;
    expect_invalid([&] { convert_values<float>(a); }, "1e+300");
}

}  // namespace
}  // namespace simrun::solvers

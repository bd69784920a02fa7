// DiaData's in-place reshaping: the rows or diagonals kept are those a fresh copy would hold, in
// the same storage.
#include "simrun/solvers/matrices/dia_data.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace simrun::solvers {
namespace {

// A 6x6 matrix on diagonals -2, 0, 1, 3 whose entry (d, i) is 10 d + i: every value tells
// where it came from.
DiaData<double> numbered() {
    DiaData<double> a{6, {-2, 0, 1, 3}, std::vector<double>(24)};
    for (int d = 0; d < 4; ++d) {
        for (std::int64_t i = 0; i < 6; ++i) a.at(d, i) = 10.0 * d + static_cast<double>(i);
    }
    return a;
}

TEST(DiaData, KeepRowsHoldsTheRowsAsACopyWould) {
    DiaData<double> a = numbered();
    const double* storage = a.values.data();
    a.keep_rows(2, 3);
    EXPECT_EQ(a.n, 3);
    EXPECT_EQ(a.offsets, (std::vector<int>{-2, 0, 1, 3}));
    ASSERT_EQ(a.values.size(), 12u);
    for (int d = 0; d < 4; ++d) {
        for (std::int64_t i = 0; i < 3; ++i)
            EXPECT_EQ(a.at(d, i), 10.0 * d + 2.0 + static_cast<double>(i));
    }
    EXPECT_EQ(a.values.data(), storage);  // no new storage
    DiaData<double> whole = numbered();
    whole.keep_rows(0, 6);
    EXPECT_EQ(whole.values, numbered().values);
}

TEST(DiaData, KeepRowsRefusesRowsOutsideTheMatrix) {
    DiaData<double> a = numbered();
    EXPECT_THROW(a.keep_rows(4, 3), std::out_of_range);
    EXPECT_THROW(a.keep_rows(-1, 2), std::out_of_range);
    EXPECT_EQ(a.values, numbered().values);  // unchanged
}

TEST(DiaData, KeepDiagonalsKeepsThoseChosenInOrder) {
    DiaData<double> a = numbered();
    a.keep_diagonals([&](int d) { return a.offsets[static_cast<std::size_t>(d)] != 0 && d != 3; });
    EXPECT_EQ(a.offsets, (std::vector<int>{-2, 1}));
    ASSERT_EQ(a.values.size(), 12u);
    for (std::int64_t i = 0; i < 6; ++i) {
        EXPECT_EQ(a.at(0, i), 0.0 + static_cast<double>(i));
        EXPECT_EQ(a.at(1, i), 20.0 + static_cast<double>(i));
    }
    DiaData<double> all = numbered();
    all.keep_diagonals([](int) { return true; });
    EXPECT_EQ(all.values, numbered().values);
}

}  // namespace
}  // namespace simrun::solvers

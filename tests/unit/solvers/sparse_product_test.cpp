// Sparse products against the dense product of the same matrices.
#include "simrun/solvers/matrices/sparse_product.hpp"

#include <gtest/gtest.h>

#include <random>

#include "simrun/solvers/base/errors.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "support/test_matrices.hpp"

namespace simrun::solvers {
namespace {

// A random rows x cols matrix with about `density` of its entries set (some rows empty).
CsrData<double> random_sparse(std::int32_t rows, std::int32_t cols, double density,
                              std::uint32_t seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0), value(-2.0, 2.0);
    CooData<double> coo;
    coo.rows = rows;
    coo.cols = cols;
    for (std::int32_t i = 0; i < rows; ++i) {
        for (std::int32_t j = 0; j < cols; ++j) {
            if (unit(generator) < density) {
                coo.row.push_back(i);
                coo.col.push_back(j);
                coo.values.push_back(value(generator));
            }
        }
    }
    return to_csr(coo);
}

TEST(SparseProduct, EqualsTheDenseProduct) {
    const auto a = random_sparse(37, 53, 0.08, 1), b = random_sparse(53, 29, 0.1, 2);
    const auto c = multiply(a, b);
    ASSERT_EQ(c.rows, 37);
    ASSERT_EQ(c.cols, 29);
    const auto da = to_dense(a), db = to_dense(b), dc = to_dense(c);
    for (std::int32_t i = 0; i < 37; ++i) {
        for (std::int32_t j = 0; j < 29; ++j) {
            double expected = 0;
            for (std::int32_t k = 0; k < 53; ++k) expected += da.at(i, k) * db.at(k, j);
            EXPECT_NEAR(dc.at(i, j), expected, 1e-12) << i << ", " << j;
        }
        for (std::int32_t k = c.row_ptr[i] + 1; k < c.row_ptr[i + 1]; ++k) {
            EXPECT_LT(c.col[k - 1], c.col[k]) << "row " << i << ": columns sorted and distinct";
        }
    }
}

TEST(SparseProduct, GalerkinProductIsSymmetricForSymmetricA) {
    const auto a = testing::diffusion_matrix(9, 2, [](double x, double, double) { return 1 + x; });
    const auto p = random_sparse(81, 20, 0.15, 3);
    const auto coarse = to_dense(galerkin_product(a, p));
    for (std::int32_t i = 0; i < 20; ++i) {
        for (std::int32_t j = 0; j < i; ++j) {
            EXPECT_NEAR(coarse.at(i, j), coarse.at(j, i), 1e-11) << i << ", " << j;
        }
    }
}

TEST(SparseProduct, RefusesMismatchedShapes) {
    EXPECT_THROW(multiply(random_sparse(4, 5, 0.5, 4), random_sparse(4, 5, 0.5, 5)),
                 DimensionMismatch);
}

}  // namespace
}  // namespace simrun::solvers

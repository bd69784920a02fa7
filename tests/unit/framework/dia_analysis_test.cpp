// Matrix analysis and transposition on the DIA form agree with the CSR ones, and sizes beyond
// the 32-bit indexed forms are handled by DIA or refused with a message saying why (checked
// on the arithmetic, nothing of that size is allocated).
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/discretisation/boundary_conditions.hpp"
#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/framework/discretisation/spatial_operator.hpp"
#include "simrun/framework/discretisation/stencil.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"
#include "simrun/solvers/selection/solver_selection.hpp"
#include "support/random_data.hpp"

namespace simrun::solvers {
namespace {

void expect_same(const MatrixProperties& dia, const MatrixProperties& csr) {
    EXPECT_EQ(dia.rows, csr.rows);
    EXPECT_EQ(dia.nnz, csr.nnz);
    EXPECT_EQ(dia.num_diagonals, csr.num_diagonals);
    EXPECT_EQ(dia.symmetric, csr.symmetric);
    EXPECT_EQ(dia.asymmetry, csr.asymmetry);
    EXPECT_EQ(dia.positive_diagonal, csr.positive_diagonal);
    EXPECT_EQ(dia.zero_diagonal_rows, csr.zero_diagonal_rows);
    EXPECT_EQ(dia.weakly_dominant, csr.weakly_dominant);
    EXPECT_EQ(dia.strictly_dominant, csr.strictly_dominant);
    EXPECT_EQ(dia.worst_dominance_ratio, csr.worst_dominance_ratio);
    EXPECT_EQ(dia.min_row_length, csr.min_row_length);
    EXPECT_EQ(dia.max_row_length, csr.max_row_length);
    EXPECT_EQ(dia.mean_row_length, csr.mean_row_length);
    EXPECT_EQ(dia.constant_coefficients, csr.constant_coefficients);
    EXPECT_EQ(dia.zero_row_sums, csr.zero_row_sums);
    EXPECT_EQ(dia.empty_rows, csr.empty_rows);
    EXPECT_EQ(dia.empty_columns, csr.empty_columns);
    EXPECT_EQ(dia.first_empty_row, csr.first_empty_row);
    EXPECT_EQ(dia.first_empty_column, csr.first_empty_column);
}

// Random matrices of every character the analysis tells apart: garbage in the slots outside
// the matrix, zeros inside, zero diagonals, symmetric, dominant and constant-coefficient ones.
std::vector<DiaData<double>> random_matrices() {
    std::vector<DiaData<double>> matrices;
    for (std::uint32_t seed = 1; seed <= 6; ++seed) {
        DiaData<double> a = testing::random_dia<double>(40, {-7, -1, 0, 2, 7, 30}, seed);
        for (std::size_t k = 0; k < a.values.size(); k += 5 + seed) a.values[k] = 0.0;
        if (seed % 2 == 0) {  // symmetric: a_ij = a_ji for the +-7 pair, no -1, +2, +30 part
            for (std::int64_t i = 7; i < a.n; ++i) a.at(0, i) = a.at(4, i - 7);
            for (std::int64_t i = 0; i < a.n; ++i) a.at(1, i) = a.at(3, i) = a.at(5, i) = 0.0;
        }
        if (seed % 3 == 0) {  // strictly dominant
            for (std::int64_t i = 0; i < a.n; ++i) a.at(2, i) = 10.0;
        }
        // Slots outside the matrix are ignored, whatever they hold.
        for (std::int64_t i = 0; i < 7; ++i) a.at(0, i) = 3.0 + static_cast<double>(i);
        matrices.push_back(a);
    }
    DiaData<double> stencil = testing::laplacian_2d(6);
    matrices.push_back(stencil);
    stencil.at(2, 17) = 0.0;  // a zero main diagonal entry: no longer a stencil
    matrices.push_back(stencil);
    DiaData<double> varied = testing::laplacian_2d(6);
    varied.at(4, 3) = -2.0;  // one other value on a diagonal: not constant, not symmetric
    matrices.push_back(varied);
    // Structurally singular: rows 9 and 30 and columns 14 and 30 without a nonzero entry.
    DiaData<double> empty = testing::random_dia<double>(40, {-7, -1, 0, 2, 7, 30}, 7);
    for (int d = 0; d < empty.num_diagonals(); ++d) {
        const int offset = empty.offsets[static_cast<std::size_t>(d)];
        for (const std::int64_t row : {9, 30}) empty.at(d, row) = 0.0;
        for (const std::int64_t column : {14, 30}) {
            if (column - offset >= 0 && column - offset < empty.n)
                empty.at(d, column - offset) = 0.0;
        }
    }
    matrices.push_back(empty);
    return matrices;
}

TEST(DiaAnalysis, AgreesWithTheCsrAnalysisOnRandomMatrices) {
    for (const auto& a : random_matrices()) {
        const MatrixProperties csr = analyze(to_csr(a));
        expect_same(analyze(a), csr);
    }
    // The set covers both answers of each property.
    int symmetric = 0, dominant = 0, constant = 0, zero_diagonal = 0, singular = 0;
    for (const auto& a : random_matrices()) {
        const MatrixProperties p = analyze(a);
        symmetric += p.symmetric;
        dominant += p.strictly_dominant;
        constant += p.constant_coefficients;
        zero_diagonal += p.zero_diagonal_rows > 0;
        singular += p.structurally_singular();
    }
    const MatrixProperties emptied = analyze(random_matrices().back());
    EXPECT_EQ(emptied.empty_rows, 2);
    EXPECT_EQ(emptied.first_empty_row, 9);
    EXPECT_EQ(emptied.empty_columns, 2);
    EXPECT_EQ(emptied.first_empty_column, 14);
    const int count = static_cast<int>(random_matrices().size());
    for (int n : {symmetric, dominant, constant, zero_diagonal, singular}) {
        EXPECT_GT(n, 0);
        EXPECT_LT(n, count);
    }
}

// A matrix met in windows (consecutive rows with the couplings that leave them dropped, each
// analysed on the rows whose couplings all stay inside) gives the whole matrix's analysis,
// bit for bit, however it is split and in whatever order the parts come.
TEST(DiaAnalysis, WindowsOfAMatrixAddUpToTheWholeAnalysis) {
    std::mt19937 generator(5);
    for (const auto& a : random_matrices()) {
        int reach = 0;
        for (int offset : a.offsets) reach = std::max(reach, std::abs(offset));
        for (int split = 0; split < 4; ++split) {
            std::vector<std::int64_t> cuts{0, a.n};
            for (int c = 0; c < split * 2; ++c) {
                cuts.push_back(std::uniform_int_distribution<std::int64_t>(0, a.n)(generator));
            }
            std::sort(cuts.begin(), cuts.end());
            std::vector<std::size_t> order(cuts.size() - 1);
            std::iota(order.begin(), order.end(), 0);
            std::shuffle(order.begin(), order.end(), generator);
            MatrixAnalysis analysis;
            // The same parts each measured apart and merged from bytes (as ranks do).
            MatrixAnalysis merged;
            for (const std::size_t part : order) {
                const std::int64_t begin = cuts[part], end = cuts[part + 1];
                const std::int64_t first = std::max<std::int64_t>(0, begin - reach);
                DiaData<double> window;
                window.n = std::min(a.n, end + reach) - first;
                window.offsets = a.offsets;
                window.values.assign(a.offsets.size() * static_cast<std::size_t>(window.n), 0.0);
                for (int d = 0; d < a.num_diagonals(); ++d) {
                    for (std::int64_t r = 0; r < window.n; ++r) {
                        const std::int64_t j = r + a.offsets[static_cast<std::size_t>(d)];
                        if (j >= 0 && j < window.n) window.at(d, r) = a.at(d, first + r);
                    }
                }
                analysis.add(window, begin - first, end - first, first);
                MatrixAnalysis alone;
                alone.add(window, begin - first, end - first, first);
                merged.merge_bytes(alone.to_bytes());
            }
            expect_same(analysis.properties(), analyze(a));
            expect_same(merged.properties(), analyze(a));
        }
    }
    MatrixAnalysis analysis;
    const DiaData<double> a = testing::laplacian_2d(4);
    EXPECT_THROW(analysis.add(a, 3, a.n + 1), std::invalid_argument);
    analysis.add(a, 0, a.n);
    const std::vector<std::byte> bytes = analysis.to_bytes();
    EXPECT_THROW(analysis.merge_bytes(std::span(bytes).first(bytes.size() - 1)),
                 std::invalid_argument);
}

TEST(DiaAnalysis, AgreesWithTheCsrAnalysisOnTheProblemMatrices) {
    using namespace framework;
    const Grid grid(2, {9, 7, 1}, {0.0, 0.0, 0.0}, {1.0, 2.0, 0.0});
    const Config config = Config::from_string(
        "[boundary]\nleft = \"0\"\nright = { type = \"neumann\", value = \"1\" }\n"
        "bottom = \"x\"\ntop = { type = \"robin\", coefficient = 2.0, value = \"0\" }\n",
        "test.toml");
    const auto boundary = BoundaryConditions::from_config(config.section("boundary"), grid);
    const auto spacing = grid.spacing();
    const auto s = diffusion_stencil(0.5, spacing.data(), 2);
    const SpatialOperator op(
        grid,
        [&](std::int64_t i, std::int64_t, std::int64_t) {
            auto varied = s;
            varied.minus[0] *= 1.0 + 0.1 * static_cast<double>(i);  // variable coefficients
            return varied;
        },
        boundary);
    for (const auto& [shift, scale] : {std::pair{0.0, 1.0}, std::pair{1.0, 0.01}}) {
        const DiaData<double> m = system_matrix(op, shift, scale);
        expect_same(analyze(m), analyze(to_csr(m)));
    }
}

TEST(DiaTranspose, EqualsTheCsrTranspose) {
    const DiaData<double> a = testing::random_dia<double>(30, {-4, 0, 1, 9}, 3);
    const DiaData<double> t = transpose(a);
    EXPECT_EQ(t.offsets, (std::vector<int>{-9, -1, 0, 4}));
    const CsrData<double> expected = transpose(to_csr(a));
    const CsrData<double> got = to_csr(t);
    EXPECT_EQ(got.row_ptr, expected.row_ptr);
    EXPECT_EQ(got.col, expected.col);
    EXPECT_EQ(got.values, expected.values);
}

// A diagonal with offset o has n - |o| slots inside the matrix: the 5-point matrix of an m x m
// grid has 5 m^2 - 2 - 2 m, the 7-point one of q^3 has 7 q^3 - 2 - 2 q - 2 q^2.
TEST(IndexLimits, DiaHoldsAGridBeyondTheCsrLimitsAndCsrRefusesIt) {
    const std::int64_t m = 16384, n = m * m;
    const std::vector<int> five = {-static_cast<int>(m), -1, 0, 1, static_cast<int>(m)};
    const std::int64_t slots = dia_slots(n, five);
    EXPECT_EQ(slots, 5 * n - 2 - 2 * m);
    EXPECT_LT(slots, max_csr_index);  // 16384^2 still fits CSR: 1.34e9 < 2^31 - 1
    // The 7-point matrix of 1024^3 does not: 7.5e9 nonzeros.
    const std::int64_t q = 1024, n3 = q * q * q;
    const std::vector<int> seven = {-static_cast<int>(q * q), -static_cast<int>(q),   -1, 0, 1,
                                    static_cast<int>(q),      static_cast<int>(q * q)};
    const std::int64_t slots3 = dia_slots(n3, seven);
    EXPECT_EQ(slots3, 7 * n3 - 2 - 2 * q - 2 * q * q);
    EXPECT_GT(slots3, max_csr_index);

    // Its properties plan a DIA (or stencil) solve, with no step that sweeps a CSR copy...
    MatrixProperties p;
    p.rows = static_cast<std::int32_t>(n3);
    p.nnz = slots3;
    p.num_diagonals = 7;
    p.symmetric = p.positive_diagonal = p.weakly_dominant = p.strictly_dominant = true;
    p.min_row_length = 4;
    p.max_row_length = 7;
    p.mean_row_length = static_cast<double>(slots3) / static_cast<double>(n3);
    const SolverPlan plan = plan_solver(p, {});
    EXPECT_EQ(plan.format, Format::dia);
    for (const auto& step : plan.fallbacks) EXPECT_NE(step.method, Method::sor);
    // ... and a format or step that would need one is refused, saying why.
    for (const SolverRequest& request :
         {SolverRequest::parse("auto", "auto", "csr"), SolverRequest::parse("cg", "ssor", "dia"),
          SolverRequest::parse("sor", "none", "dia")}) {
        try {
            plan_solver(p, request);
            ADD_FAILURE() << "no error for format "
                          << (request.format ? to_string(*request.format) : "auto");
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(std::to_string(slots3) +
                                                 " nonzeros exceed the 32-bit index limit"),
                      std::string::npos)
                << e.what();
        }
    }
    // A DIA matrix with more rows than 32-bit indices reach is refused before anything is read.
    DiaData<double> too_large;
    too_large.n = max_csr_index + 1;
    too_large.offsets = {0};
    try {
        (void)to_csr(too_large);
        ADD_FAILURE() << "no error";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("size 2147483648 exceeds the 32-bit index limit"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW((void)analyze(too_large), std::invalid_argument);
}

// Rows enough for every thread to measure its own range (chunks of 4096): each diagonal's first
// entry and any other value lying in any range, identity rows, a NaN, and the analysis over
// 1-4 threads agrees with the CSR analysis (one serial scan) on each.
TEST(DiaAnalysis, RangesOfManyThreadsJoinIntoTheCsrAnalysis) {
    const std::int64_t n = 5 * 4096 + 123;
    std::vector<DiaData<double>> matrices;
    DiaData<double> constant;
    constant.n = n;
    constant.offsets = {-300, -1, 0, 1, 300};
    constant.values.assign(5 * static_cast<std::size_t>(n), 0.0);
    for (std::int64_t i = 0; i < n; ++i) {
        for (int d = 0; d < 5; ++d) constant.at(d, i) = d == 2 ? 4.0 : -1.0;
    }
    for (std::int64_t i = 0; i < 9000; ++i) constant.at(1, i) = 0.0;  // first -1 in range 2+
    matrices.push_back(constant);
    DiaData<double> late = constant;
    late.at(3, n - 5) = -1.5;  // one other value in the last range
    matrices.push_back(late);
    DiaData<double> last_apart = constant;  // a last chunk of one other value throughout
    for (std::int64_t i = 5 * 4096; i < n; ++i) last_apart.at(3, i) = -2.0;
    matrices.push_back(last_apart);
    DiaData<double> identity = constant;
    for (std::int64_t i = 0; i < 13000; ++i) {  // identity rows, then the stencil's
        for (int d = 0; d < 5; ++d) identity.at(d, i) = d == 2 ? 1.0 : 0.0;
    }
    matrices.push_back(identity);
    DiaData<double> first_nan = constant;
    first_nan.at(4, 10000) = std::numeric_limits<double>::quiet_NaN();
    matrices.push_back(first_nan);
    DiaData<double> sevens = testing::random_dia<double>(n, {-500, -20, -1, 0, 1, 20, 500}, 4);
    matrices.push_back(sevens);
    const int threads = omp_get_max_threads();
    for (const auto& a : matrices) {
        const MatrixProperties csr = analyze(to_csr(a));
        for (int t = 1; t <= 4; ++t) {
            omp_set_num_threads(t);
            expect_same(analyze(a), csr);
        }
        omp_set_num_threads(threads);
    }
    EXPECT_TRUE(analyze(matrices[0]).constant_coefficients);
    EXPECT_FALSE(analyze(matrices[1]).constant_coefficients);
    EXPECT_FALSE(analyze(matrices[2]).constant_coefficients);
    EXPECT_TRUE(analyze(matrices[3]).constant_coefficients);
    EXPECT_FALSE(analyze(matrices[4]).constant_coefficients);
}

}  // namespace
}  // namespace simrun::solvers

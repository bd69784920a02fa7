// The CPU back-end (the reference for every GPU result) against independent computations:
// long-double loops, known solutions, and the outcome statuses of CG.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "base/kernel_table.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/methods/conjugate_gradient.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"
#include "support/random_data.hpp"

namespace simrun::solvers {
namespace {

using testing::laplacian_2d;
using testing::random_dia;
using testing::random_vector;

template <typename T>
class CpuKernels : public ::testing::Test {
protected:
    std::shared_ptr<const Backend> cpu = make_cpu_backend();
    // A few ulps of the accumulated magnitude.
    static double tolerance() { return 64 * std::numeric_limits<T>::epsilon(); }
};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuKernels, ValueTypes);

TYPED_TEST(CpuKernels, ElementwiseKernelsMatchHandComputedValues) {
    using T = TypeParam;
    const std::size_t n = 1001;
    const auto x = random_vector<T>(n, 1);
    const auto y = random_vector<T>(n, 2);
    auto a = Array<T>::from_host(this->cpu, x);
    auto b = Array<T>::from_host(this->cpu, y);
    const auto& k = this->cpu->template kernels<T>();

    k.axpy(*this->cpu, n, T(0.5), a.data(), b.data());  // b = y + 0.5 x
    auto got = b.to_host();
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(got[i], y[i] + T(0.5) * x[i]);

    b.copy_from_host(y);
    k.xpby(*this->cpu, n, a.data(), T(-2), b.data());  // b = x - 2 y
    got = b.to_host();
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(got[i], x[i] + T(-2) * y[i]);

    b.copy_from_host(y);
    Array<T> c(this->cpu, n);
    multiply(a, b, c);
    got = c.to_host();
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(got[i], x[i] * y[i]);

    fill(c, T(3));
    got = c.to_host();
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(got[i], T(3));
}

TYPED_TEST(CpuKernels, DotMatchesLongDoubleSumAndIsDeterministic) {
    using T = TypeParam;
    for (std::size_t n : {1ul, 17ul, 4096ul, 4097ul, 100003ul}) {
        const auto x = random_vector<T>(n, 3);
        const auto y = random_vector<T>(n, 4);
        long double reference = 0;
        long double magnitude = 0;
        for (std::size_t i = 0; i < n; ++i) {
            reference += static_cast<long double>(x[i]) * y[i];
            magnitude += std::abs(static_cast<long double>(x[i]) * y[i]);
        }
        const auto a = Array<T>::from_host(this->cpu, x);
        const auto b = Array<T>::from_host(this->cpu, y);
        const T first = dot(a, b);
        EXPECT_NEAR(static_cast<double>(first), static_cast<double>(reference),
                    this->tolerance() * static_cast<double>(magnitude))
            << "n = " << n;
        for (int repeat = 0; repeat < 3; ++repeat) EXPECT_EQ(dot(a, b), first);
    }
}

TYPED_TEST(CpuKernels, KrylovBasisKernelsMatchLongDoubleSums) {
    // GMRES's kernels: v_j . w for every basis vector and w . w in one pass; and
    // out = beta w + sum c_j v_j.
    using T = TypeParam;
    const std::size_t n = 3 * 4096 + 11;
    for (const int k : {1, 8, 9, max_krylov_vectors - 1}) {
        std::vector<Array<T>> vectors;
        std::vector<std::vector<T>> values;
        KrylovBasis<T> basis{};
        KrylovCoefficients<T> c{};
        for (int j = 0; j < k; ++j) {
            values.push_back(random_vector<T>(n, 100 + static_cast<std::uint32_t>(j)));
            vectors.push_back(Array<T>::from_host(this->cpu, values.back()));
            basis.vectors[j] = vectors.back().data();
            c.values[j] = static_cast<T>(0.25 * (j % 7) - 0.7);
        }
        const auto w = random_vector<T>(n, 99);
        auto wa = Array<T>::from_host(this->cpu, w);
        const auto& kernels = this->cpu->template kernels<T>();
        std::vector<T> dots(static_cast<std::size_t>(k) + 1);
        kernels.basis_dots(*this->cpu, n, k, basis, wa.data(), dots.data());
        for (int j = 0; j <= k; ++j) {
            const std::vector<T>& v = j < k ? values[static_cast<std::size_t>(j)] : w;
            long double reference = 0, magnitude = 0;
            for (std::size_t i = 0; i < n; ++i) {
                reference += static_cast<long double>(v[i]) * w[i];
                magnitude += std::abs(static_cast<long double>(v[i]) * w[i]);
            }
            EXPECT_NEAR(static_cast<double>(dots[static_cast<std::size_t>(j)]),
                        static_cast<double>(reference),
                        this->tolerance() * static_cast<double>(magnitude))
                << "k = " << k << ", vector " << j;
        }
        std::vector<T> again(dots.size());
        kernels.basis_dots(*this->cpu, n, k, basis, wa.data(), again.data());
        EXPECT_EQ(again, dots) << "k = " << k;

        Array<T> out(this->cpu, n);
        kernels.basis_combine(*this->cpu, n, k, basis, c, T(-1.5), wa.data(), out.data());
        const auto combined = out.to_host();
        for (std::size_t i = 0; i < n; ++i) {
            long double reference = -1.5L * w[i], magnitude = 1.5L * std::abs(w[i]);
            for (int j = 0; j < k; ++j) {
                const long double term =
                    static_cast<long double>(c.values[j]) * values[static_cast<std::size_t>(j)][i];
                reference += term;
                magnitude += std::abs(term);
            }
            ASSERT_NEAR(static_cast<double>(combined[i]), static_cast<double>(reference),
                        this->tolerance() * static_cast<double>(magnitude))
                << "k = " << k << ", row " << i;
        }
        // beta = 0 reads no w (a null pointer), and out may be w itself.
        kernels.basis_combine(*this->cpu, n, k, basis, c, T(0), nullptr, out.data());
        kernels.basis_combine(*this->cpu, n, 0, basis, c, T(2), out.data(), out.data());
        const auto doubled = out.to_host();
        for (std::size_t i = 0; i < n; i += 97) {
            T sum = 0;
            for (int j = 0; j < k; ++j) sum += c.values[j] * values[static_cast<std::size_t>(j)][i];
            EXPECT_EQ(doubled[i], T(2) * sum) << "row " << i;
        }
    }
}

TYPED_TEST(CpuKernels, DiaSpmvMatchesReferenceOnRandomMatrix) {
    using T = TypeParam;
    const std::int64_t n = 1000;
    const auto data = random_dia<T>(n, {-100, -7, -1, 0, 2, 31, 999}, 5);
    const auto x = random_vector<T>(static_cast<std::size_t>(n), 6);
    const DiaMatrix<T> a(this->cpu, data);
    auto xs = Array<T>::from_host(this->cpu, x);
    Array<T> y(this->cpu, static_cast<std::size_t>(n));
    a.apply(xs, y);
    const auto got = y.to_host();
    const auto expected = testing::reference_spmv(data, x);
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(static_cast<double>(got[i]), static_cast<double>(expected[i]),
                    this->tolerance() * 8)
            << "row " << i;
    }
}

// Constant coefficients kept as a stencil give the products of the general storage bit for
// bit (the same nonzero products added in the same order), and the same diagonal; a matrix
// without constant coefficients is refused, saying where.
// Host buffers (the output pipeline's) are aligned, and copies of several 1 MiB chunks (run in
// parallel) move every value, the partial last chunk included.
TEST(ChooseBackend, TheCpuWhenNamedOrWithoutAGpu) {
    const BackendDecision named = choose_backend_for_solve(BackendChoice::cpu, 1 << 30);
    EXPECT_EQ(named.backend->kind(), BackendKind::cpu);
    EXPECT_EQ(named.reason, "named by the user");
    if (cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present (the GPU tests cover it)";
    const BackendDecision automatic = choose_backend_for_solve(BackendChoice::automatic, 1 << 30);
    EXPECT_EQ(automatic.backend->kind(), BackendKind::cpu);
    EXPECT_EQ(automatic.reason, cuda_compiled() ? "auto: no CUDA GPU is available"
                                                : "auto: this build has no CUDA back-end");
}

TEST(CpuBackend, HostBuffersAreAlignedAndChunkedCopiesMoveEveryValue) {
    const auto cpu = make_cpu_backend();
    const std::size_t n = 3 * (std::size_t{1} << 17) + 12345;  // 3 MiB of doubles and a part
    const std::vector<double> values = random_vector<double>(n, 42);
    auto* host = static_cast<double*>(cpu->allocate_host(n * sizeof(double)));
    auto* device = static_cast<double*>(cpu->allocate(n * sizeof(double)));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(host) % 64, 0u);
    cpu->copy_from_host(device, values.data(), n * sizeof(double));
    cpu->copy_to_host(host, device, n * sizeof(double));
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(host[i], values[i]) << "value " << i;
    cpu->release(device);
    cpu->release_host(host);
}

// a and b (the same matrix in two storages) give the same A x, bit for bit (the same nonzero
// products added in the same order), and the same diagonal.
template <typename T>
void expect_same_products(const std::shared_ptr<const Backend>& cpu, const DiaMatrix<T>& a,
                          const DiaMatrix<T>& b, unsigned seed) {
    const std::size_t n = a.size();
    const auto x = Array<T>::from_host(cpu, random_vector<T>(n, seed));
    Array<T> y1(cpu, n), y2(cpu, n);
    a.apply(x, y1);
    b.apply(x, y2);
    EXPECT_EQ(y1.to_host(), y2.to_host());
    EXPECT_EQ(a.diagonal().to_host(), b.diagonal().to_host());
}

// A grid operator with Dirichlet sides: identity rows beside a main diagonal of 4 stay in the
// stencil storage (flagged in their mask byte; products as the general storage's in the test
// below), with their 1 in the diagonal and the host copy; with 8 diagonals no mask bit is left
// for the flag, and the storage is refused.
TEST(DiaMatrix, IdentityRowsStayInTheStencilStorage) {
    auto cpu = make_cpu_backend();
    const auto a = testing::laplacian_2d_dirichlet_rows(29);
    const auto n = static_cast<std::size_t>(a.n);
    const DiaMatrix<double> stencil(cpu, a, DiaStorage::stencil);
    ASSERT_TRUE(stencil.is_stencil());
    const auto diagonal = stencil.diagonal().to_host();
    EXPECT_EQ(diagonal[0], 1.0);       // a corner: Dirichlet
    EXPECT_EQ(diagonal[29 + 1], 4.0);  // an inner point
    EXPECT_EQ(stencil.host_data().values, a.values);
    // The float copy made on the back-end keeps the flags.
    const DiaMatrix<float> narrow(stencil);
    EXPECT_EQ(narrow.diagonal().to_host()[0], 1.0f);

    DiaData<double> wide = a;  // 8 diagonals, the extra ones holding one entry each
    for (const int offset : {-2, 2, 3}) {
        wide.offsets.push_back(offset);
        wide.values.resize(wide.values.size() + n, 0.0);
    }
    std::vector<std::pair<int, std::size_t>> order;
    for (std::size_t d = 0; d < wide.offsets.size(); ++d) order.push_back({wide.offsets[d], d});
    std::sort(order.begin(), order.end());
    DiaData<double> sorted{wide.n, {}, {}};
    for (const auto& [offset, d] : order) {
        sorted.offsets.push_back(offset);
        sorted.values.insert(sorted.values.end(), wide.values.begin() + d * n,
                             wide.values.begin() + (d + 1) * n);
    }
    for (const int offset : {-2, 2, 3}) sorted.at(sorted.find_diagonal(offset), 29 * 5 + 5) = -0.5;
    EXPECT_TRUE(analyze(a).constant_coefficients);
    EXPECT_FALSE(analyze(sorted).constant_coefficients);
    EXPECT_THROW(DiaMatrix<double>(cpu, sorted, DiaStorage::stencil), std::invalid_argument);
    // The same with one of the extra diagonals stored but empty: 7 hold entries, 8 take mask
    // bits, so the analysis does not promise the stencil either.
    sorted.at(sorted.find_diagonal(3), 29 * 5 + 5) = 0.0;
    EXPECT_FALSE(analyze(sorted).constant_coefficients);
    EXPECT_THROW(DiaMatrix<double>(cpu, sorted, DiaStorage::stencil), std::invalid_argument);
}

// Row classes: a matrix with few kinds of rows (here the 5-point Laplacian with Dirichlet
// rows, and the same with random values on one line) gives the general storage's products,
// diagonal and host copy, in double and rounded to float; one with more than 256 kinds of rows
// is refused.
TEST(DiaMatrix, RowClassesHoldMatricesWithFewKindsOfRows) {
    auto cpu = make_cpu_backend();
    auto lined = testing::laplacian_2d_dirichlet_rows(31);
    const auto line = random_vector<double>(31, 12, 1.0, 2.0);
    for (std::int64_t i = 0; i < 31; ++i) lined.at(3, 31 * 7 + i) = -line[i];
    for (const auto& a : {testing::laplacian_2d_dirichlet_rows(31), lined}) {
        const DiaMatrix<double> classes(cpu, a, DiaStorage::classes);
        const DiaMatrix<double> general(cpu, a, DiaStorage::general);
        EXPECT_EQ(classes.storage(), DiaStorage::classes);
        expect_same_products(cpu, classes, general, 13);
        EXPECT_EQ(classes.host_data().values, a.values);
        const DiaMatrix<float> narrow(classes), narrow_general(general);
        EXPECT_EQ(narrow.storage(), DiaStorage::classes);
        expect_same_products(cpu, narrow, narrow_general, 14);
    }
    auto varied = testing::laplacian_2d(40);
    const auto values = random_vector<double>(static_cast<std::size_t>(varied.n), 15, 4.0, 5.0);
    for (std::int64_t i = 0; i < varied.n; ++i)
        varied.at(2, i) = values[static_cast<std::size_t>(i)];
    EXPECT_THROW(DiaMatrix<double>(cpu, varied, DiaStorage::classes), std::invalid_argument);
}

TEST(DiaMatrix, ConstantCoefficientsAreStoredAsAStencil) {
    auto cpu = make_cpu_backend();
    for (const auto& matrix :
         {testing::laplacian_2d(37), testing::laplacian_2d_dirichlet_rows(29)}) {
        const DiaMatrix<double> stencil(cpu, matrix, DiaStorage::stencil);
        const DiaMatrix<double> general(cpu, matrix, DiaStorage::general);
        EXPECT_TRUE(stencil.is_stencil());
        EXPECT_FALSE(general.is_stencil());
        expect_same_products(cpu, stencil, general, 8);
    }
    // Eight diagonals (offsets -4 .. 3): bit 7 is the last diagonal's, not an identity flag.
    DiaData<double> eight{20, {-4, -3, -2, -1, 0, 1, 2, 3}, std::vector<double>(160, 0.0)};
    for (int d = 0; d < 8; ++d) {
        for (std::int64_t i = 0; i < 20; ++i) {
            const std::int64_t j = i + eight.offsets[static_cast<std::size_t>(d)];
            if (j >= 0 && j < 20) eight.at(d, i) = d == 4 ? 10.0 : -1.0;
        }
    }
    ASSERT_TRUE(analyze(eight).constant_coefficients);
    const DiaMatrix<double> eight_stencil(cpu, eight, DiaStorage::stencil);
    expect_same_products(cpu, eight_stencil, DiaMatrix<double>(cpu, eight), 9);
    EXPECT_EQ(eight_stencil.host_data().values, eight.values);
    const auto laplacian = testing::laplacian_2d(37);

    // Not constant coefficients: one off-diagonal value differs, or a main diagonal entry
    // is zero, or there are more than 8 diagonals.
    const auto refusal = [&](const DiaData<double>& a) {
        try {
            const DiaMatrix<double> refused(cpu, a, DiaStorage::stencil);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    auto varied = laplacian;
    varied.at(laplacian.find_diagonal(1), 5) *= 2;
    EXPECT_EQ(refusal(varied),
              "stencil storage needs constant coefficients: another value at row 5, offset 1");
    // Breaks on two diagonals: the first in diagonal order is named, as a scan diagonal by
    // diagonal meets it (the rows are read on every core).
    varied.at(laplacian.find_diagonal(-1), 30) = -7;
    EXPECT_EQ(refusal(varied),
              "stencil storage needs constant coefficients: another value at row 30, offset -1");
    auto hole = laplacian;
    hole.at(laplacian.find_diagonal(0), 3) = 0;
    EXPECT_EQ(refusal(hole),
              "stencil storage needs constant coefficients: a zero diagonal "
              "entry at row 3, offset 0");
    const auto wide = random_dia<double>(100, {-9, -8, -7, -6, -5, -4, -3, -2, -1, 0}, 4);
    EXPECT_EQ(refusal(wide),
              "stencil storage needs constant coefficients: 10 diagonals (at most 8)");
}

TEST(DiaMatrix, RejectsInconsistentData) {
    auto cpu = make_cpu_backend();
    DiaData<double> bad;
    bad.n = 4;
    bad.offsets = {0, 1};
    bad.values.assign(7, 1.0);
    EXPECT_THROW(DiaMatrix<double>(cpu, bad), std::invalid_argument);
    bad.values.assign(8, 1.0);
    bad.offsets = {1, 0};
    EXPECT_THROW(DiaMatrix<double>(cpu, bad), std::invalid_argument);
    bad.offsets = {0, 4};
    EXPECT_THROW(DiaMatrix<double>(cpu, bad), std::invalid_argument);
}

// Solves A x = A x* for a random x*; the error is checked against x* and the residual is
// recomputed independently of the solver.
double solve_and_check(const DiaData<double>& data, const Preconditioner<double>* m,
                       const DiaMatrix<double>& a, SolveResult* out) {
    auto cpu = a.backend();
    const auto n = static_cast<std::size_t>(data.n);
    const auto exact = random_vector<double>(n, 7);
    const auto b_long = testing::reference_spmv(data, exact);
    std::vector<double> b_host(b_long.begin(), b_long.end());
    const auto b = Array<double>::from_host(cpu, b_host);
    Array<double> x(cpu, n);
    fill(x, 0.0);
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-10;
    parameters.criteria.max_iterations = 2000;
    const ConjugateGradient<double> cg(a, m, parameters);
    *out = cg.solve(b, x);
    const auto solution = x.to_host();
    const auto ax = testing::reference_spmv(data, solution);
    long double r2 = 0, b2 = 0;
    for (std::size_t i = 0; i < n; ++i) {
        r2 += (b_long[i] - ax[i]) * (b_long[i] - ax[i]);
        b2 += b_long[i] * b_long[i];
    }
    double error = 0;
    for (std::size_t i = 0; i < n; ++i) error = std::max(error, std::abs(solution[i] - exact[i]));
    // The residual recomputed here agrees with the one the solver tracked, and a converged
    // solve meets the tolerance.
    const double true_relative = static_cast<double>(std::sqrt(r2 / b2));
    EXPECT_NEAR(true_relative, out->relative_residual(), 1e-3 * out->relative_residual() + 1e-13);
    if (out->converged()) {
        EXPECT_LE(true_relative, 1.01e-10);
    }
    return error;
}

TEST(ConjugateGradient, SolvesLaplacianToKnownSolution) {
    auto cpu = make_cpu_backend();
    const auto data = laplacian_2d(40);
    const DiaMatrix<double> a(cpu, data);
    SolveResult result;
    const double error = solve_and_check(data, nullptr, a, &result);
    EXPECT_EQ(result.status, SolveStatus::converged);
    // cond(A) ~ 4 m^2 / pi^2 ~ 650: error <= cond * rtol with margin.
    EXPECT_LT(error, 1e-6);
    EXPECT_EQ(result.residual_history.size(), static_cast<std::size_t>(result.iterations + 1));
    EXPECT_LE(result.iterations, data.n);
    EXPECT_LE(result.final_residual, 1e-10 * result.rhs_norm);
}

TEST(ConjugateGradient, JacobiPreconditionerHandlesBadScaling) {
    // D A D with D = diag(10^u), u uniform in [-1.5, 1.5], keeps A SPD but spreads its spectrum
    // over many decades, which slows plain CG; Jacobi removes most of the scaling again.
    auto cpu = make_cpu_backend();
    auto data = laplacian_2d(20);
    std::vector<double> scale =
        random_vector<double>(static_cast<std::size_t>(data.n), 12, -1.5, 1.5);
    for (double& s : scale) s = std::pow(10.0, s);
    for (int d = 0; d < data.num_diagonals(); ++d) {
        for (std::int64_t i = 0; i < data.n; ++i) {
            const std::int64_t j = i + data.offsets[d];
            if (j >= 0 && j < data.n) {
                data.at(d, i) *=
                    scale[static_cast<std::size_t>(i)] * scale[static_cast<std::size_t>(j)];
            }
        }
    }
    const DiaMatrix<double> a(cpu, data);
    const JacobiPreconditioner<double> jacobi(a);
    SolveResult plain, preconditioned;
    solve_and_check(data, nullptr, a, &plain);
    solve_and_check(data, &jacobi, a, &preconditioned);
    EXPECT_EQ(preconditioned.status, SolveStatus::converged);
    EXPECT_LT(preconditioned.iterations, plain.iterations);
}

TEST(ConjugateGradient, ReportsIndefiniteMatrix) {
    auto cpu = make_cpu_backend();
    DiaData<double> data;
    data.n = 50;
    data.offsets = {0};
    data.values.resize(50);
    for (int i = 0; i < 50; ++i)
        data.values[static_cast<std::size_t>(i)] = i < 25 ? 1.0 + i : -1.0 - i;
    const DiaMatrix<double> a(cpu, data);
    const auto b = Array<double>::from_host(cpu, std::vector<double>(50, 1.0));
    Array<double> x(cpu, 50);
    fill(x, 0.0);
    const ConjugateGradient<double> cg(a, nullptr, {});
    const SolveResult result = cg.solve(b, x);
    EXPECT_EQ(result.status, SolveStatus::indefinite);
    EXPECT_EQ(result.breakdown_quantity, "p'Ap");
    ASSERT_TRUE(result.breakdown_value.has_value());
    EXPECT_LE(*result.breakdown_value, 0.0);
    EXPECT_FALSE(result.converged());
}

TEST(ConjugateGradient, IterationLimitIsNotSuccess) {
    auto cpu = make_cpu_backend();
    const DiaMatrix<double> a(cpu, laplacian_2d(30));
    const auto b = Array<double>::from_host(cpu, random_vector<double>(900, 8));
    Array<double> x(cpu, 900);
    fill(x, 0.0);
    MethodParameters parameters;
    parameters.criteria.max_iterations = 5;
    const SolveResult result = ConjugateGradient<double>(a, nullptr, parameters).solve(b, x);
    EXPECT_EQ(result.status, SolveStatus::max_iterations);
    EXPECT_EQ(result.iterations, 5);
    EXPECT_GT(result.relative_residual(), 1e-8);
}

TEST(ConjugateGradient, NonFiniteRightHandSideIsReported) {
    auto cpu = make_cpu_backend();
    const DiaMatrix<double> a(cpu, laplacian_2d(10));
    auto rhs = random_vector<double>(100, 9);
    rhs[17] = std::numeric_limits<double>::quiet_NaN();
    const auto b = Array<double>::from_host(cpu, rhs);
    Array<double> x(cpu, 100);
    fill(x, 0.0);
    const SolveResult result = ConjugateGradient<double>(a, nullptr, {}).solve(b, x);
    EXPECT_EQ(result.status, SolveStatus::non_finite);
    for (double v : x.to_host()) EXPECT_TRUE(std::isfinite(v));
}

TEST(ConjugateGradient, ZeroRightHandSideConvergesImmediately) {
    auto cpu = make_cpu_backend();
    const DiaMatrix<double> a(cpu, laplacian_2d(10));
    const auto b = Array<double>::from_host(cpu, std::vector<double>(100, 0.0));
    Array<double> x(cpu, 100);
    fill(x, 0.0);
    const SolveResult result = ConjugateGradient<double>(a, nullptr, {}).solve(b, x);
    EXPECT_EQ(result.status, SolveStatus::converged);
    EXPECT_EQ(result.iterations, 0);
}

TEST(ConjugateGradient, WarmStartFromSolutionNeedsNoIterations) {
    auto cpu = make_cpu_backend();
    const auto data = laplacian_2d(12);
    const DiaMatrix<double> a(cpu, data);
    const auto b = Array<double>::from_host(cpu, random_vector<double>(144, 10));
    Array<double> x(cpu, 144);
    fill(x, 0.0);
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-9;
    const ConjugateGradient<double> cg(a, nullptr, parameters);
    ASSERT_TRUE(cg.solve(b, x).converged());
    const SolveResult again = cg.solve(b, x);
    EXPECT_EQ(again.status, SolveStatus::converged);
    EXPECT_EQ(again.iterations, 0);
}

TEST(ConjugateGradient, RejectsMismatchedSizes) {
    auto cpu = make_cpu_backend();
    const DiaMatrix<double> a(cpu, laplacian_2d(4));
    const Array<double> b(cpu, 15);
    Array<double> x(cpu, 16);
    EXPECT_THROW(ConjugateGradient<double>(a, nullptr, {}).solve(b, x), DimensionMismatch);
}

TEST(DiaMatrixHostData, GivesBackTheMatrixInBothStorages) {
    const auto cpu = make_cpu_backend();
    const DiaData<double> stencil = testing::laplacian_2d(5);
    const DiaData<double> general = testing::random_dia<double>(25, {-5, 0, 3}, 8);
    EXPECT_EQ(DiaMatrix<double>(cpu, stencil, DiaStorage::stencil).host_data().values,
              stencil.values);
    EXPECT_EQ(DiaMatrix<double>(cpu, general).host_data().values, general.values);
}

}  // namespace
}  // namespace simrun::solvers

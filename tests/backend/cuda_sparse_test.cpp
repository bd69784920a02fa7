// The CUDA sparse kernels against the CPU back-end (the reference) on random data: CSR in its
// three row bins, ELL, COO, dense, the multicolour SOR sweep and the compensated dot product,
// and the run-to-run bit reproducibility of those that reduce. Every test skips with a message
// where this build has no CUDA or the machine has no GPU.
//
// Tolerances are error bounds, not guesses: a dot product of L terms computed in any order
// (with or without FMA) is within gamma_L * sum_k |a_k x_k| of the exact value, where
// gamma_L = L u / (1 - L u) and u = eps / 2 (Higham, Accuracy and Stability, section 3.1), so
// two such results differ by at most 2 gamma_L * sum_k |a_k x_k|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

// plan_csr_bins: host code of the solver layer, declared in a header of solvers/src.
#include "base/kernel_table.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/matrices/csr_binning.hpp"
#include "simrun/solvers/matrices/csr_data.hpp"
#include "simrun/solvers/preconditioners/multicolour.hpp"
#include "support/random_data.hpp"

namespace simrun::solvers {
namespace {

using testing::random_vector;

bool gpu_present() { return cuda_compiled() && cuda_device_count() > 0; }

template <typename T>
class CudaSparse : public ::testing::Test {
protected:
    void SetUp() override {
        if (!gpu_present()) {
            GTEST_SKIP() << (cuda_compiled() ? "no CUDA GPU on this machine: GPU test skipped"
                                             : "this build has no CUDA back-end: GPU test skipped");
        }
        gpu = make_cuda_backend();
    }
    std::shared_ptr<const Backend> cpu = make_cpu_backend();
    std::shared_ptr<const Backend> gpu;
};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaSparse, ValueTypes);

template <typename T>
double gamma_bound(std::int64_t terms) {
    const double u = std::numeric_limits<T>::epsilon() / 2;
    const double nu = static_cast<double>(terms) * u;
    return nu / (1 - nu);
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Every entry within its own bound; NaN (a row never written) fails.
template <typename T>
void expect_within(const std::vector<T>& gpu, const std::vector<T>& cpu,
                   const std::vector<double>& bound, const char* what) {
    ASSERT_EQ(gpu.size(), cpu.size());
    ASSERT_EQ(gpu.size(), bound.size());
    int failures = 0;
    for (std::size_t i = 0; i < gpu.size() && failures < 10; ++i) {
        const double difference = std::abs(double(gpu[i]) - double(cpu[i]));
        if (!(difference <= bound[i])) {
            ADD_FAILURE() << what << ": entry " << i << ": gpu " << gpu[i] << ", cpu " << cpu[i]
                          << ", |difference| " << difference << " > bound " << bound[i];
            ++failures;
        }
    }
}

// A sentinel for y, so that a row the kernel never writes shows up as NaN.
template <typename T>
std::vector<T> not_a_number(std::size_t n) {
    return std::vector<T>(n, std::numeric_limits<T>::quiet_NaN());
}

// CSR with the given row lengths: distinct, sorted, random columns; values in [-1, 1].
template <typename T>
CsrData<T> random_csr(const std::vector<std::int32_t>& lengths, std::int32_t cols,
                      std::uint32_t seed) {
    std::mt19937 generator(seed);
    std::uniform_int_distribution<std::int32_t> column(0, cols - 1);
    std::vector<std::int32_t> all(static_cast<std::size_t>(cols));
    std::iota(all.begin(), all.end(), 0);
    CsrData<T> a;
    a.rows = static_cast<std::int32_t>(lengths.size());
    a.cols = cols;
    for (const std::int32_t length : lengths) {
        std::vector<std::int32_t> picked;
        if (length > cols / 8) {
            std::sample(all.begin(), all.end(), std::back_inserter(picked), length, generator);
        } else {
            while (static_cast<std::int32_t>(picked.size()) < length) {
                for (auto k = static_cast<std::int32_t>(picked.size()); k < length; ++k) {
                    picked.push_back(column(generator));
                }
                std::sort(picked.begin(), picked.end());
                picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
            }
        }
        a.col.insert(a.col.end(), picked.begin(), picked.end());
        a.row_ptr.push_back(static_cast<std::int32_t>(a.col.size()));
    }
    a.values = random_vector<T>(a.col.size(), seed + 1);
    return a;
}

// Per row: 2 gamma_L sum_k |a_ik x_col(k)|, L the row's length (0 for an empty row: both
// back-ends must write an exact zero).
template <typename T>
std::vector<double> spmv_bounds(const CsrData<T>& a, const std::vector<T>& x) {
    std::vector<double> bound(static_cast<std::size_t>(a.rows));
    for (std::int32_t i = 0; i < a.rows; ++i) {
        long double magnitude = 0;
        for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            magnitude += std::abs(static_cast<long double>(a.values[k]) * x[a.col[k]]);
        }
        bound[i] = 2 * gamma_bound<T>(a.row_length(i)) * static_cast<double>(magnitude);
    }
    return bound;
}

// Many short rows (a ninth empty), some of 7, 40 and 300 entries, two of 5000 and two of 100000:
// rows for all three bins.
std::vector<std::int32_t> uneven_lengths() {
    std::mt19937 generator(7);
    std::uniform_int_distribution<std::int32_t> short_length(1, 6);
    std::vector<std::int32_t> lengths(30000);
    for (std::size_t i = 0; i < lengths.size(); ++i) {
        lengths[i] = i % 9 == 0 ? 0 : short_length(generator);
    }
    for (std::size_t k = 0; k < 40; ++k) lengths[100 + 701 * k] = 7;
    for (std::size_t k = 0; k < 40; ++k) lengths[200 + 701 * k] = 40;
    for (std::size_t k = 0; k < 20; ++k) lengths[300 + 1409 * k] = 300;
    lengths[5000] = lengths[17000] = 5000;
    lengths[9000] = lengths[29999] = 100000;
    return lengths;
}
constexpr std::int32_t uneven_cols = 120000;

// A CSR matrix on one back-end, with its bins; view() points into the arrays.
template <typename T>
struct CsrOnBackend {
    CsrOnBackend(const std::shared_ptr<const Backend>& backend, const CsrData<T>& a,
                 const CsrBinPlan& plan)
        : rows(a.rows),
          cols(a.cols),
          row_ptr(Array<std::int32_t>::from_host(backend, a.row_ptr)),
          col(Array<std::int32_t>::from_host(backend, a.col)),
          binned_rows(Array<std::int32_t>::from_host(backend, plan.binned_rows)),
          values(Array<T>::from_host(backend, a.values)) {
        std::copy(plan.bin_offsets.begin(), plan.bin_offsets.end(), bin_offsets);
    }
    CsrView<T> view(bool with_bins = true) const {
        CsrView<T> v{rows, cols, row_ptr.data(), col.data(), values.data(), {}};
        if (with_bins) {
            v.bins.binned_rows = binned_rows.data();
            std::copy(bin_offsets, bin_offsets + 4, v.bins.bin_offsets);
        }
        return v;
    }
    std::int32_t rows, cols;
    Array<std::int32_t> row_ptr, col, binned_rows;
    Array<T> values;
    std::int32_t bin_offsets[4] = {0, 0, 0, 0};
};

template <typename T>
std::vector<T> run_csr_spmv(const std::shared_ptr<const Backend>& backend, const CsrData<T>& a,
                            const CsrBinPlan& plan, const std::vector<T>& x,
                            bool with_bins = true) {
    const CsrOnBackend<T> matrix(backend, a, plan);
    const auto xa = Array<T>::from_host(backend, x);
    auto ya = Array<T>::from_host(backend, not_a_number<T>(static_cast<std::size_t>(a.rows)));
    backend->template kernels<T>().csr_spmv(*backend, matrix.view(with_bins), xa.data(), ya.data());
    return ya.to_host();
}

TYPED_TEST(CudaSparse, CsrSpmvUsesAllThreeBinsAndMatchesCpu) {
    using T = TypeParam;
    const auto a = random_csr<T>(uneven_lengths(), uneven_cols, 51);
    const CsrBinPlan plan = plan_csr_bins(a.row_ptr);
    for (int b = 0; b < 3; ++b) {
        ASSERT_GT(plan.bin_offsets[b + 1], plan.bin_offsets[b]) << "bin " << b << " is empty";
    }
    const auto x = random_vector<T>(static_cast<std::size_t>(a.cols), 52);
    const auto bound = spmv_bounds(a, x);
    const auto on_cpu = run_csr_spmv(this->cpu, a, plan, x);
    expect_within(run_csr_spmv(this->gpu, a, plan, x), on_cpu, bound, "binned CSR");
    // Without bins: one warp per row.
    expect_within(run_csr_spmv(this->gpu, a, plan, x, false), on_cpu, bound, "unbinned CSR");
}

TYPED_TEST(CudaSparse, EllSpmvMatchesCpu) {
    using T = TypeParam;
    std::mt19937 generator(61);
    std::uniform_int_distribution<std::int32_t> length(0, 24);
    std::vector<std::int32_t> lengths(4001);
    for (auto& l : lengths) l = length(generator);
    const auto a = random_csr<T>(lengths, 5000, 62);
    const auto x = random_vector<T>(static_cast<std::size_t>(a.cols), 63);
    // ELLPACK-R, column-major; padding is column 0, value 0.
    const std::int32_t width = *std::max_element(lengths.begin(), lengths.end());
    const std::size_t slots = static_cast<std::size_t>(width) * static_cast<std::size_t>(a.rows);
    std::vector<std::int32_t> col(slots, 0);
    std::vector<T> values(slots, T(0));
    for (std::int32_t i = 0; i < a.rows; ++i) {
        for (std::int32_t k = 0; k < a.row_length(i); ++k) {
            const std::size_t slot = static_cast<std::size_t>(k) * a.rows + i;
            col[slot] = a.col[a.row_ptr[i] + k];
            values[slot] = a.values[a.row_ptr[i] + k];
        }
    }
    auto run = [&](const std::shared_ptr<const Backend>& b) {
        const auto cola = Array<std::int32_t>::from_host(b, col);
        const auto valuesa = Array<T>::from_host(b, values);
        const auto lengtha = Array<std::int32_t>::from_host(b, lengths);
        const auto xa = Array<T>::from_host(b, x);
        auto ya = Array<T>::from_host(b, not_a_number<T>(lengths.size()));
        const EllView<T> view{a.rows, width, cola.data(), valuesa.data(), lengtha.data()};
        b->template kernels<T>().ell_spmv(*b, view, xa.data(), ya.data());
        return ya.to_host();
    };
    expect_within(run(this->gpu), run(this->cpu), spmv_bounds(a, x), "ELL");
}

// COO triplets (sorted by row, then column) of a CSR matrix, run on one back-end.
template <typename T>
std::vector<T> run_coo_spmv(const std::shared_ptr<const Backend>& backend, const CsrData<T>& a,
                            const std::vector<T>& x) {
    std::vector<std::int32_t> row(a.col.size());
    for (std::int32_t i = 0; i < a.rows; ++i) {
        std::fill(row.begin() + a.row_ptr[i], row.begin() + a.row_ptr[i + 1], i);
    }
    const auto& kernels = backend->template kernels<T>();
    const auto rowa = Array<std::int32_t>::from_host(backend, row);
    const auto cola = Array<std::int32_t>::from_host(backend, a.col);
    const auto valuesa = Array<T>::from_host(backend, a.values);
    const auto xa = Array<T>::from_host(backend, x);
    auto ya = Array<T>::from_host(backend, not_a_number<T>(static_cast<std::size_t>(a.rows)));
    const std::size_t bytes = kernels.coo_workspace_bytes(a.rows, a.nnz());
    Array<unsigned char> workspace(backend, bytes);
    const CooView<T> view{a.rows,         a.nnz(),          rowa.data(), cola.data(),
                          valuesa.data(), workspace.data(), bytes};
    kernels.coo_spmv(*backend, view, xa.data(), ya.data());
    return ya.to_host();
}

// Row lengths for COO: empty rows at both ends and between, rows spanning many 1024-entry tiles,
// rows that fill whole tiles exactly, and a matrix within one tile (no workspace).
std::vector<std::vector<std::int32_t>> coo_cases() {
    std::mt19937 generator(71);
    std::uniform_int_distribution<std::int32_t> length(0, 8);
    std::vector<std::int32_t> mixed(5000);
    for (auto& l : mixed) l = length(generator);
    std::fill(mixed.begin(), mixed.begin() + 10, 0);
    std::fill(mixed.end() - 10, mixed.end(), 0);
    mixed[1000] = 100000;
    mixed[2000] = 3000;
    mixed[2001] = 1023;
    mixed[2002] = 1025;
    std::vector<std::int32_t> small(50);
    for (auto& l : small) l = length(generator);
    return {mixed, small, {0, 4096, 0}, {1024, 1024, 1024}, {0, 0, 3000, 0, 0}};
}

TYPED_TEST(CudaSparse, CooSpmvMatchesCpu) {
    using T = TypeParam;
    std::uint32_t seed = 80;
    for (const auto& lengths : coo_cases()) {
        const auto a = random_csr<T>(lengths, uneven_cols, seed++);
        const auto x = random_vector<T>(static_cast<std::size_t>(a.cols), seed++);
        expect_within(run_coo_spmv(this->gpu, a, x), run_coo_spmv(this->cpu, a, x),
                      spmv_bounds(a, x), "COO");
    }
}

TYPED_TEST(CudaSparse, DenseSpmvMatchesCpu) {
    using T = TypeParam;
    for (const auto& shape : {std::pair{300, 1000}, std::pair{257, 33}, std::pair{5, 1}}) {
        const int rows = shape.first, cols = shape.second;
        const auto values = random_vector<T>(static_cast<std::size_t>(rows) * cols, 91);
        const auto x = random_vector<T>(static_cast<std::size_t>(cols), 92);
        std::vector<double> bound(static_cast<std::size_t>(rows));
        for (int i = 0; i < rows; ++i) {
            long double magnitude = 0;
            for (int j = 0; j < cols; ++j) {
                magnitude += std::abs(
                    static_cast<long double>(values[static_cast<std::size_t>(i) * cols + j]) *
                    x[static_cast<std::size_t>(j)]);
            }
            bound[static_cast<std::size_t>(i)] =
                2 * gamma_bound<T>(cols) * static_cast<double>(magnitude);
        }
        auto run = [&](const std::shared_ptr<const Backend>& b) {
            const auto valuesa = Array<T>::from_host(b, values);
            const auto xa = Array<T>::from_host(b, x);
            auto ya = Array<T>::from_host(b, not_a_number<T>(static_cast<std::size_t>(rows)));
            b->template kernels<T>().dense_spmv(*b, DenseView<T>{rows, cols, valuesa.data()},
                                                xa.data(), ya.data());
            return ya.to_host();
        };
        expect_within(run(this->gpu), run(this->cpu), bound, "dense");
    }
}

TYPED_TEST(CudaSparse, SorColourSweepsMatchCpuOnRedBlackLaplacian) {
    using T = TypeParam;
    // 2D 5-point Laplacian on an m x m grid; red rows (ix + iy even) couple only to black ones.
    const std::int32_t m = 97;
    const std::int32_t n = m * m;
    CsrData<T> a;
    a.rows = a.cols = n;
    std::vector<std::int32_t> colour_rows[2];
    for (std::int32_t i = 0; i < n; ++i) {
        const std::int32_t ix = i % m, iy = i / m;
        auto add = [&](std::int32_t j, T value) {
            a.col.push_back(j);
            a.values.push_back(value);
        };
        if (iy > 0) add(i - m, T(-1));
        if (ix > 0) add(i - 1, T(-1));
        add(i, T(4));
        if (ix < m - 1) add(i + 1, T(-1));
        if (iy < m - 1) add(i + m, T(-1));
        a.row_ptr.push_back(static_cast<std::int32_t>(a.col.size()));
        colour_rows[(ix + iy) % 2].push_back(i);
    }
    const auto b = random_vector<T>(static_cast<std::size_t>(n), 101);
    const auto x0 = random_vector<T>(static_cast<std::size_t>(n), 102);
    const std::vector<T> inv_diag(static_cast<std::size_t>(n), T(0.25));
    const T omega = T(1.5);
    Colouring order;
    order.rows = colour_rows[0];
    order.rows.insert(order.rows.end(), colour_rows[1].begin(), colour_rows[1].end());
    order.offsets = {0, static_cast<std::int32_t>(colour_rows[0].size()), n};

    // x after the red sweep and after the black one.
    auto run = [&](const std::shared_ptr<const Backend>& backend) {
        const MulticolourSweeper<T> sweeper(backend, a, order, inv_diag);
        const auto ba = Array<T>::from_host(backend, b);
        auto xa = Array<T>::from_host(backend, x0);
        std::vector<std::vector<T>> states;
        for (int c = 0; c < 2; ++c) {
            backend->template kernels<T>().sor_colour_sweep(
                *backend, sweeper.view(omega), order.offsets[static_cast<std::size_t>(c)],
                order.offsets[static_cast<std::size_t>(c) + 1], ba.data(), xa.data());
            states.push_back(xa.to_host());
        }
        return states;
    };
    const auto on_cpu = run(this->cpu);
    const auto on_gpu = run(this->gpu);

    // Row i's update rounds at most L_i + 4 times on a path (L_i - 1 products and subtractions,
    // then 1 - omega, two products, one more product and the sum): each back-end is within
    // gamma_{L_i + 4} m_i, m_i = |1 - omega||x_i| + omega |d_i| (|b_i| + sum_j |a_ij x_j|). The
    // black sweep also carries the red rows' differences through omega |d_i| sum_j |a_ij|.
    std::vector<double> bound(static_cast<std::size_t>(n), 0.0);
    const std::vector<T>* before = &x0;
    for (int c = 0; c < 2; ++c) {
        const std::vector<double> carried = bound;
        for (const std::int32_t i : colour_rows[c]) {
            double magnitude = std::abs(double(b[i]));
            double propagated = 0;
            for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
                if (a.col[k] == i) continue;
                magnitude += std::abs(double(a.values[k]) * double((*before)[a.col[k]]));
                propagated += std::abs(double(a.values[k])) * carried[a.col[k]];
            }
            const double scale = std::abs(double(omega) * double(inv_diag[i]));
            const double m_i =
                std::abs(1 - double(omega)) * std::abs(double((*before)[i])) + scale * magnitude;
            bound[i] = 2 * gamma_bound<T>(a.row_length(i) + 4) * m_i + scale * propagated;
        }
        before = &on_cpu[static_cast<std::size_t>(c)];
        expect_within(on_gpu[static_cast<std::size_t>(c)], on_cpu[static_cast<std::size_t>(c)],
                      bound, c == 0 ? "SOR red sweep" : "SOR black sweep");
    }
}

TYPED_TEST(CudaSparse, DotCompensatedMatchesCpu) {
    using T = TypeParam;
    const double eps = std::numeric_limits<T>::epsilon();
    for (std::size_t n : {1ul, 255ul, 256ul, 100000ul, (1ul << 22) + 7}) {
        const auto x = random_vector<T>(n, 111), y = random_vector<T>(n, 112);
        long double magnitude = 0;
        for (std::size_t i = 0; i < n; ++i) {
            magnitude += std::abs(static_cast<long double>(x[i]) * y[i]);
        }
        auto run = [&](const std::shared_ptr<const Backend>& b) {
            const auto xa = Array<T>::from_host(b, x), ya = Array<T>::from_host(b, y);
            return b->template kernels<T>().dot_compensated(*b, n, xa.data(), ya.data());
        };
        // Both add the same rounded products; a compensated sum of them errs by at most
        // u |sum| + O((chunk u)^2) sum |p| (CPU chunks of 4096: about eps / 2 for float), so
        // the two differ by a few eps * sum |x_i y_i|.
        EXPECT_NEAR(double(run(this->gpu)), double(run(this->cpu)),
                    4 * eps * static_cast<double>(magnitude))
            << "n = " << n;
    }
}

TEST(CudaSparseFloat, DotCompensatedBeatsPlainDotOnIllConditionedSum) {
    if (!gpu_present()) {
        GTEST_SKIP() << (cuda_compiled() ? "no CUDA GPU on this machine: GPU test skipped"
                                         : "this build has no CUDA back-end: GPU test skipped");
    }
    const auto gpu = make_cuda_backend();
    // x_i y_i are exact in float (12-bit integer times 2^e, times a 12-bit integer); the second
    // half cancels the first except for a small term every 256 pairs. The exact sum of these
    // integers is computed in 64-bit integers; sum |x_i y_i| / |sum| is about 4e6.
    const std::size_t n = 1 << 20, half = n / 2;
    std::mt19937 generator(121);
    std::uniform_int_distribution<int> mantissa_x(1, 4095), exponent(0, 10), mantissa_y(1, 2047),
        sign(0, 1), perturbation(1, 3);
    std::vector<float> x(n), y(n);
    for (std::size_t i = 0; i < half; ++i) {
        x[i] = std::ldexp(float(mantissa_x(generator)), exponent(generator));
        y[i] = float(mantissa_y(generator)) * (sign(generator) != 0 ? 1.0f : -1.0f);
        x[i + half] = x[i];
        y[i + half] = -y[i];
        if (i % 256 == 0) {
            y[i + half] += float(perturbation(generator)) * (sign(generator) != 0 ? 1.0f : -1.0f);
        }
    }
    std::int64_t exact = 0;
    double magnitude = 0;
    for (std::size_t i = 0; i < n; ++i) {
        exact += static_cast<std::int64_t>(x[i]) * static_cast<std::int64_t>(y[i]);
        magnitude += std::abs(double(x[i]) * double(y[i]));
    }
    ASSERT_NE(exact, 0);
    const auto xa = Array<float>::from_host(gpu, x), ya = Array<float>::from_host(gpu, y);
    const auto& kernels = gpu->kernels<float>();
    const float plain = kernels.dot(*gpu, n, xa.data(), ya.data());
    const float compensated = kernels.dot_compensated(*gpu, n, xa.data(), ya.data());
    const double plain_error = std::abs(double(plain) - double(exact));
    const double compensated_error = std::abs(double(compensated) - double(exact));
    const double eps = std::numeric_limits<float>::epsilon();
    // Compensated: the final rounding u |sum| plus second-order terms ~ log2(n) u^2 sum |p|.
    EXPECT_LE(compensated_error, eps * std::abs(double(exact)) + 32 * eps * eps * magnitude);
    EXPECT_LT(100 * compensated_error, plain_error)
        << "plain " << plain << ", compensated " << compensated << ", exact " << exact;
}

TYPED_TEST(CudaSparse, CsrCooAndCompensatedDotAreBitReproducible) {
    using T = TypeParam;
    const auto a = random_csr<T>(uneven_lengths(), uneven_cols, 131);
    const CsrBinPlan plan = plan_csr_bins(a.row_ptr);
    const auto x = random_vector<T>(static_cast<std::size_t>(a.cols), 132);
    const std::size_t n = (1ul << 22) + 7;
    const auto u = random_vector<T>(n, 133), v = random_vector<T>(n, 134);
    const auto ua = Array<T>::from_host(this->gpu, u), va = Array<T>::from_host(this->gpu, v);
    const auto& kernels = this->gpu->template kernels<T>();

    const auto csr_first = run_csr_spmv(this->gpu, a, plan, x);
    const auto coo_first = run_coo_spmv(this->gpu, a, x);
    const T dot_first = kernels.dot_compensated(*this->gpu, n, ua.data(), va.data());
    for (int repeat = 0; repeat < 3; ++repeat) {
        EXPECT_TRUE(same_bits(run_csr_spmv(this->gpu, a, plan, x), csr_first))
            << "csr_spmv, repeat " << repeat;
        EXPECT_TRUE(same_bits(run_coo_spmv(this->gpu, a, x), coo_first))
            << "coo_spmv, repeat " << repeat;
        const T dot = kernels.dot_compensated(*this->gpu, n, ua.data(), va.data());
        EXPECT_EQ(std::memcmp(&dot, &dot_first, sizeof(T)), 0)
            << "dot_compensated, repeat " << repeat;
    }
}

}  // namespace
}  // namespace simrun::solvers

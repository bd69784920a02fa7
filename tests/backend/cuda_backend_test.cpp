// The CUDA back-end against the CPU back-end (the reference), on random data. Every test skips
// with a message where this build has no CUDA or the machine has no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <type_traits>
#include <utility>

#include "base/kernel_table.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/matrices/sparse_matrices.hpp"
#include "simrun/solvers/methods/conjugate_gradient.hpp"
#include "simrun/solvers/multigrid/multigrid_preconditioner.hpp"
#include "simrun/solvers/preconditioners/multicolour.hpp"
#include "simrun/solvers/preconditioners/preconditioner.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"
#include "support/random_data.hpp"
#include "support/test_matrices.hpp"

namespace simrun::solvers {
namespace {

using testing::random_dia;
using testing::random_vector;

std::shared_ptr<const Backend> gpu_backend() {
    if (!cuda_compiled()) return nullptr;
    if (cuda_device_count() == 0) return nullptr;
    return make_cuda_backend();
}

#define SIMRUN_REQUIRE_GPU(gpu)                                                                  \
    if (!(gpu)) {                                                                                \
        GTEST_SKIP() << (cuda_compiled() ? "no CUDA GPU on this machine: GPU test skipped"       \
                                         : "this build has no CUDA back-end: GPU test skipped"); \
    }

template <typename T>
class CudaVersusCpu : public ::testing::Test {
protected:
    void SetUp() override { gpu = gpu_backend(); }
    std::shared_ptr<const Backend> cpu = make_cpu_backend();
    std::shared_ptr<const Backend> gpu;
    static constexpr double eps = std::numeric_limits<T>::epsilon();
};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaVersusCpu, ValueTypes);

// The GPU may contract a*b+c into one FMA where the CPU rounds twice: allow a few ulps.
template <typename T>
void expect_close(const std::vector<T>& gpu, const std::vector<T>& cpu, double tolerance) {
    ASSERT_EQ(gpu.size(), cpu.size());
    for (std::size_t i = 0; i < gpu.size(); ++i) {
        const double scale = std::max(1.0, std::abs(static_cast<double>(cpu[i])));
        ASSERT_NEAR(static_cast<double>(gpu[i]), static_cast<double>(cpu[i]), tolerance * scale)
            << "entry " << i;
    }
}

TYPED_TEST(CudaVersusCpu, ElementwiseKernels) {
    using T = TypeParam;
    SIMRUN_REQUIRE_GPU(this->gpu);
    const std::size_t n = 1 << 20 | 123;
    const auto x = random_vector<T>(n, 11), y = random_vector<T>(n, 12),
               z = random_vector<T>(n, 13);
    auto run = [&](const std::shared_ptr<const Backend>& b) {
        auto xa = Array<T>::from_host(b, x), ya = Array<T>::from_host(b, y);
        auto za = Array<T>::from_host(b, z), wa = Array<T>::from_host(b, z);
        const auto& k = b->template kernels<T>();
        k.axpy(*b, n, T(0.75), xa.data(), ya.data());
        k.xpby(*b, n, ya.data(), T(-0.5), za.data());
        k.multiply(*b, n, xa.data(), za.data(), wa.data());
        k.cg_step_1(*b, n, T(0.3), wa.data(), xa.data());
        k.cg_step_2(*b, n, T(1.7), xa.data(), wa.data(), ya.data(), za.data());
        std::vector<T> out = ya.to_host();
        const auto zs = za.to_host();
        out.insert(out.end(), zs.begin(), zs.end());
        return out;
    };
    expect_close(run(this->gpu), run(this->cpu), 16 * this->eps);
}

// The received halo put in its places (a box halo's scatter) on random data: distinct indices in
// any order, the other values untouched.
TYPED_TEST(CudaVersusCpu, HaloScatter) {
    using T = TypeParam;
    SIMRUN_REQUIRE_GPU(this->gpu);
    const std::size_t n = 1 << 18 | 17, received = 50000;
    const auto x = random_vector<T>(n, 21), values = random_vector<T>(received, 22);
    std::vector<std::int64_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<std::int64_t>(i);
    std::mt19937 generator(23);
    std::shuffle(all.begin(), all.end(), generator);
    const std::vector<std::int64_t> index(all.begin(), all.begin() + received);
    auto run = [&](const std::shared_ptr<const Backend>& b) {
        auto xa = Array<T>::from_host(b, x);
        const auto va = Array<T>::from_host(b, values);
        const auto ia = Array<std::int64_t>::from_host(b, index);
        b->template kernels<T>().scatter(*b, received, ia.data(), va.data(), xa.data());
        return xa.to_host();
    };
    const std::vector<T> on_gpu = run(this->gpu), on_cpu = run(this->cpu);
    std::vector<T> expected = x;
    for (std::size_t i = 0; i < received; ++i) expected[index[i]] = values[i];
    EXPECT_EQ(on_gpu, expected);
    EXPECT_EQ(on_cpu, expected);
}

// A part's points between a vector of them alone and their places in a window's vector, in
// the other precision, on random data: a 2D part inside its window, a 3D one touching two of
// its sides, a run of a line and an empty part; the window's other values untouched.
TYPED_TEST(CudaVersusCpu, PartCopiedIntoAndOutOfItsWindow) {
    using T = TypeParam;
    using Other = OtherPrecision<T>;
    SIMRUN_REQUIRE_GPU(this->gpu);
    for (const auto& [window, part] :
         {std::pair{BoxShape{2, {301, 257, 1}}, BoxRange{{1, 0, 0}, {300, 256, 1}}},
          std::pair{BoxShape{3, {65, 34, 40}}, BoxRange{{0, 1, 3}, {64, 34, 39}}},
          std::pair{BoxShape{1, {1000, 1, 1}}, BoxRange{{17, 0, 0}, {990, 1, 1}}},
          std::pair{BoxShape{2, {30, 20, 1}}, BoxRange{{5, 4, 0}, {5, 9, 1}}}}) {
        const auto n = static_cast<std::size_t>(part.size());
        const auto size = static_cast<std::size_t>(window.size());
        const auto packed = random_vector<T>(n, 31);
        const auto in_window = random_vector<T>(size, 32);
        const auto background = random_vector<Other>(size, 33);
        auto run = [&](const std::shared_ptr<const Backend>& b) {
            const auto from_packed = Array<T>::from_host(b, packed);
            const auto from_window = Array<T>::from_host(b, in_window);
            auto into_window = Array<Other>::from_host(b, background);
            Array<Other> out(b, n);
            const KernelTable<T>& kernels = b->template kernels<T>();
            kernels.copy_part_to_other(*b, window, part, true, from_packed.data(),
                                       into_window.data());
            kernels.copy_part_to_other(*b, window, part, false, from_window.data(), out.data());
            return std::pair{into_window.to_host(), out.to_host()};
        };
        std::vector<Other> expected_window = background, expected_out;
        std::size_t p = 0;
        for (std::int64_t k = part.lower[2]; k < part.upper[2]; ++k) {
            for (std::int64_t j = part.lower[1]; j < part.upper[1]; ++j) {
                for (std::int64_t i = part.lower[0]; i < part.upper[0]; ++i, ++p) {
                    const auto w =
                        static_cast<std::size_t>(i + window.points[0] * (j + window.points[1] * k));
                    expected_window[w] = static_cast<Other>(packed[p]);
                    expected_out.push_back(static_cast<Other>(in_window[w]));
                }
            }
        }
        for (const auto& b : {this->gpu, this->cpu}) {
            const auto [got_window, got_out] = run(b);
            EXPECT_EQ(got_window, expected_window);
            EXPECT_EQ(got_out, expected_out);
        }
    }
}

// The halo's kernels on random data: the rows gathered for a neighbour (in any order, some
// twice), and a neighbour's couplings added to their rows (rows in any order, up to 5 entries
// each, slots repeating).
TYPED_TEST(CudaVersusCpu, HaloGatherAndCouplings) {
    using T = TypeParam;
    SIMRUN_REQUIRE_GPU(this->gpu);
    const std::size_t n = 1 << 18 | 31, gathered = 40000, halo = 30000;
    const auto x = random_vector<T>(n, 15), y = random_vector<T>(n, 16);
    const auto h = random_vector<T>(halo, 17);
    std::mt19937 generator(18);
    std::vector<std::int64_t> index(gathered), rows, starts{0};
    for (auto& i : index) i = std::uniform_int_distribution<std::int64_t>(0, n - 1)(generator);
    std::vector<std::int32_t> slots;
    for (std::size_t row = 0; row < n; row += 1 + generator() % 7) {
        rows.push_back(static_cast<std::int64_t>(row));
        for (auto e = generator() % 6; e > 0; --e) {
            slots.push_back(std::uniform_int_distribution<std::int32_t>(0, halo - 1)(generator));
        }
        starts.push_back(static_cast<std::int64_t>(slots.size()));
    }
    std::shuffle(rows.begin(), rows.end(), generator);
    const auto values = random_vector<T>(slots.size(), 19);
    auto run = [&](const std::shared_ptr<const Backend>& b) {
        const auto xa = Array<T>::from_host(b, x), ha = Array<T>::from_host(b, h);
        auto ya = Array<T>::from_host(b, y);
        Array<T> out(b, gathered);
        const auto ia = Array<std::int64_t>::from_host(b, index);
        const auto ra = Array<std::int64_t>::from_host(b, rows);
        const auto sa = Array<std::int64_t>::from_host(b, starts);
        const auto la = Array<std::int32_t>::from_host(b, slots);
        const auto va = Array<T>::from_host(b, values);
        const auto& k = b->template kernels<T>();
        k.gather(*b, gathered, ia.data(), xa.data(), out.data());
        k.add_couplings(*b, rows.size(), ra.data(), sa.data(), la.data(), va.data(), ha.data(),
                        ya.data());
        std::vector<T> result = out.to_host();
        const auto ys = ya.to_host();
        result.insert(result.end(), ys.begin(), ys.end());
        return result;
    };
    const std::vector<T> on_gpu = run(this->gpu), on_cpu = run(this->cpu);
    for (std::size_t i = 0; i < gathered; ++i) ASSERT_EQ(on_gpu[i], x[index[i]]) << i;
    // The couplings in double on the host: both back-ends to a few ulps of it.
    std::vector<T> expected(on_cpu.begin(), on_cpu.begin() + gathered);
    std::vector<double> sums(y.begin(), y.end());
    for (std::size_t r = 0; r < rows.size(); ++r) {
        for (std::int64_t e = starts[r]; e < starts[r + 1]; ++e) {
            sums[rows[r]] += double(values[e]) * double(h[slots[e]]);
        }
    }
    expected.insert(expected.end(), sums.begin(), sums.end());
    expect_close(on_cpu, expected, 16 * this->eps);
    expect_close(on_gpu, on_cpu, 16 * this->eps);
}

// The conversion to the other precision rounds (or widens) each value exactly as a cast does,
// on both back-ends alike: bit for bit.
TYPED_TEST(CudaVersusCpu, CopyToTheOtherPrecision) {
    using T = TypeParam;
    using Other = OtherPrecision<T>;
    SIMRUN_REQUIRE_GPU(this->gpu);
    const std::size_t n = 1 << 20 | 77;
    const auto x = random_vector<T>(n, 14);
    auto run = [&](const std::shared_ptr<const Backend>& b) {
        const auto xa = Array<T>::from_host(b, x);
        Array<Other> ya(b, n);
        b->template kernels<T>().copy_to_other(*b, n, xa.data(), ya.data());
        return ya.to_host();
    };
    const std::vector<Other> on_gpu = run(this->gpu), on_cpu = run(this->cpu);
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(on_gpu[i], static_cast<Other>(x[i])) << i;
        ASSERT_EQ(on_cpu[i], static_cast<Other>(x[i])) << i;
    }
}

TYPED_TEST(CudaVersusCpu, DotProduct) {
    using T = TypeParam;
    SIMRUN_REQUIRE_GPU(this->gpu);
    for (std::size_t n : {1ul, 255ul, 256ul, 100000ul, (1ul << 22) + 7}) {
        const auto x = random_vector<T>(n, 21), y = random_vector<T>(n, 22);
        double magnitude = 0;
        for (std::size_t i = 0; i < n; ++i) magnitude += std::abs(double(x[i]) * double(y[i]));
        const T on_cpu = dot(Array<T>::from_host(this->cpu, x), Array<T>::from_host(this->cpu, y));
        const auto xg = Array<T>::from_host(this->gpu, x), yg = Array<T>::from_host(this->gpu, y);
        const T on_gpu = dot(xg, yg);
        // Both sums carry rounding errors of at most ~ log2(n) eps * sum |x_i y_i|.
        EXPECT_NEAR(double(on_gpu), double(on_cpu), 2 * 32 * this->eps * magnitude) << "n = " << n;
        for (int repeat = 0; repeat < 3; ++repeat) EXPECT_EQ(dot(xg, yg), on_gpu) << "n = " << n;
    }
}

TEST(ChooseBackend, SmallSolvesStayOnTheCpuAndRunsAndLargeSolvesGoToTheGpu) {
    SIMRUN_REQUIRE_GPU(gpu_backend());
    const BackendDecision small = choose_backend_for_solve(BackendChoice::automatic, 960);
    EXPECT_EQ(small.backend->kind(), BackendKind::cpu);
    EXPECT_NE(small.reason.find("960 unknowns, below the " + std::to_string(gpu_crossover_rows)),
              std::string::npos)
        << small.reason;
    const BackendDecision large =
        choose_backend_for_solve(BackendChoice::automatic, gpu_crossover_rows);
    EXPECT_EQ(large.backend->kind(), BackendKind::cuda) << large.reason;
    EXPECT_EQ(choose_backend(BackendChoice::automatic).backend->kind(), BackendKind::cuda);
    const BackendDecision named = choose_backend_for_solve(BackendChoice::cuda, 10);
    EXPECT_EQ(named.backend->kind(), BackendKind::cuda);
    EXPECT_EQ(named.reason, "named by the user");
}

TYPED_TEST(CudaVersusCpu, MulticolourSweepsInOneBlockAndByColour) {
    // A small system (one block, a barrier per colour) and one above sor_block_rows (a launch
    // per colour), in every order, against the CPU's pass per colour.
    using T = TypeParam;
    SIMRUN_REQUIRE_GPU(this->gpu);
    for (const std::int32_t n : {std::int32_t{960}, sor_block_rows + 1000}) {
        const CsrData<T> a = convert_values<T>(testing::strongly_dominant_matrix(n, 41));
        ASSERT_GT(greedy_colouring(a).num_colours(), 2);
        const auto b = random_vector<T>(static_cast<std::size_t>(n), 42);
        const auto x0 = random_vector<T>(static_cast<std::size_t>(n), 43);
        for (const int order : {0, 1, 2}) {  // forward, backward, both (SSOR)
            auto run = [&](const std::shared_ptr<const Backend>& backend) {
                const MulticolourSweeper<T> sweeper(backend, a);
                const auto ba = Array<T>::from_host(backend, b);
                auto xa = Array<T>::from_host(backend, x0);
                if (order == 0) sweeper.forward(ba, xa, T(1.2));
                if (order == 1) sweeper.backward(ba, xa, T(1.2));
                if (order == 2) sweeper.symmetric(ba.data(), xa.data(), T(1.2));
                return xa.to_host();
            };
            expect_close(run(this->gpu), run(this->cpu), 64 * this->eps);
        }
    }
}

TYPED_TEST(CudaVersusCpu, KrylovBasisKernels) {
    // GMRES's batched products and combination, on a size that is not a multiple of any
    // block and on bases that do and do not fill the last group of 8 vectors.
    using T = TypeParam;
    SIMRUN_REQUIRE_GPU(this->gpu);
    const std::size_t n = (1 << 20) + 123;
    for (const int k : {1, 8, 13, max_krylov_vectors - 1}) {
        std::vector<std::vector<T>> values;
        for (int j = 0; j < k; ++j) {
            values.push_back(random_vector<T>(n, 200 + static_cast<std::uint32_t>(j)));
        }
        const auto w = random_vector<T>(n, 199);
        KrylovCoefficients<T> c{};
        for (int j = 0; j < k; ++j) c.values[j] = static_cast<T>(0.3 * (j % 5) - 0.55);
        struct Outcome {
            std::vector<T> dots, combined;
        };
        auto run = [&](const std::shared_ptr<const Backend>& b) {
            std::vector<Array<T>> vectors;
            KrylovBasis<T> basis{};
            for (int j = 0; j < k; ++j) {
                vectors.push_back(Array<T>::from_host(b, values[static_cast<std::size_t>(j)]));
                basis.vectors[j] = vectors.back().data();
            }
            auto wa = Array<T>::from_host(b, w);
            const auto& kernels = b->template kernels<T>();
            Outcome outcome;
            outcome.dots.resize(static_cast<std::size_t>(k) + 1);
            kernels.basis_dots(*b, n, k, basis, wa.data(), outcome.dots.data());
            std::vector<T> again(outcome.dots.size());
            kernels.basis_dots(*b, n, k, basis, wa.data(), again.data());
            EXPECT_EQ(again, outcome.dots) << "deterministic, k = " << k;
            kernels.basis_combine(*b, n, k, basis, c, T(0.5), wa.data(), wa.data());
            outcome.combined = wa.to_host();
            return outcome;
        };
        const Outcome on_cpu = run(this->cpu), on_gpu = run(this->gpu);
        for (int j = 0; j <= k; ++j) {
            const std::vector<T>& v = j < k ? values[static_cast<std::size_t>(j)] : w;
            double magnitude = 0;
            for (std::size_t i = 0; i < n; ++i) magnitude += std::abs(double(v[i]) * double(w[i]));
            // Both sums carry rounding errors of at most ~ log2(n) eps * sum |v_i w_i|.
            EXPECT_NEAR(double(on_gpu.dots[static_cast<std::size_t>(j)]),
                        double(on_cpu.dots[static_cast<std::size_t>(j)]),
                        2 * 32 * this->eps * magnitude)
                << "k = " << k << ", vector " << j;
        }
        expect_close(on_gpu.combined, on_cpu.combined, 4 * (k + 1) * this->eps);
    }
}

TYPED_TEST(CudaVersusCpu, DiaSpmv) {
    using T = TypeParam;
    SIMRUN_REQUIRE_GPU(this->gpu);
    const std::int64_t n = 300001;
    const auto data = random_dia<T>(n, {-547, -1, 0, 1, 547, 100000}, 31);
    const auto x = random_vector<T>(static_cast<std::size_t>(n), 32);
    auto run = [&](const std::shared_ptr<const Backend>& b) {
        const DiaMatrix<T> a(b, data);
        auto xa = Array<T>::from_host(b, x);
        Array<T> y(b, static_cast<std::size_t>(n));
        a.apply(xa, y);
        return y.to_host();
    };
    expect_close(run(this->gpu), run(this->cpu), 16 * this->eps);
}

// The fused CG steps (direction + product + p'q, then update + r'r + r'z, with the scalars on
// the back-end) on random data in each row format, against the CPU back-end. Entry-wise
// results are sums of a few products (a few ulps apart); the reductions over n terms are within
// 2 gamma_n sum |terms| of each other (Higham), so alpha and the recorded ||r|| are compared
// with that bound.
template <typename T>
DiaData<T> convert_dia(const DiaData<double>& a) {
    return DiaData<T>{a.n, a.offsets, std::vector<T>(a.values.begin(), a.values.end())};
}

constexpr double fused_test_rho = 2.5;  // r'z before the iteration, as the test sets it

template <typename T>
struct FusedCgRun {
    std::vector<T> p_next, q, x, r;
    CgScalars<T> after;
};

template <typename T>
FusedCgRun<T> run_fused_cg_step(const std::shared_ptr<const Backend>& b, const RowMatrixView<T>& a,
                                std::size_t n, bool jacobi) {
    const auto factors = random_vector<T>(n, 51, 0.5, 1.5);  // positive
    auto r = Array<T>::from_host(b, random_vector<T>(n, 52));
    auto x = Array<T>::from_host(b, random_vector<T>(n, 53));
    auto p_old = Array<T>::from_host(b, random_vector<T>(n, 54));
    auto f = Array<T>::from_host(b, factors);
    Array<T> p_next(b, n), q(b, n), partials(b, fused_reduction_slots);
    auto ticket = Array<unsigned>::from_host(b, std::vector<unsigned>{0u});
    CgScalars<T> s{};
    s.target = 0;
    s.divergence = 1e300;
    s.max_iterations = 100;
    s.iteration = 3;  // iteration 4 reads p[3 % 2] and writes p[0]
    s.phase = CgPhase::running;
    s.rho = T(fused_test_rho);
    s.beta = T(0.4);
    auto scalars = Array<CgScalars<T>>::from_host(b, std::vector<CgScalars<T>>{s});
    const CgVectors<T> v{static_cast<std::int64_t>(n),
                         jacobi ? f.data() : nullptr,
                         x.data(),
                         r.data(),
                         q.data(),
                         {p_next.data(), p_old.data()},
                         {partials.data(), ticket.data()}};
    b->template kernels<T>().cg_iterations(*b, a, v, scalars.data(), 1);
    FusedCgRun<T> out;
    out.after = scalars.to_host()[0];
    out.p_next = p_next.to_host();
    out.q = q.to_host();
    out.x = x.to_host();
    out.r = r.to_host();
    EXPECT_EQ(ticket.to_host()[0], 0u) << "the ticket is zero between kernels";
    return out;
}

template <typename T>
void expect_fused_cg_steps_agree(const FusedCgRun<T>& gpu, const FusedCgRun<T>& cpu,
                                 std::size_t n) {
    const double eps = std::numeric_limits<T>::epsilon();
    expect_close(gpu.p_next, cpu.p_next, 8 * eps);
    expect_close(gpu.q, cpu.q, 64 * eps);
    const double gamma = 2 * double(n) * eps;  // >= 2 gamma_n for these n
    double pq_terms = 0, pq = 0;
    for (std::size_t i = 0; i < n; ++i) {
        pq_terms += std::abs(double(cpu.p_next[i]) * double(cpu.q[i]));
        pq += double(cpu.p_next[i]) * double(cpu.q[i]);
    }
    ASSERT_EQ(gpu.after.phase, cpu.after.phase);
    if (cpu.after.phase == CgPhase::direction_indefinite) return;  // p'q <= 0: both stopped
    // alpha = rho / p'q: the relative error of p'q, and a few roundings.
    EXPECT_NEAR(double(gpu.after.alpha), double(cpu.after.alpha),
                std::abs(double(cpu.after.alpha)) * (gamma * pq_terms / std::abs(pq) + 8 * eps));
    // x and r are updated with alpha, so they carry its relative error (times |alpha p|, |alpha
    // q|, which the entries of x and r are of the order of).
    const double alpha_error = gamma * pq_terms / std::abs(pq) + 64 * eps;
    expect_close(gpu.x, cpu.x, alpha_error);
    expect_close(gpu.r, cpu.r, alpha_error);
    EXPECT_EQ(gpu.after.iteration, 4);
    EXPECT_EQ(cpu.after.iteration, 4);
    double rr_terms = 0;
    for (const T r_i : cpu.r) rr_terms += double(r_i) * double(r_i);
    const double residual = std::sqrt(rr_terms);
    EXPECT_NEAR(gpu.after.history[3], cpu.after.history[3], residual * (gamma + alpha_error));
}

// Constant coefficients kept as a stencil (a value per diagonal, a mask byte per row; identity
// rows flagged, as a grid with Dirichlet sides has them) or as row classes give the same
// products and diagonal as the general storage, on the GPU as on the CPU.
TYPED_TEST(CudaVersusCpu, StencilDiaSpmv) {
    using T = TypeParam;
    SIMRUN_REQUIRE_GPU(this->gpu);
    for (const auto& matrix :
         {testing::laplacian_2d(700), testing::laplacian_2d_dirichlet_rows(613)}) {
        const auto data = convert_dia<T>(matrix);
        const auto n = static_cast<std::size_t>(data.n);
        const auto x = random_vector<T>(n, 33);
        auto run = [&](const std::shared_ptr<const Backend>& b, DiaStorage storage) {
            const DiaMatrix<T> a(b, data, storage);
            EXPECT_EQ(a.storage(), storage);
            auto xa = Array<T>::from_host(b, x);
            Array<T> y(b, n);
            a.apply(xa, y);
            return std::make_pair(y.to_host(), a.diagonal().to_host());
        };
        const auto general = run(this->gpu, DiaStorage::general);
        for (const DiaStorage storage : {DiaStorage::stencil, DiaStorage::classes}) {
            const auto on_gpu = run(this->gpu, storage);
            expect_close(on_gpu.first, run(this->cpu, storage).first, 16 * this->eps);
            EXPECT_EQ(on_gpu.first, general.first);  // same products, same order
            EXPECT_EQ(on_gpu.second, general.second);
        }
    }
}

TYPED_TEST(CudaVersusCpu, FusedCgKernelsInEveryRowFormat) {
    using T = TypeParam;
    SIMRUN_REQUIRE_GPU(this->gpu);
    // The 5-point Laplacian (SPD, so p'q > 0 and the update runs) with random vectors.
    for (const int m : {2, 16, 548}) {
        const auto dia = convert_dia<T>(testing::laplacian_2d(m));
        const std::int64_t n = dia.n;
        const auto csr = to_csr(dia);
        const auto ell = to_ell(csr);
        const auto size = static_cast<std::size_t>(n);
        for (const bool jacobi : {false, true}) {
            auto on = [&](const std::shared_ptr<const Backend>& b, int format) {
                switch (format) {
                    case 0:  // the Laplacian has constant coefficients
                        return run_fused_cg_step<T>(
                            b, DiaMatrix<T>(b, dia, DiaStorage::stencil).view(), size, jacobi);
                    case 1:
                        return run_fused_cg_step<T>(
                            b, DiaMatrix<T>(b, dia, DiaStorage::general).view(), size, jacobi);
                    case 2:
                        return run_fused_cg_step<T>(b, EllMatrix<T>(b, ell).view(), size, jacobi);
                    default:
                        return run_fused_cg_step<T>(b, CsrMatrix<T>(b, csr).view(), size, jacobi);
                }
            };
            for (int format = 0; format < 4; ++format) {
                SCOPED_TRACE("n = " + std::to_string(n) + ", format " + std::to_string(format) +
                             (jacobi ? ", jacobi" : ", no preconditioner"));
                expect_fused_cg_steps_agree(on(this->gpu, format), on(this->cpu, format), size);
            }
        }
    }
}

// One fused BiCGStab iteration (three steps) on random vectors, on each back-end.
template <typename T>
struct FusedBiCgStabRun {
    std::vector<T> p_next, v_next, t, x, r;
    BiCgStabScalars<T> after;
};

template <typename T>
FusedBiCgStabRun<T> run_fused_bicgstab_iteration(const std::shared_ptr<const Backend>& b,
                                                 const RowMatrixView<T>& a, std::size_t n,
                                                 bool jacobi) {
    auto f = Array<T>::from_host(b, random_vector<T>(n, 71, 0.5, 1.5));  // positive
    auto x = Array<T>::from_host(b, random_vector<T>(n, 72));
    auto r = Array<T>::from_host(b, random_vector<T>(n, 73));
    auto r0 = Array<T>::from_host(b, random_vector<T>(n, 74));
    auto p_old = Array<T>::from_host(b, random_vector<T>(n, 75));
    auto v_old = Array<T>::from_host(b, random_vector<T>(n, 76));
    Array<T> p_next(b, n), v_next(b, n), t(b, n), partials(b, fused_reduction_slots);
    auto ticket = Array<unsigned>::from_host(b, std::vector<unsigned>{0u});
    BiCgStabScalars<T> s{};
    s.target = 0;
    s.divergence = 1e300;
    s.max_iterations = 100;
    s.iteration = 3;  // iteration 4 reads p[1], v[1] and writes p[0], v[0]
    s.phase = BiCgStabPhase::running;
    s.rho = T(2.5);
    s.beta = T(0.4);
    s.omega = T(0.7);
    s.half_step_residual = -1;
    auto scalars = Array<BiCgStabScalars<T>>::from_host(b, std::vector<BiCgStabScalars<T>>{s});
    const BiCgStabVectors<T> v{static_cast<std::int64_t>(n),
                               jacobi ? f.data() : nullptr,
                               x.data(),
                               r.data(),
                               r0.data(),
                               {p_next.data(), p_old.data()},
                               {v_next.data(), v_old.data()},
                               t.data(),
                               {partials.data(), ticket.data()}};
    b->template kernels<T>().bicgstab_iterations(*b, a, v, scalars.data(), 1);
    EXPECT_EQ(ticket.to_host()[0], 0u) << "the ticket is zero between kernels";
    return {p_next.to_host(), v_next.to_host(), t.to_host(),
            x.to_host(),      r.to_host(),      scalars.to_host()[0]};
}

// sum |x_i y_i| / |sum x_i y_i|: how much a sum of these products can lose to rounding.
template <typename T>
double sum_condition(const std::vector<T>& x, const std::vector<T>& y) {
    double terms = 0, sum = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        terms += std::abs(double(x[i]) * double(y[i]));
        sum += double(x[i]) * double(y[i]);
    }
    return terms / std::abs(sum);
}

// Entry-wise results are sums of a few products; alpha = rho / r0'v and omega = t's / t't carry
// the reductions' relative errors (2 gamma_n times the sums' conditions, Higham), and every
// vector computed after them carries those.
template <typename T>
void expect_fused_bicgstab_iterations_agree(const FusedBiCgStabRun<T>& gpu,
                                            const FusedBiCgStabRun<T>& cpu, std::size_t n,
                                            const std::vector<T>& r0) {
    const double eps = std::numeric_limits<T>::epsilon();
    const double gamma = 2 * double(n) * eps;
    expect_close(gpu.p_next, cpu.p_next, 8 * eps);
    expect_close(gpu.v_next, cpu.v_next, 64 * eps);
    ASSERT_EQ(gpu.after.phase, cpu.after.phase);
    const double alpha_error = gamma * sum_condition(r0, cpu.v_next) + 8 * eps;
    EXPECT_NEAR(double(gpu.after.alpha), double(cpu.after.alpha),
                std::abs(double(cpu.after.alpha)) * alpha_error);
    expect_close(gpu.t, cpu.t, alpha_error + 64 * eps);
    if (cpu.after.phase != BiCgStabPhase::running &&
        cpu.after.phase != BiCgStabPhase::max_iterations) {
        return;
    }
    std::vector<T> s(n);  // s = r_new + omega t
    for (std::size_t i = 0; i < n; ++i) s[i] = cpu.r[i] + cpu.after.omega * cpu.t[i];
    const double omega_error = gamma * (sum_condition(cpu.t, s) + 1) + 2 * alpha_error + 8 * eps;
    EXPECT_NEAR(double(gpu.after.omega), double(cpu.after.omega),
                std::abs(double(cpu.after.omega)) * omega_error);
    expect_close(gpu.x, cpu.x, alpha_error + omega_error + 64 * eps);
    expect_close(gpu.r, cpu.r, alpha_error + omega_error + 64 * eps);
    EXPECT_EQ(gpu.after.iteration, 4);
    double rr = 0;
    for (const T r_i : cpu.r) rr += double(r_i) * double(r_i);
    EXPECT_NEAR(gpu.after.history[3], cpu.after.history[3],
                std::sqrt(rr) * (gamma + alpha_error + omega_error));
}

TYPED_TEST(CudaVersusCpu, FusedBiCgStabKernelsInEveryRowFormat) {
    using T = TypeParam;
    SIMRUN_REQUIRE_GPU(this->gpu);
    // A nonsymmetric matrix: the Laplacian with its upper neighbours weighted 1.5.
    for (const int m : {2, 16, 548, 2048}) {  // 2048^2: a kernel per step, not persistent
        auto dia = convert_dia<T>(testing::laplacian_2d(m));
        for (std::int64_t i = 0; i < dia.n; ++i) {
            dia.at(3, i) *= T(1.5);
            dia.at(4, i) *= T(1.5);
        }
        const auto csr = to_csr(dia);
        const auto ell = to_ell(csr);
        const auto size = static_cast<std::size_t>(dia.n);
        const auto r0 = random_vector<T>(size, 74);
        for (const bool jacobi : {false, true}) {
            auto on = [&](const std::shared_ptr<const Backend>& b, int format) {
                switch (format) {
                    case 0:
                        return run_fused_bicgstab_iteration<T>(
                            b, DiaMatrix<T>(b, dia, DiaStorage::stencil).view(), size, jacobi);
                    case 1:
                        return run_fused_bicgstab_iteration<T>(
                            b, DiaMatrix<T>(b, dia, DiaStorage::general).view(), size, jacobi);
                    case 2:
                        return run_fused_bicgstab_iteration<T>(b, EllMatrix<T>(b, ell).view(), size,
                                                               jacobi);
                    default:
                        return run_fused_bicgstab_iteration<T>(b, CsrMatrix<T>(b, csr).view(), size,
                                                               jacobi);
                }
            };
            for (int format = 0; format < 4; ++format) {
                SCOPED_TRACE("n = " + std::to_string(size) + ", format " + std::to_string(format) +
                             (jacobi ? ", jacobi" : ", none"));
                expect_fused_bicgstab_iterations_agree(on(this->gpu, format), on(this->cpu, format),
                                                       size, r0);
            }
        }
    }
}

// One fused Jacobi iteration on random vectors, on each back-end: r = b - A x_1 summed into
// ||r_1||, x_2 = x_1 + omega D^-1 r written over x_0's buffer.
template <typename T>
std::pair<std::vector<T>, JacobiScalars<T>> run_fused_jacobi_iteration(
    const std::shared_ptr<const Backend>& b, const RowMatrixView<T>& a, std::size_t n) {
    auto inverse_diagonal = Array<T>::from_host(b, random_vector<T>(n, 81, 0.2, 0.3));
    auto rhs = Array<T>::from_host(b, random_vector<T>(n, 82));
    auto x0 = Array<T>::from_host(b, random_vector<T>(n, 83));
    auto x1 = Array<T>::from_host(b, random_vector<T>(n, 84));
    Array<T> partials(b, fused_reduction_slots);
    auto ticket = Array<unsigned>::from_host(b, std::vector<unsigned>{0u});
    JacobiScalars<T> s{};
    s.target = 0;
    s.divergence = 1e300;
    s.max_iterations = 100;
    s.iteration = 0;
    s.current = 1;  // reads x_1 (buffer 1), records ||r_1||, writes x_2 (buffer 0)
    s.phase = JacobiPhase::running;
    auto scalars = Array<JacobiScalars<T>>::from_host(b, std::vector<JacobiScalars<T>>{s});
    const JacobiVectors<T> v{static_cast<std::int64_t>(n),
                             inverse_diagonal.data(),
                             rhs.data(),
                             {x0.data(), x1.data()},
                             T(0.8),
                             {partials.data(), ticket.data()}};
    b->template kernels<T>().jacobi_iterations(*b, a, v, scalars.data(), 1);
    return {x0.to_host(), scalars.to_host()[0]};
}

TYPED_TEST(CudaVersusCpu, FusedJacobiKernelsInEveryRowFormat) {
    using T = TypeParam;
    SIMRUN_REQUIRE_GPU(this->gpu);
    for (const int m : {2, 16, 548, 2048}) {  // 2048^2: a kernel per step, not persistent
        const auto dia = convert_dia<T>(testing::laplacian_2d(m));
        const auto csr = to_csr(dia);
        const auto ell = to_ell(csr);
        const auto size = static_cast<std::size_t>(dia.n);
        auto on = [&](const std::shared_ptr<const Backend>& b, int format) {
            switch (format) {
                case 0:
                    return run_fused_jacobi_iteration<T>(
                        b, DiaMatrix<T>(b, dia, DiaStorage::stencil).view(), size);
                case 1:
                    return run_fused_jacobi_iteration<T>(
                        b, DiaMatrix<T>(b, dia, DiaStorage::general).view(), size);
                case 2:
                    return run_fused_jacobi_iteration<T>(b, EllMatrix<T>(b, ell).view(), size);
                default:
                    return run_fused_jacobi_iteration<T>(b, CsrMatrix<T>(b, csr).view(), size);
            }
        };
        for (int format = 0; format < 4; ++format) {
            SCOPED_TRACE("n = " + std::to_string(size) + ", format " + std::to_string(format));
            const auto [x_gpu, s_gpu] = on(this->gpu, format);
            const auto [x_cpu, s_cpu] = on(this->cpu, format);
            // Each entry is a sum of a few products; ||r_1|| a sum of n squares (2 gamma_n).
            expect_close(x_gpu, x_cpu, 64 * this->eps);
            EXPECT_EQ(s_gpu.phase, JacobiPhase::running);
            EXPECT_EQ(s_gpu.iteration, 1);
            EXPECT_EQ(s_gpu.current, 2);
            EXPECT_NEAR(s_gpu.history[0], s_cpu.history[0],
                        s_cpu.history[0] * (2 * double(size) * this->eps + 64 * this->eps));
        }
    }
}

// Iterations from x = 0 on the shifted Laplacian A = L + 2 I (spectrum in [2, 10]).
template <typename T>
struct FusedCgIterations {
    CgScalars<T> after;
    std::vector<T> x, r;
};

// `calls` calls of cg_iterations(count) on A = L + 2 I, x = 0, r = b.
template <typename T>
FusedCgIterations<T> run_fused_cg_iterations(const std::shared_ptr<const Backend>& b,
                                             const DiaData<T>& a, int calls, std::int64_t count,
                                             std::int64_t max_iterations) {
    const auto n = static_cast<std::size_t>(a.n);
    const DiaMatrix<T> matrix(b, a);
    const auto rhs = random_vector<T>(n, 61);
    auto r = Array<T>::from_host(b, rhs);
    Array<T> x(b, n), p0(b, n), p1(b, n), q(b, n), partials(b, fused_reduction_slots);
    fill(x, T(0));
    auto ticket = Array<unsigned>::from_host(b, std::vector<unsigned>{0u});
    CgScalars<T> s{};
    s.target = 0;
    s.divergence = 1e300;
    s.max_iterations = max_iterations;
    s.iteration = 0;
    s.phase = CgPhase::running;
    s.rho = dot(r, r);
    auto scalars = Array<CgScalars<T>>::from_host(b, std::vector<CgScalars<T>>{s});
    const CgVectors<T> v{a.n,
                         nullptr,
                         x.data(),
                         r.data(),
                         q.data(),
                         {p0.data(), p1.data()},
                         {partials.data(), ticket.data()}};
    for (int call = 0; call < calls; ++call) {
        b->template kernels<T>().cg_iterations(*b, matrix.view(), v, scalars.data(), count);
    }
    return {scalars.to_host()[0], x.to_host(), r.to_host()};
}

// A batch of iterations in one call leaves exactly the state that as many single iterations
// leave (same kernels, same grid, same summation order), stops at the iteration limit inside a
// batch, and follows the CPU's iterations. 548^2 rows run in one persistent kernel per batch,
// 2048^2 (more than 8 rows per resident thread on an H100 or H200) in a kernel per step.
template <typename T>
void expect_batches_equal_single_iterations(const std::shared_ptr<const Backend>& gpu,
                                            const std::shared_ptr<const Backend>& cpu,
                                            std::int64_t m) {
    SCOPED_TRACE("m = " + std::to_string(m));
    auto a = convert_dia<T>(testing::laplacian_2d(m));
    for (std::int64_t i = 0; i < a.n; ++i) a.at(2, i) += T(2);  // A = L + 2 I
    const int k = 24;
    const auto batch = run_fused_cg_iterations(gpu, a, 1, k, 1000);
    const auto single = run_fused_cg_iterations(gpu, a, k, 1, 1000);
    ASSERT_EQ(batch.after.phase, CgPhase::running);
    EXPECT_EQ(batch.after.iteration, k);
    EXPECT_EQ(single.after.iteration, k);
    for (int j = 0; j < k; ++j) EXPECT_EQ(batch.after.history[j], single.after.history[j]);
    EXPECT_EQ(batch.x, single.x);
    EXPECT_EQ(batch.r, single.r);

    const auto limited = run_fused_cg_iterations(gpu, a, 1, k, 10);
    EXPECT_EQ(limited.after.phase, CgPhase::max_iterations);
    EXPECT_EQ(limited.after.iteration, 10);
    for (int j = 0; j < 10; ++j) EXPECT_EQ(limited.after.history[j], batch.after.history[j]);

    if constexpr (std::is_same_v<T, double>) {
        // Each iteration's reductions differ by at most 2 gamma_n relative, which reaches ||r||
        // scaled by at most cond(A) <= 10 / 2; to first order these add up over the iterations:
        // (j + 1) 5 (2 gamma_n) after j + 1 of them.
        const auto on_cpu = run_fused_cg_iterations(cpu, a, 1, k, 1000);
        const double gamma = 2 * double(a.n) * std::numeric_limits<T>::epsilon();
        for (int j = 0; j < k; ++j) {
            EXPECT_NEAR(batch.after.history[j], on_cpu.after.history[j],
                        on_cpu.after.history[j] * (j + 1) * 5 * gamma)
                << "iteration " << j + 1;
        }
    }
}

TYPED_TEST(CudaVersusCpu, FusedCgBatchesEqualSingleIterations) {
    SIMRUN_REQUIRE_GPU(this->gpu);
    for (const std::int64_t m : {548, 2048}) {
        expect_batches_equal_single_iterations<TypeParam>(this->gpu, this->cpu, m);
    }
}

TEST(CudaConjugateGradient, MatchesCpuAndIsBitReproducible) {
    const auto gpu = gpu_backend();
    SIMRUN_REQUIRE_GPU(gpu);
    const auto cpu = make_cpu_backend();
    const auto data = testing::laplacian_2d(200);
    const auto n = static_cast<std::size_t>(data.n);
    const auto rhs = random_vector<double>(n, 41);
    MethodParameters parameters;
    parameters.criteria.relative_tolerance = 1e-10;
    parameters.criteria.max_iterations = 5000;
    auto solve = [&](const std::shared_ptr<const Backend>& b, std::vector<double>* x_out) {
        const DiaMatrix<double> a(b, data);
        const JacobiPreconditioner<double> jacobi(a);
        const auto bb = Array<double>::from_host(b, rhs);
        Array<double> x(b, n);
        fill(x, 0.0);
        const SolveResult result = ConjugateGradient<double>(a, &jacobi, parameters).solve(bb, x);
        *x_out = x.to_host();
        return result;
    };
    std::vector<double> x_cpu, x_gpu;
    const SolveResult on_cpu = solve(cpu, &x_cpu);
    const SolveResult on_gpu = solve(gpu, &x_gpu);
    ASSERT_EQ(on_cpu.status, SolveStatus::converged);
    ASSERT_EQ(on_gpu.status, SolveStatus::converged);
    EXPECT_LE(std::abs(on_gpu.iterations - on_cpu.iterations), 2);
    double largest = 0, difference = 0;
    for (std::size_t i = 0; i < n; ++i) {
        largest = std::max(largest, std::abs(x_cpu[i]));
        difference = std::max(difference, std::abs(x_cpu[i] - x_gpu[i]));
    }
    // Both meet ||r|| <= 1e-10 ||b||; cond(A) ~ 1.6e4 bounds the relative error by ~1.6e-6.
    EXPECT_LE(difference / largest, 1.6e-6);
    std::cout << "CG 200x200 Laplacian: cpu " << on_cpu.iterations << " its, gpu "
              << on_gpu.iterations
              << " its, max |x_gpu - x_cpu| / max |x| = " << difference / largest << "\n";
    for (int repeat = 0; repeat < 3; ++repeat) {
        std::vector<double> again;
        const SolveResult result = solve(gpu, &again);
        EXPECT_EQ(result.iterations, on_gpu.iterations);
        EXPECT_EQ(result.residual_history, on_gpu.residual_history);
        EXPECT_TRUE(again == x_gpu) << "GPU solve not bit-reproducible (repeat " << repeat << ")";
    }
}

// Three GPU solves of one nonsymmetric system give the same bits (x and the residual history)
// for each format: every reduction and SpMV on the GPU sums in a fixed order.
TEST(CudaBiCgStab, RepeatedSolvesAreBitIdenticalInEveryFormat) {
    const auto gpu = gpu_backend();
    SIMRUN_REQUIRE_GPU(gpu);
    const auto a = testing::convection_diffusion_matrix(150, 40.0, -25.0);
    const auto rhs = random_vector<double>(static_cast<std::size_t>(a.rows), 51);
    for (const char* format : {"dia", "ell", "csr", "coo"}) {
        MethodParameters parameters;
        parameters.criteria.relative_tolerance = 1e-10;
        const LinearSystemSolver<double> solver(
            gpu, a, plan_solver(analyze(a), SolverRequest::parse("bicgstab", "jacobi", format)),
            parameters);
        const auto b = Array<double>::from_host(gpu, rhs);
        std::vector<double> first_x;
        SolveReport first;
        for (int repeat = 0; repeat < 3; ++repeat) {
            Array<double> x(gpu, rhs.size());
            fill(x, 0.0);
            const SolveReport report = solver.solve(b, x);
            ASSERT_TRUE(report.converged()) << format;
            if (repeat == 0) {
                first = report;
                first_x = x.to_host();
                continue;
            }
            EXPECT_EQ(report.result().residual_history, first.result().residual_history) << format;
            EXPECT_TRUE(x.to_host() == first_x) << format << ": x differs in repeat " << repeat;
        }
    }
}

// The multigrid kernels on random data: a 7-point and a 27-point random operator on an odd 3D
// box (2 and 8 colours), and transfers that coarsen two axes (the coarse points starting at 1
// and at 0) and keep the third.
TYPED_TEST(CudaVersusCpu, MultigridKernels) {
    using T = TypeParam;
    SIMRUN_REQUIRE_GPU(this->gpu);
    const BoxShape fine{3, {37, 23, 19}};
    const BoxShape coarse{3, {18, 12, 19}};
    const std::int64_t n = fine.size(), nc = coarse.size();
    const std::int64_t nx = fine.points[0], nxy = nx * fine.points[1];
    std::vector<int> seven = {static_cast<int>(-nxy), static_cast<int>(-nx), -1, 0, 1,
                              static_cast<int>(nx),   static_cast<int>(nxy)};
    std::vector<int> all;
    for (int dz = -1; dz <= 1; ++dz) {
        for (int dy = -1; dy <= 1; ++dy) {
            for (int dx = -1; dx <= 1; ++dx)
                all.push_back(static_cast<int>(dx + nx * dy + nxy * dz));
        }
    }
    // Random values on the box's couplings only: DIA's slots that wrap around the box's edges
    // (column i + offset past the end of a line or plane) are left zero, as on a box matrix,
    // where no two points of a colour are coupled.
    const auto on_box = [&](DiaData<T> a) {
        const auto coordinates = [&](std::int64_t p) {
            return std::array<std::int64_t, 3>{p % nx, (p / nx) % fine.points[1], p / nxy};
        };
        for (int d = 0; d < a.num_diagonals(); ++d) {
            for (std::int64_t i = 0; i < n; ++i) {
                const std::int64_t j = i + a.offsets[d];
                if (j < 0 || j >= n) continue;
                const auto ci = coordinates(i), cj = coordinates(j);
                for (std::size_t axis = 0; axis < 3; ++axis) {
                    if (std::abs(ci[axis] - cj[axis]) > 1) a.at(d, i) = T(0);
                }
            }
        }
        return a;
    };
    // The sweeps divide by the main diagonal: keep it in [4, 5].
    const auto dominant = [&](DiaData<T> a) {
        const int main = a.find_diagonal(0);
        const auto values = random_vector<T>(static_cast<std::size_t>(n), 90, 4.0, 5.0);
        for (std::int64_t i = 0; i < n; ++i) a.at(main, i) = values[static_cast<std::size_t>(i)];
        return a;
    };
    const auto a7 = dominant(on_box(random_dia<T>(n, seven, 91)));
    const auto a27 = dominant(on_box(random_dia<T>(n, all, 92)));
    const auto inverse_diagonal = random_vector<T>(static_cast<std::size_t>(n), 93, 0.1, 0.2);
    const auto b = random_vector<T>(static_cast<std::size_t>(n), 94);
    const auto x = random_vector<T>(static_cast<std::size_t>(n), 95);
    const auto weights = random_vector<T>(static_cast<std::size_t>(27 * nc), 96);
    const auto coarse_values = random_vector<T>(static_cast<std::size_t>(nc), 97);
    const auto class_table = random_vector<T>(5 * max_transfer_slots, 98);
    std::vector<std::uint8_t> point_classes(static_cast<std::size_t>(nc));
    for (std::size_t i = 0; i < point_classes.size(); ++i) {
        point_classes[i] = static_cast<std::uint8_t>((i * 7 + i / 5) % 5);
    }
    auto run = [&](const std::shared_ptr<const Backend>& backend) {
        const auto& k = backend->template kernels<T>();
        const DiaMatrix<T> m7(backend, a7), m27(backend, a27);
        auto d = Array<T>::from_host(backend, inverse_diagonal);
        auto ba = Array<T>::from_host(backend, b);
        auto x7 = Array<T>::from_host(backend, x), x27 = Array<T>::from_host(backend, x);
        auto r = Array<T>(backend, static_cast<std::size_t>(n));
        k.dia_residual(*backend, m27.view(), ba.data(), x27.data(), r.data());
        for (int colour = 0; colour < 2; ++colour) {
            k.box_colour_sweep(*backend, m7.view(), 3, fine, 2, colour, ba.data(), x7.data());
        }
        for (int colour = 7; colour >= 0; --colour) {
            k.box_colour_sweep(*backend, m27.view(), 13, fine, 8, colour, ba.data(), x27.data());
        }
        // One colour on a few parts only (the first plane, some inside, the last line across
        // x).
        auto planes = Array<T>::from_host(backend, x);
        const std::int64_t px = fine.points[0], py = fine.points[1], pz = fine.points[2];
        k.box_colour_sweep_part(*backend, m7.view(), 3, fine, 1, BoxRange{{0, 0, 0}, {px, py, 1}},
                                ba.data(), planes.data());
        k.box_colour_sweep_part(*backend, m7.view(), 3, fine, 0, BoxRange{{0, 0, 5}, {px, py, 9}},
                                ba.data(), planes.data());
        k.box_colour_sweep_part(*backend, m7.view(), 3, fine, 1,
                                BoxRange{{px - 1, 0, 0}, {px, py, pz}}, ba.data(), planes.data());
        auto w = Array<T>::from_host(backend, weights);
        BoxTransferView<T> t{fine, coarse, {2, 2, 1}, {1, 0, 0}, w.data()};
        auto restricted = Array<T>(backend, static_cast<std::size_t>(nc));
        k.box_restrict(*backend, t, r.data(), restricted.data());
        auto c = Array<T>::from_host(backend, coarse_values);
        k.box_interpolate_add(*backend, t, c.data(), x7.data());
        // The same transfers with the weights in classes (a random class per coarse point).
        auto classes = Array<std::uint8_t>::from_host(backend, point_classes);
        auto table = Array<T>::from_host(backend, class_table);
        BoxTransferView<T> classed{fine,    coarse,         {2, 2, 1},   {1, 0, 0},
                                   nullptr, classes.data(), table.data()};
        auto restricted_classed = Array<T>(backend, static_cast<std::size_t>(nc));
        k.box_restrict(*backend, classed, r.data(), restricted_classed.data());
        k.box_interpolate_add(*backend, classed, c.data(), x27.data());
        auto direction = Array<T>::from_host(backend, b);
        k.chebyshev_step(*backend, static_cast<std::size_t>(n), T(0.4), T(1.3), d.data(), r.data(),
                         direction.data(), x27.data());
        std::vector<T> out = r.to_host();
        for (const Array<T>* part :
             {&x7, &x27, &planes, &restricted, &restricted_classed, &direction}) {
            const auto values = part->to_host();
            out.insert(out.end(), values.begin(), values.end());
        }
        return out;
    };
    expect_close(run(this->gpu), run(this->cpu), 256 * this->eps);
}

// The fused red-black sweep on an nx x ny box against the CPU and the GPU's two passes (see
// the test below).
template <typename T>
void expect_fused_sweep_matches(const std::shared_ptr<const Backend>& gpu,
                                const std::shared_ptr<const Backend>& cpu, std::int64_t nx,
                                std::int64_t ny, double tolerance) {
    const BoxShape box{2, {nx, ny, 1}};
    DiaData<T> random{nx * ny,
                      {static_cast<int>(-nx), -1, 0, 1, static_cast<int>(nx)},
                      random_vector<T>(static_cast<std::size_t>(5 * nx * ny), 71, -1.0, -0.1)};
    const auto diagonal = random_vector<T>(static_cast<std::size_t>(random.n), 72, 4.5, 5.0);
    for (std::int64_t i = 0; i < random.n; ++i) {
        const std::int64_t x = i % nx, y = i / nx;
        random.at(2, i) = diagonal[static_cast<std::size_t>(i)];
        if (x == 0) random.at(1, i) = T(0);  // no coupling across the box's sides
        if (x == nx - 1) random.at(3, i) = T(0);
        if (y == 0) random.at(0, i) = T(0);
        if (y == ny - 1) random.at(4, i) = T(0);
    }
    const DiaData<T> dirichlet = convert_dia<T>(testing::laplacian_2d_dirichlet_rows(nx, ny));
    const auto b = random_vector<T>(static_cast<std::size_t>(nx * ny), 73);
    const auto x0 = random_vector<T>(static_cast<std::size_t>(nx * ny), 74);
    const std::pair<const DiaData<T>*, DiaStorage> cases[] = {{&random, DiaStorage::general},
                                                              {&dirichlet, DiaStorage::classes},
                                                              {&dirichlet, DiaStorage::stencil}};
    for (const auto& [data, storage] : cases) {
        SCOPED_TRACE(static_cast<int>(storage));
        auto run = [&](const std::shared_ptr<const Backend>& backend, bool fused) {
            const DiaMatrix<T> a(backend, *data, storage);
            auto bb = Array<T>::from_host(backend, b);
            auto x = Array<T>::from_host(backend, x0);
            Array<T> y(backend, x0.size());
            const auto& k = backend->template kernels<T>();
            for (const int first : {0, 1}) {
                if (fused) {  // x into y, then y into x
                    k.box_red_black_sweep(*backend, a.view(), 2, box, first, bb.data(),
                                          first == 0 ? x.data() : y.data(),
                                          first == 0 ? y.data() : x.data());
                } else {
                    k.box_colour_sweep(*backend, a.view(), 2, box, 2, first, bb.data(), x.data());
                    k.box_colour_sweep(*backend, a.view(), 2, box, 2, 1 - first, bb.data(),
                                       x.data());
                }
            }
            return x.to_host();
        };
        const auto on_gpu = run(gpu, true);
        expect_close(on_gpu, run(cpu, true), tolerance);
        expect_close(on_gpu, run(gpu, false), tolerance);
    }
}

// One red-black sweep of a random 5-point operator on a 2D box whose sides are not multiples of
// the GPU's tiles (general storage: random values; row classes and the stencil: the Laplacian
// with Dirichlet rows), two sweeps in either colour order: the GPU (both colours in one tiled
// pass, from one vector into another) gives the CPU's two passes, and its own two passes, to
// rounding; also on a box of more tiles than the GPU holds at once (blocks in any order).
TYPED_TEST(CudaVersusCpu, RedBlackSweepFusesItsColours) {
    using T = TypeParam;
    SIMRUN_REQUIRE_GPU(this->gpu);
    for (const auto& [nx, ny] : {std::pair<std::int64_t, std::int64_t>{301, 77}, {2049, 1500}}) {
        SCOPED_TRACE(nx);
        expect_fused_sweep_matches<T>(this->gpu, this->cpu, nx, ny, 64 * this->eps);
    }
}
// A whole multigrid-preconditioned CG solve of the 2D Laplacian on the GPU takes the CPU's
// iterations (within one) and meets the tolerance in b - A x recomputed on the host, with the
// cycle in either precision (the other one's through the conversions).
TYPED_TEST(CudaVersusCpu, MultigridPreconditionedCg) {
    using T = TypeParam;
    SIMRUN_REQUIRE_GPU(this->gpu);
    const std::int64_t m = 255;
    const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-10;
    const DiaData<T> a = convert_dia<T>(testing::laplacian_2d(m));
    const auto rhs = random_vector<T>(static_cast<std::size_t>(m * m), 98);
    for (const Precision cycle : {Precision::double_precision, Precision::single_precision}) {
        SCOPED_TRACE(name_of(cycle));
        auto run = [&](const std::shared_ptr<const Backend>& backend) {
            const DiaMatrix<T> matrix(backend, a);
            MultigridParameters multigrid;
            multigrid.precision = cycle;
            const auto made =
                make_multigrid_preconditioner<T>(backend, a, GridBox{2, {m, m, 1}}, multigrid);
            const MultigridPreconditioner<T>& preconditioner = *made;
            MethodParameters parameters;
            parameters.criteria.relative_tolerance = tolerance;
            const ConjugateGradient<T> cg(matrix, &preconditioner, parameters);
            auto b = Array<T>::from_host(backend, rhs);
            Array<T> x(backend, rhs.size());
            fill(x, T(0));
            const SolveResult result = cg.solve(b, x);
            EXPECT_TRUE(result.converged()) << result.summary();
            return std::make_pair(result.iterations, x.to_host());
        };
        const auto [gpu_iterations, gpu_x] = run(this->gpu);
        const auto [cpu_iterations, cpu_x] = run(this->cpu);
        EXPECT_NEAR(static_cast<double>(gpu_iterations), static_cast<double>(cpu_iterations), 1.0);
        // The recurrence residual the solve stopped on and the true one differ by rounding only:
        // allow twice the tolerance.
        const std::vector<double> x(gpu_x.begin(), gpu_x.end()), b(rhs.begin(), rhs.end());
        EXPECT_LE(testing::relative_residual(to_csr(testing::laplacian_2d(m)), b, x),
                  2 * tolerance);
    }
}

}  // namespace
}  // namespace simrun::solvers

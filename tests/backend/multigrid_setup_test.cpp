// A multigrid level's set-up run by the back-end (the kernel table's box_collapsed_weights,
// box_galerkin, dia_inverse_diagonal and classify_points) against the host's (level_transfer.hpp's
// operator_interpolation and galerkin_operator), on random coefficients, 2D and 3D, Dirichlet and
// Neumann sides, 5/7-point rows and the 9/27-point rows of a Galerkin level, with the fine rows
// in each storage. The CPU back-end runs the host's arithmetic, so it gives its bits; the GPU
// contracts products and sums into FMAs, so it agrees to a few units in the last place of each
// row's largest entry. One source built per back-end (SIMRUN_TEST_ON_CUDA: the GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "base/kernel_table.hpp"
#include "multigrid/backend_rows.hpp"
#include "multigrid/box_entries.hpp"
#include "multigrid/class_rows.hpp"
#include "multigrid/coarse_step.hpp"
#include "multigrid/galerkin_table.hpp"
#include "multigrid/hierarchy.hpp"
#include "multigrid/level_transfer.hpp"
#include "multigrid/step_rows.hpp"
#include "multigrid/whole_levels.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/multigrid/multigrid_hierarchy.hpp"
#include "simrun/solvers/multigrid/multigrid_setup_error.hpp"
#include "support/test_backend.hpp"
#include "support/test_matrices.hpp"

namespace simrun::solvers {
namespace {

using testing::Side;
using testing::test_backend;

#ifdef SIMRUN_TEST_ON_CUDA
constexpr double ulps = 8.0;  // FMAs: a few units of each row's largest entry
#else
constexpr double ulps = 0.0;  // the host's own arithmetic
#endif

// Expects device[slot * n + i] within `ulps` of host's, in units of the largest magnitude of
// point i's values over the slots.
void expect_close_by_point(const std::vector<double>& device, const std::vector<double>& host,
                           std::int64_t n, const std::string& what) {
    ASSERT_EQ(device.size(), host.size()) << what;
    const std::int64_t slots = n > 0 ? static_cast<std::int64_t>(host.size()) / n : 0;
    int failures = 0;
    for (std::int64_t i = 0; i < n && failures < 5; ++i) {
        double scale = 0;
        for (std::int64_t s = 0; s < slots; ++s) {
            scale = std::max(scale, std::abs(host[static_cast<std::size_t>(s * n + i)]));
        }
        const double tolerance = ulps * std::numeric_limits<double>::epsilon() * scale;
        for (std::int64_t s = 0; s < slots; ++s) {
            const auto k = static_cast<std::size_t>(s * n + i);
            if (std::abs(device[k] - host[k]) <= tolerance) continue;
            ADD_FAILURE() << what << ": point " << i << " slot " << s << ": " << device[k]
                          << " against the host's " << host[k];
            ++failures;
        }
    }
}

// -div(k grad u) with k in [1, 2] varying from face to face (no jumps: the interpolation is the
// collapsed one).
DiaData<double> random_diffusion(std::array<std::int32_t, 3> points, int dimension,
                                 std::array<Side, 6> sides, std::uint32_t seed) {
    const double phase = seed;
    const auto k = [phase](double x, double y, double z) {
        return 1.5 + 0.5 * std::sin(1013.0 * x + 1731.0 * y + 2903.0 * z + phase);
    };
    const std::array<double, 3> h = {1.0 / (points[0] + 1), 1.0 / (points[1] + 1),
                                     1.0 / (points[2] + 1)};
    return to_dia(testing::box_diffusion_matrix(points, dimension, h, k, sides));
}

struct SetupCase {
    std::array<std::int32_t, 3> points;
    int dimension;
    std::array<Side, 6> sides;
};

std::vector<SetupCase> setup_cases() {
    const auto d = Side::dirichlet, n = Side::neumann;
    return {{{9, 7, 1}, 2, {d, d, d, d, d, d}}, {{10, 9, 1}, 2, {n, d, d, n, d, d}},
            {{8, 8, 1}, 2, {n, n, n, n, n, n}}, {{9, 2, 1}, 2, {d, d, n, n, d, d}},
            {{7, 6, 5}, 3, {d, d, d, d, d, d}}, {{6, 7, 8}, 3, {n, d, n, d, n, d}},
            {{5, 5, 2}, 3, {d, n, d, n, d, n}}};
}

// The back-end's weights and Galerkin rows for `a` on `fine`, read from `stored` (a's rows on
// the back-end in some storage), against the host's; counts the weights compared in `compared`.
void expect_setup_like_host(const std::shared_ptr<const Backend>& backend, const DiaData<double>& a,
                            const DiaMatrix<double>& stored, const GridBox& fine,
                            const std::string& what, int& compared) {
    using namespace multigrid;
    const BoxCoarsening coarsening = choose_coarsening(a, fine);
    ASSERT_TRUE(coarsening.coarsens()) << what;
    const std::vector<double> host_weights = operator_interpolation(a, fine, coarsening);
    const DiaData<double> host_coarse = galerkin_operator(a, fine, coarsening, host_weights);
    const KernelTable<double>& kernels = backend->kernels<double>();
    const DiagonalSteps steps(a, fine);
    const std::int64_t nc = coarsening.coarse.size();

    // The collapsed weights, which are the host's where no coupling jumps (else local bases
    // correct them there, on the host).
    if (!has_coefficient_jumps(a, cycle_jump_ratio)) {
        Array<double> weights(backend, host_weights.size());
        kernels.box_collapsed_weights(*backend, stored.view(), steps.view(),
                                      transfer_view(fine, coarsening, nullptr), weights.data());
        expect_close_by_point(weights.to_host(), host_weights, nc, what + " weights");
        ++compared;
    }

    // The Galerkin rows from the host's weights, so each check stands alone.
    const Array<double> given = Array<double>::from_host(backend, host_weights);
    const multigrid::BackendRows coarse =
        galerkin_rows(backend, stored.view(), steps, fine, coarsening, given);
    ASSERT_EQ(coarse.offsets, host_coarse.offsets) << what;
    expect_close_by_point(coarse.values.to_host(), host_coarse.values, nc, what + " Galerkin rows");

    // 1 / a_ii, rounded to float once.
    const int main = a.find_diagonal(0);
    Array<float> inverse(backend, static_cast<std::size_t>(a.n));
    backend->kernels<float>().dia_inverse_diagonal(*backend, stored.view(), main, inverse.data());
    const std::vector<float> inverse_host = inverse.to_host();
    for (std::int64_t i = 0; i < a.n; ++i) {
        ASSERT_EQ(inverse_host[static_cast<std::size_t>(i)],
                  static_cast<float>(1.0 / a.at(main, i)))
            << what << " row " << i;
    }
}

TEST(MultigridSetupKernels, WeightsAndGalerkinRowsAreTheHostsOnRandomCoefficients) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    std::uint32_t seed = 41;
    int compared = 0;
    for (const SetupCase& c : setup_cases()) {
        const GridBox fine{c.dimension, {c.points[0], c.points[1], c.points[2]}};
        const std::string name = fine.describe() + " seed " + std::to_string(seed);
        const DiaData<double> a = random_diffusion(c.points, c.dimension, c.sides, seed++);
        const DiaMatrix<double> general(backend, a, DiaStorage::general);
        const int before = compared;
        expect_setup_like_host(backend, a, general, fine, name + " (general rows)", compared);
        EXPECT_EQ(compared, before + 1) << name << ": k in [1, 2] jumps nowhere";
        // The rows of its Galerkin level couple along the diagonals too (9 or 27 points).
        const auto coarsening = multigrid::choose_coarsening(a, fine);
        const DiaData<double> coarse =
            multigrid::without_empty_diagonals(multigrid::galerkin_operator(
                a, fine, coarsening, multigrid::operator_interpolation(a, fine, coarsening)));
        if (!multigrid::choose_coarsening(coarse, coarsening.coarse).coarsens()) continue;
        const DiaMatrix<double> coarse_stored(backend, coarse, DiaStorage::general);
        expect_setup_like_host(backend, coarse, coarse_stored, coarsening.coarse,
                               name + " (its Galerkin level)", compared);
    }
}

// `a`'s rows kept as classes: one class per distinct row, numbered in order of appearance.
multigrid::ClassRows classes_of(const DiaData<double>& a) {
    multigrid::ClassRows rows;
    rows.n = a.n;
    rows.offsets = a.offsets;
    std::vector<std::vector<double>> seen;
    for (std::int64_t i = 0; i < a.n; ++i) {
        std::vector<double> row;
        for (int d = 0; d < a.num_diagonals(); ++d) row.push_back(a.at(d, i));
        auto at = std::find(seen.begin(), seen.end(), row);
        if (at == seen.end()) {
            seen.push_back(row);
            rows.table.insert(rows.table.end(), row.begin(), row.end());
            at = seen.end() - 1;
        }
        rows.of_row.push_back(static_cast<std::uint8_t>(at - seen.begin()));
    }
    return rows;
}

// The coarsening measures of rows kept as classes (the strength summed class by class, the
// ends from the whole box's faces) are those of the rows themselves, on a part of a larger box
// that reaches some of its ends and not others, 2D and 3D, anisotropic and with Neumann sides.
TEST(MultigridSetupKernels, MeasuresOfClassesAreTheRowsMeasures) {
    const auto d = Side::dirichlet, n = Side::neumann;
    struct Region {
        GridBox box;
        std::array<Side, 6> sides;
        Box own;
        multigrid::Coordinates origin;
        GridBox whole;
    };
    for (const Region& r : {Region{{2, {12, 9, 1}},
                                   {d, n, d, d, d, d},
                                   {{0, 2, 0}, {12, 9, 1}},
                                   {0, 5, 0},
                                   {2, {12, 20, 1}}},
                            Region{{2, {12, 9, 1}},
                                   {n, n, n, n, d, d},
                                   {{1, 0, 0}, {10, 9, 1}},
                                   {6, 0, 0},
                                   {2, {16, 9, 1}}},
                            Region{{3, {7, 6, 8}},
                                   {d, n, d, n, n, d},
                                   {{0, 0, 2}, {7, 6, 8}},
                                   {0, 0, 4},
                                   {3, {7, 6, 12}}},
                            // Two points across an axis (a diagonal's step read entry by
                            // entry); a part touching no end of the whole.
                            Region{{3, {2, 6, 6}},
                                   {n, n, d, d, d, d},
                                   {{0, 0, 0}, {2, 6, 6}},
                                   {0, 0, 0},
                                   {3, {2, 6, 6}}},
                            Region{{3, {6, 2, 6}},
                                   {d, d, n, n, d, n},
                                   {{0, 0, 1}, {6, 2, 5}},
                                   {0, 0, 3},
                                   {3, {6, 2, 12}}},
                            Region{{2, {10, 9, 1}},
                                   {d, d, d, d, d, d},
                                   {{2, 2, 0}, {8, 7, 1}},
                                   {3, 3, 0},
                                   {2, {20, 20, 1}}}}) {
        const GridBox& box = r.box;
        const std::array<double, 3> h = {0.1, 0.4, 0.2};  // anisotropic
        const DiaData<double> a = to_dia(testing::box_diffusion_matrix(
            {static_cast<std::int32_t>(box.points[0]), static_cast<std::int32_t>(box.points[1]),
             static_cast<std::int32_t>(box.points[2])},
            box.dimension, h, [](double, double, double) { return 1.0; }, r.sides));
        const auto rows = multigrid::measure_coarsening(a, box, r.own, r.origin, r.whole);
        const auto classes =
            multigrid::measure_coarsening(classes_of(a), box, r.own, r.origin, r.whole);
        for (std::size_t k = 0; k < rows.values.size(); ++k) {
            EXPECT_NEAR(classes.values[k], rows.values[k], 1e-13 * std::abs(rows.values[k]))
                << box.describe() << " measure " << k;
        }
        EXPECT_EQ(multigrid::decide_coarsening(classes, r.whole).coarse.describe(),
                  multigrid::decide_coarsening(rows, r.whole).coarse.describe());
    }
}

// Random rows by step on `region`, `steps` of them.
multigrid::StepRows random_step_rows(const Box& region, std::size_t steps, std::uint32_t seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    multigrid::StepRows rows{region, std::vector<double>(steps * region.size())};
    for (double& v : rows.values) v = value(generator);
    return rows;
}

// The planner's rows kept on the back-end (step_rows.hpp: box_copy_rows, box_zero_leaving,
// classify_points) against the host's on random values, 2D and 3D, regions away from the
// origin: copies and zeroing to the bit, the steps in use as the host finds them where the rows
// take few kinds (every step where they take too many).
TEST(MultigridSetupKernels, RowsKeptByStepMoveAsTheHostsDo) {
    using namespace multigrid;
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    std::uint32_t seed = 11;
    for (const int dimension : {2, 3}) {
        const std::int64_t z = dimension == 3 ? 1 : 0;
        const std::vector<Step> steps = all_steps(dimension);
        const std::size_t count = steps.size();
        const Box from{{3, 2, 2 * z}, {17, 13, 2 * z + 1 + 6 * z}};
        const Box to{{1, 4, z}, {15, 16, z + 1 + 7 * z}};
        const Box points{{4, 5, 2 * z}, {14, 12, 2 * z + 1 + 4 * z}};
        const StepRows host_from = random_step_rows(from, count, seed++);
        StepRows host_to = random_step_rows(to, count, seed++);
        BackendStepRows kept_to = to_backend(backend, host_to, count);
        copy_rows(*backend, to_backend(backend, host_from, count), kept_to, points, count);
        copy_rows(host_from, host_to, points, count);
        EXPECT_EQ(to_host(kept_to).values, host_to.values) << dimension << "D copy";

        // Zeroing the entries that leave the region, as keep_inside on its DIA rows does.
        const GridBox shape = from.shape(dimension);
        BackendStepRows kept_from = to_backend(backend, host_from, count);
        keep_inside(*backend, kept_from, steps);
        DiaData<double> dia{from.size(), step_offsets(steps, shape), host_from.values};
        keep_inside(dia, steps, shape);
        EXPECT_EQ(to_host(kept_from).values, dia.values) << dimension << "D zeroing";

        // Random rows take too many kinds: every step in use; rows of a few kinds with a step
        // all zero: as the host finds them.
        EXPECT_EQ(steps_in_use(backend, kept_from, count), std::vector<double>(count, 1.0));
        StepRows few = host_from;
        for (std::size_t k = 0; k < few.values.size(); ++k) {
            const std::size_t s = k / static_cast<std::size_t>(from.size());
            few.values[k] = s == 1 ? 0.0 : static_cast<double>((k % 4) + s);
        }
        EXPECT_EQ(steps_in_use(backend, to_backend(backend, few, count), count),
                  steps_in_use(few, count))
            << dimension << "D steps in use";
        EXPECT_EQ(steps_in_use(few, count)[1], 0.0);
    }
}

DiaData<double> checkerboard(std::array<std::int32_t, 3> points, int dimension);

// The step over ranks (coarse_step on a rank's region, the level's coarsening shifted onto it)
// made by the back-end against the host's: the same coarse points and transfer, the weights
// and coarse rows the host's (CPU) or within a few ulps (GPU), on random coefficients, on a
// checkerboard's jumps (the host's local bases, then the back-end's product) and on the 9/27
// diagonals of a Galerkin level.
TEST(MultigridSetupKernels, TheStepOnARegionIsTheHostsStep) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    std::uint32_t seed = 7;
    int compared = 0;
    const auto expect_step = [&](const DiaData<double>& rows, const Box& region,
                                 const GridBox& whole, const std::string& what) {
        using namespace multigrid;
        const BoxCoarsening coarsening =
            choose_coarsening(random_diffusion({static_cast<std::int32_t>(whole.points[0]),
                                                static_cast<std::int32_t>(whole.points[1]),
                                                static_cast<std::int32_t>(whole.points[2])},
                                               whole.dimension, {}, seed),
                              whole);
        ASSERT_TRUE(coarsening.coarsens()) << what;
        const CoarseStep host = coarse_step(rows, region, coarsening);
        const CoarseStep made = coarse_step(backend, rows, region, coarsening);
        EXPECT_EQ(made.coarse_region, host.coarse_region) << what;
        EXPECT_EQ(made.transfer.coarse.describe(), host.transfer.coarse.describe()) << what;
        for (std::size_t axis = 0; axis < 3; ++axis) {
            EXPECT_EQ(made.transfer.axes[axis].first, host.transfer.axes[axis].first) << what;
            EXPECT_EQ(made.transfer.axes[axis].step, host.transfer.axes[axis].step) << what;
        }
        const std::int64_t nc = host.coarse_region.size();
        expect_close_by_point(made.weights, host.weights, nc, what + " weights");
        ASSERT_EQ(made.coarse.offsets, host.coarse.offsets) << what;
        expect_close_by_point(made.coarse.values, host.coarse.values, nc, what + " coarse rows");
        ++compared;
    };
    for (const SetupCase& c : setup_cases()) {
        if (c.points[1] < 4) continue;  // (a region needs room to sit inside the level)
        const GridBox shape{c.dimension, {c.points[0], c.points[1], c.points[2]}};
        // The region sits at an odd corner of a larger level: its transfer starts off-parity.
        const Box region{
            {1, 2, c.dimension == 3 ? 3 : 0},
            {1 + c.points[0], 2 + c.points[1], (c.dimension == 3 ? 3 : 0) + c.points[2]}};
        const GridBox whole{
            c.dimension,
            {c.points[0] + 4, c.points[1] + 5, c.dimension == 3 ? c.points[2] + 6 : 1}};
        const std::string name = shape.describe() + " at (1, 2) seed " + std::to_string(seed);
        const DiaData<double> a = random_diffusion(c.points, c.dimension, c.sides, seed++);
        expect_step(a, region, whole, name);
        expect_step(checkerboard(c.points, c.dimension), region, whole, name + " checkerboard");
        const auto coarsening = multigrid::choose_coarsening(a, shape);
        const DiaData<double> galerkin =
            multigrid::without_empty_diagonals(multigrid::galerkin_operator(
                a, shape, coarsening, multigrid::operator_interpolation(a, shape, coarsening)));
        const GridBox& g = coarsening.coarse;
        if (g.points[0] < 3 || g.points[1] < 3 || (c.dimension == 3 && g.points[2] < 3)) continue;
        const Box coarse_region{{1, 2, 0}, {1 + g.points[0], 2 + g.points[1], g.points[2]}};
        expect_step(
            galerkin, coarse_region,
            GridBox{c.dimension,
                    {g.points[0] + 3, g.points[1] + 4, c.dimension == 3 ? g.points[2] + 1 : 1}},
            name + " (its Galerkin level)");
    }
    EXPECT_GE(compared, 15);
}

// A constant stencil inside the box and identity rows on its faces (eliminated Dirichlet nodes,
// as the framework assembles them): the rows the stencil and row-class storages hold.
DiaData<double> stencil_with_identity_faces(const GridBox& box) {
    DiaData<double> a;
    a.n = box.size();
    a.offsets = {0};
    std::int64_t stride = 1;
    for (int axis = 0; axis < box.dimension; ++axis) {
        a.offsets.push_back(static_cast<int>(-stride));
        a.offsets.push_back(static_cast<int>(stride));
        stride *= box.points[static_cast<std::size_t>(axis)];
    }
    std::sort(a.offsets.begin(), a.offsets.end());
    a.values.assign(a.offsets.size() * static_cast<std::size_t>(a.n), 0.0);
    const int main = a.find_diagonal(0);
    for (std::int64_t i = 0; i < a.n; ++i) {
        const auto c = box.coordinates(i);
        bool face = false;
        for (int axis = 0; axis < box.dimension; ++axis) {
            const auto at = static_cast<std::size_t>(axis);
            face = face || c[at] == 0 || c[at] == box.points[at] - 1;
        }
        if (face) {
            a.at(main, i) = 1.0;
            continue;
        }
        for (int d = 0; d < a.num_diagonals(); ++d)
            a.at(d, i) = d == main ? 2.0 * box.dimension : -1.0;
    }
    return a;
}

TEST(MultigridSetupKernels, RowsInStencilOrClassStorageGiveTheSameSetUp) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    for (const GridBox& fine :
         {GridBox{2, {11, 9, 1}}, GridBox{2, {12, 12, 1}}, GridBox{3, {9, 8, 7}}}) {
        const DiaData<double> a = stencil_with_identity_faces(fine);
        for (const DiaStorage storage : {DiaStorage::stencil, DiaStorage::classes}) {
            const DiaMatrix<double> stored(backend, a, storage);
            ASSERT_EQ(stored.storage(), storage);
            int compared = 0;
            expect_setup_like_host(
                backend, a, stored, fine,
                fine.describe() + " (storage " + std::to_string(static_cast<int>(storage)) + ")",
                compared);
            EXPECT_EQ(compared, 1) << "constant coefficients jump nowhere";
        }
    }
    // A row changed a few points from the middle (the CPU back-end copies inner points' rows
    // and weights from the middle point's where they read the same: here the middle point's
    // own neighbours read the changed row's weights, 2D and 3D).
    for (const GridBox& fine : {GridBox{2, {33, 33, 1}}, GridBox{3, {17, 17, 17}}}) {
        for (const std::array<std::int64_t, 3> off :
             {std::array<std::int64_t, 3>{2, 1, 0}, {1, 2, 0}, {2, 2, 1}, {3, 1, 0}}) {
            DiaData<double> a = stencil_with_identity_faces(fine);
            const std::int64_t z = fine.dimension == 3 ? fine.points[2] / 2 + off[2] : 0;
            const std::int64_t row =
                fine.row(fine.points[0] / 2 + off[0], fine.points[1] / 2 + off[1], z);
            a.at(a.find_diagonal(0), row) += 1.0;
            const DiaMatrix<double> stored(backend, a, DiaStorage::classes);
            int compared = 0;
            expect_setup_like_host(backend, a, stored, fine,
                                   fine.describe() + " a row changed near the middle", compared);
        }
    }
    // Wider boxes, whose inner points the CPU back-end copies from the middle one: Neumann
    // sides, and couplings strong along x alone (the level coarsened along x only).
    const auto unit = [](double, double, double) { return 1.0; };
    const auto n = Side::neumann, d = Side::dirichlet;
    struct Wide {
        GridBox fine;
        std::array<double, 3> h;
        std::array<Side, 6> sides;
    };
    for (const Wide& c : {Wide{{2, {41, 26, 1}}, {1, 1, 1}, {n, d, n, n, d, d}},
                          Wide{{2, {33, 20, 1}}, {0.1, 1, 1}, {d, d, n, d, d, d}},
                          Wide{{3, {17, 14, 12}}, {1, 1, 1}, {n, d, d, n, n, d}}}) {
        const auto& p = c.fine.points;
        const DiaData<double> a = to_dia(testing::box_diffusion_matrix(
            {static_cast<std::int32_t>(p[0]), static_cast<std::int32_t>(p[1]),
             static_cast<std::int32_t>(p[2])},
            c.fine.dimension, c.h, unit, c.sides));
        // (Rows of another diagonal on a Neumann side fit the classes, not a stencil.)
        const DiaMatrix<double> stored(backend, a, DiaStorage::classes);
        int compared = 0;
        expect_setup_like_host(backend, a, stored, c.fine, c.fine.describe() + " wide", compared);
        EXPECT_EQ(compared, 1);
    }
}

TEST(MultigridSetupKernels, ClassifyPointsFindsEachPointsSet) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    std::mt19937 generator(7);
    const int slots = 9;
    for (const int kinds : {1, 3, 200, max_value_classes}) {
        // Random sets, each point one of them, some with zeros of either sign.
        std::uniform_real_distribution<double> value(-1.0, 1.0);
        std::vector<double> sets(static_cast<std::size_t>(kinds * slots));
        for (double& v : sets) {
            const double draw = value(generator);
            v = draw < -0.6 ? 0.0 : draw < -0.4 ? -0.0 : value(generator);
        }
        const std::int64_t points = 5000;
        std::uniform_int_distribution<int> pick(0, kinds - 1);
        std::vector<double> values(static_cast<std::size_t>(points * slots));
        std::vector<int> set_of(static_cast<std::size_t>(points));
        for (std::int64_t i = 0; i < points; ++i) {
            // Every set used at least once.
            set_of[static_cast<std::size_t>(i)] = i < kinds ? static_cast<int>(i) : pick(generator);
            for (int s = 0; s < slots; ++s) {
                values[static_cast<std::size_t>(s * points + i)] =
                    sets[static_cast<std::size_t>(set_of[static_cast<std::size_t>(i)] * slots + s)];
            }
        }
        const Array<double> on_backend = Array<double>::from_host(backend, values);
        Array<std::uint8_t> of_point(backend, static_cast<std::size_t>(points));
        std::vector<double> table;
        ASSERT_TRUE(backend->kernels<double>().classify_points(*backend, on_backend.data(), points,
                                                               slots, of_point.data(), table))
            << kinds << " sets";
        ASSERT_EQ(table.size(), static_cast<std::size_t>(kinds * slots)) << kinds << " sets";
        const std::vector<std::uint8_t> classes = of_point.to_host();
        for (std::int64_t i = 0; i < points; ++i) {
            for (int s = 0; s < slots; ++s) {
                ASSERT_EQ(table[classes[static_cast<std::size_t>(i)] * slots + s],
                          values[static_cast<std::size_t>(s * points + i)])
                    << "point " << i << " slot " << s << " of " << kinds << " sets";
            }
        }
    }
    // One set more than a byte names: no classes.
    std::vector<double> distinct(static_cast<std::size_t>((max_value_classes + 1) * 2));
    for (std::size_t i = 0; i < distinct.size(); ++i) distinct[i] = static_cast<double>(i % 300);
    const Array<double> too_many = Array<double>::from_host(backend, distinct);
    Array<std::uint8_t> of_point(backend, max_value_classes + 1);
    std::vector<double> table;
    EXPECT_FALSE(backend->kernels<double>().classify_points(
        *backend, too_many.data(), max_value_classes + 1, 2, of_point.data(), table));
}

TEST(MultigridSetupKernels, ClassifyPointsTakesFloatsAndNoPoints) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    // Two sets of floats, alternating; 1 + 2^-23 is a set of its own.
    const std::int64_t points = 1000;
    std::vector<float> values(static_cast<std::size_t>(2 * points));
    for (std::int64_t i = 0; i < points; ++i) {
        values[static_cast<std::size_t>(i)] = i % 2 == 0 ? 1.0f : 1.0f + 0x1p-23f;
        values[static_cast<std::size_t>(points + i)] = -0.25f;
    }
    const Array<float> on_backend = Array<float>::from_host(backend, values);
    Array<std::uint8_t> of_point(backend, static_cast<std::size_t>(points));
    std::vector<float> table;
    ASSERT_TRUE(backend->kernels<float>().classify_points(*backend, on_backend.data(), points, 2,
                                                          of_point.data(), table));
    ASSERT_EQ(table.size(), 4u);
    const std::vector<std::uint8_t> classes = of_point.to_host();
    EXPECT_NE(classes[0], classes[1]);
    for (std::int64_t i = 0; i < points; ++i) {
        const std::uint8_t c = classes[static_cast<std::size_t>(i)];
        EXPECT_EQ(table[c * 2u], values[static_cast<std::size_t>(i)]);
        EXPECT_EQ(table[c * 2u + 1], -0.25f);
    }
    // No points: no classes, and nothing read.
    std::vector<float> none = {1.0f};
    EXPECT_TRUE(backend->kernels<float>().classify_points(*backend, on_backend.data(), 0, 2,
                                                          of_point.data(), none));
    EXPECT_TRUE(none.empty());
}

// How many levels the back-end made: rows kept there (below the finest), transfer weights made.
struct MadeThere {
    int rows = 0;
    int weights = 0;
};

// One cycle from zero on random b by one process's hierarchy of `a`, its levels planned on the
// host (no back-end given to the plan) or made by the back-end (`on_backend`: a in double
// there, or null); the levels' summaries and bounds, and what the back-end made.
template <typename T>
std::vector<T> one_cycle(const std::shared_ptr<const Backend>& backend, const DiaData<double>& a,
                         const GridBox& box, const MultigridParameters& parameters, bool by_backend,
                         const DiaMatrix<double>* on_backend,
                         std::vector<MultigridLevelSummary>& summaries, MadeThere& made) {
    multigrid::Hierarchy<T> hierarchy(backend, parameters);
    hierarchy.resolve_cycle(multigrid::has_coefficient_jumps(a, multigrid::cycle_jump_ratio));
    multigrid::WholeLevels plan =
        by_backend ? multigrid::WholeLevels(a, box, parameters, backend, on_backend)
                   : multigrid::WholeLevels(a, box, parameters);
    hierarchy.build(plan, static_cast<std::size_t>(box.size()), {});
    summaries = hierarchy.summaries();
    made = {plan.levels_on_backend(), plan.weights_on_backend()};
    std::mt19937 generator(3);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    std::vector<T> b(static_cast<std::size_t>(box.size()));
    for (T& v : b) v = static_cast<T>(value(generator));
    const Array<T> b_on = Array<T>::from_host(backend, b);
    Array<T> x(backend, b.size());
    hierarchy.cycle_from_zero(b_on, x);
    return x.to_host();
}

// How many levels the back-end must have made: all of them (rows below the finest, weights on
// every level that coarsens), any number, or a count of rows (weights: any).
constexpr int all_levels = -2, any_number = -1;

// The hierarchy made by the back-end against the one planned on the host: the same levels, and
// its cycle the same values (the CPU's bits; the GPU's to rounding, its products fused), with
// the caller's rows given in each storage that holds them, or uploaded by the plan.
template <typename T>
void expect_hierarchy_like_host(const std::shared_ptr<const Backend>& backend,
                                const DiaData<double>& a, const GridBox& box, int on_backend,
                                const std::string& what,
                                const MultigridParameters& parameters = {}) {
    std::vector<MultigridLevelSummary> host_levels, backend_levels;
    MadeThere none, made;
    const std::vector<T> host =
        one_cycle<T>(backend, a, box, parameters, false, nullptr, host_levels, none);
    EXPECT_EQ(none.rows + none.weights, 0) << what;
    std::vector<std::unique_ptr<DiaMatrix<double>>> stored;
    for (const DiaStorage storage :
         {DiaStorage::general, DiaStorage::classes, DiaStorage::stencil}) {
        try {
            stored.push_back(std::make_unique<DiaMatrix<double>>(backend, a, storage));
        } catch (const std::invalid_argument&) {
        }
    }
    std::vector<const DiaMatrix<double>*> givens = {nullptr};
    for (const auto& matrix : stored) givens.push_back(matrix.get());
    for (const DiaMatrix<double>* given : givens) {
        const std::string how =
            what + (given ? " (the caller's rows, storage " +
                                std::to_string(static_cast<int>(given->storage())) + ")"
                          : std::string(" (uploaded)"));
        const std::vector<T> cycle =
            one_cycle<T>(backend, a, box, parameters, true, given, backend_levels, made);
        ASSERT_EQ(backend_levels.size(), host_levels.size()) << how;
        const int below_finest = static_cast<int>(host_levels.size()) - 1;
        if (on_backend == all_levels) {
            EXPECT_EQ(made.rows, below_finest) << how;
            EXPECT_EQ(made.weights, below_finest) << how;  // the coarsest has none
        } else if (on_backend != any_number) {
            EXPECT_EQ(made.rows, on_backend) << how;
        }
        for (std::size_t l = 0; l < host_levels.size(); ++l) {
            EXPECT_EQ(backend_levels[l].box.describe(), host_levels[l].box.describe()) << how;
            EXPECT_EQ(backend_levels[l].colours, host_levels[l].colours) << how << " level " << l;
        }
        double largest = 0, difference = 0;
        for (std::size_t i = 0; i < host.size(); ++i) {
            largest = std::max(largest, std::abs(static_cast<double>(host[i])));
            difference = std::max(difference, std::abs(static_cast<double>(cycle[i] - host[i])));
        }
#ifdef SIMRUN_TEST_ON_CUDA
        const double tolerance = (std::is_same_v<T, float> ? 1e-5 : 1e-12) * largest;
#else
        const double tolerance = 0.0;
#endif
        EXPECT_LE(difference, tolerance) << how << ": largest value " << largest;
    }
}

// A checkerboard of k = 1000 and 1 in cells of 4 x 4 nodes: couplings that jump.
DiaData<double> checkerboard(std::array<std::int32_t, 3> points, int dimension) {
    const auto k = [&](double x, double y, double z) {
        const auto cell = [](double v, std::int32_t n) {
            return static_cast<int>(std::floor(v * (n + 1) / 4.0));
        };
        const int parity =
            cell(x, points[0]) + cell(y, points[1]) + (dimension == 3 ? cell(z, points[2]) : 0);
        return parity % 2 == 0 ? 1000.0 : 1.0;
    };
    const std::array<double, 3> h = {1.0 / (points[0] + 1), 1.0 / (points[1] + 1),
                                     1.0 / (points[2] + 1)};
    const auto d = Side::dirichlet;
    return to_dia(testing::box_diffusion_matrix(points, dimension, h, k, {d, d, d, d, d, d}));
}

TEST(MultigridSetupOnTheBackEnd, TheHierarchyIsTheOnePlannedOnTheHost) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    const auto n = Side::neumann, d = Side::dirichlet;
    // Constant coefficients: every level in row classes, made by the back-end.
    for (const GridBox& box : {GridBox{2, {65, 65, 1}}, GridBox{2, {70, 41, 1}},
                               GridBox{3, {17, 17, 17}}, GridBox{3, {20, 13, 9}}}) {
        expect_hierarchy_like_host<double>(backend, stencil_with_identity_faces(box), box,
                                           all_levels, box.describe() + " identity faces");
    }
    const auto unit = [](double, double, double) { return 1.0; };
    const GridBox neumann{2, {64, 48, 1}};
    expect_hierarchy_like_host<double>(
        backend,
        to_dia(testing::box_diffusion_matrix({64, 48, 1}, 2, {1, 1, 1}, unit, {n, d, n, n, d, d})),
        neumann, all_levels, "64x48 Neumann sides");
    // Coefficients varying from face to face: too many kinds of row, the host takes them.
    expect_hierarchy_like_host<double>(backend,
                                       random_diffusion({40, 40, 1}, 2, {d, d, d, d, d, d}, 5),
                                       GridBox{2, {40, 40, 1}}, 0, "40x40 varying k");
    // Jumps: the local bases are the host's.
    expect_hierarchy_like_host<double>(backend, checkerboard({48, 48, 1}, 2),
                                       GridBox{2, {48, 48, 1}}, any_number, "48x48 checkerboard");
    expect_hierarchy_like_host<double>(backend, checkerboard({16, 16, 16}, 3),
                                       GridBox{3, {16, 16, 16}}, any_number, "16^3 checkerboard");
    // A box two points thick: its diagonals' steps are decoded entry by entry, on the host.
    const GridBox thin{3, {33, 33, 2}};
    expect_hierarchy_like_host<double>(backend, stencil_with_identity_faces(thin), thin, 0,
                                       "33x33x2 identity faces");
    // Two points across x, strongly coupled along it: the caller's rows in classes are measured
    // entry by entry too (a diagonal's step is not one step there), as rows are.
    const GridBox thin_x{3, {2, 33, 33}};
    expect_hierarchy_like_host<double>(backend,
                                       to_dia(testing::box_diffusion_matrix(
                                           {2, 33, 33}, 3, {0.1, 1, 1}, unit, {n, n, d, d, d, d})),
                                       thin_x, any_number, "2x33x33 strong along x");
    // Chebyshev smoothing reads the smoother's bound and 1 / a_ii, made from the classes.
    MultigridParameters chebyshev;
    chebyshev.smoother = MultigridSmoother::chebyshev;
    const GridBox square{2, {65, 65, 1}};
    expect_hierarchy_like_host<double>(backend, stencil_with_identity_faces(square), square,
                                       all_levels, "65x65 Chebyshev", chebyshev);
    expect_hierarchy_like_host<double>(backend, checkerboard({48, 48, 1}, 2),
                                       GridBox{2, {48, 48, 1}}, any_number,
                                       "48x48 checkerboard Chebyshev", chebyshev);
    // Float cycles, made from double rows.
    expect_hierarchy_like_host<float>(backend,
                                      random_diffusion({40, 40, 1}, 2, {d, d, d, d, d, d}, 6),
                                      GridBox{2, {40, 40, 1}}, 0, "40x40 varying k, float");
    const GridBox box{2, {65, 65, 1}};
    expect_hierarchy_like_host<float>(backend, stencil_with_identity_faces(box), box, all_levels,
                                      "65x65 float");
}

TEST(MultigridSetupOnTheBackEnd, ClassesBoundTheSmootherAndNameARowWithoutAPositiveDiagonal) {
    // 3 x 2 points of a 1D-like box, two classes: [-1, 4, -2] and [-1, 0, -1].
    multigrid::ClassRows rows;
    rows.n = 6;
    rows.offsets = {-1, 0, 1};
    rows.table = {-1, 4, -2, -1, 0, -1};
    rows.of_row = {0, 0, 0, 0, 0, 0};
    const GridBox box{2, {3, 2, 1}};
    EXPECT_EQ(multigrid::gershgorin_of_classes(rows, box, 1), 7.0 / 4.0);
    rows.of_row[4] = 1;  // row 4, at (1, 1), has no positive diagonal entry
    try {
        multigrid::gershgorin_of_classes(rows, box, 2);
        ADD_FAILURE() << "a zero diagonal entry was accepted";
    } catch (const MultigridSetupError& e) {
        EXPECT_NE(std::string(e.what()).find("level 2"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("row 4 at (1, 1, 0)"), std::string::npos) << e.what();
    }
    // On the finest level it is the input's: std::invalid_argument.
    EXPECT_THROW(multigrid::gershgorin_of_classes(rows, box, 0), std::invalid_argument);
}

TEST(MultigridSetupOnTheBackEnd, TheCycleOfJumpingClassesIsWAndTheRowsGivenMustBeTheRows) {
    const auto backend = test_backend();
    SIMRUN_SKIP_WITHOUT_BACKEND(backend);
    // The finest level's jumps read from its classes: an automatic cycle is W, as from its rows.
    const GridBox box{2, {48, 48, 1}};
    const DiaData<double> a = checkerboard({48, 48, 1}, 2);
    const DiaMatrix<double> in_classes(backend, a, DiaStorage::classes);
    const MultigridHierarchy<double> by_classes(backend, a, box, MultigridParameters{},
                                                &in_classes);
    const MultigridHierarchy<double> by_rows(backend, a, box, MultigridParameters{});
    EXPECT_NE(by_classes.describe().find("W(1,1)"), std::string::npos) << by_classes.describe();
    EXPECT_EQ(by_classes.describe(), by_rows.describe());
    // Rows on the back-end whose diagonals are not the rows': refused, saying so.
    DiaData<double> wider = a;
    wider.offsets.push_back(2);
    wider.values.resize(wider.offsets.size() * static_cast<std::size_t>(a.n), 0.0);
    std::sort(wider.offsets.begin(), wider.offsets.end());  // (refused before its values are read)
    const DiaMatrix<double> other(backend, wider, DiaStorage::general);
    try {
        const MultigridHierarchy<double> refused(backend, a, box, MultigridParameters{}, &other);
        ADD_FAILURE() << "rows on the back-end of other diagonals were accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("not the rows given"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace simrun::solvers

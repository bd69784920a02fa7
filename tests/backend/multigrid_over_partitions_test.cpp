// Multigrid over a partition of the box (ranks as threads of one process,
// tests/support/thread_ranks.hpp): a cycle whose levels are split in parts over a process grid,
// each part with a point of halo on every side another rank holds, is one process's cycle to
// rounding (the same coarse operators, the whole box's colours, the halo exchanged between
// them), with the levels split, gathered, or both; and CG with it takes one process's
// iterations to the same solution. Slabs are the process grid 1 x K (1 x 1 x K in 3D), whose
// ranks are also given their rows as a run over slabs gives them: a block of whole planes.
// Built per back-end: on CUDA the ranks share the GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "multigrid/partitioned_levels.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/matrices/conversions.hpp"
#include "simrun/solvers/multigrid/multigrid_hierarchy.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"
#include "support/grid_boxes.hpp"
#include "support/rank_blocks.hpp"
#include "support/solve_over_ranks.hpp"
#include "support/test_backend.hpp"
#include "support/test_matrices.hpp"
#include "support/thread_ranks.hpp"

namespace simrun::solvers {
namespace {

using testing::GridBoxes;
using testing::Side;
using testing::test_backend;
using testing::ThreadRanks;

// How each rank is given its rows: its part's rows on its window (PartRows), as a run over
// any process grid gives them; or, over slabs, its block of whole planes (DIA rows in the
// block's numbering, the couplings to the neighbours' planes kept), as a run over slabs does.
enum class Entry { part_rows, block_of_planes };

// Slabs: the box split along its last axis only.
bool slabs(const GridBoxes& grid, int dimension) {
    for (int axis = 0; axis + 1 < dimension; ++axis) {
        if (grid.parts[static_cast<std::size_t>(axis)] != 1) return false;
    }
    return true;
}

// The axes `grid` splits (bit a: axis a): by default the colours take the parity across them
// slowest (MultigridParameters::slow_colour_axes), where the finest level is split.
unsigned split_axes_of(const GridBoxes& grid) {
    unsigned axes = 0;
    for (std::size_t axis = 0; axis < 3; ++axis) {
        if (grid.parts[axis] > 1) axes |= 1u << axis;
    }
    return axes;
}

// The ways a rank may be given its rows over `grid`: both over slabs.
std::vector<Entry> entries_of(const GridBoxes& grid, int dimension) {
    if (slabs(grid, dimension)) return {Entry::part_rows, Entry::block_of_planes};
    return {Entry::part_rows};
}

std::string words_of(const GridBoxes& grid, Entry entry) {
    const auto& p = grid.parts;
    return std::to_string(p[0]) + "x" + std::to_string(p[1]) + "x" + std::to_string(p[2]) +
           (entry == Entry::part_rows ? ", part rows" : ", blocks of planes");
}

// This rank's hierarchy of `a`, given its rows as `entry` says: `rows`, its part's rows on its
// window, or the same part of a slab as a block of `a`'s rows (whole planes: one run of them).
MultigridHierarchy<double> hierarchy_on(std::shared_ptr<const Backend> on, Entry entry,
                                        const DiaData<double>& a, const PartRows<double>& rows,
                                        const MultigridParameters& parameters) {
    if (entry == Entry::part_rows) return MultigridHierarchy<double>(on, rows, parameters);
    const Box& part = rows.part;
    const DiaData<double> block = testing::block_of(
        a, rows.box.row(part.lower[0], part.lower[1], part.lower[2]), part.size());
    return MultigridHierarchy<double>(on, block, rows.box, parameters);
}

// The values of `whole` (on the points of `box`) at the points of `part`, x fastest, and in
// `at` where each lies in the box.
std::vector<double> part_of(const std::vector<double>& whole, const GridBox& box, const Box& part,
                            std::vector<std::int64_t>& at) {
    std::vector<double> values;
    for_each_point(part, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t) {
        at.push_back(box.row(i, j, k));
        values.push_back(whole[static_cast<std::size_t>(at.back())]);
    });
    return values;
}

// A matrix on the points of a box split over a process grid, each rank given its rows as
// `entry` says.
struct OverGrid {
    const DiaData<double>& a;
    int dimension;
    GridBoxes grid;
    Entry entry;
};

// One process's result `u` of `cycles` cycles (the first from zero) on b, held over the grid:
// each rank's hierarchy passes check(hierarchy) first, then runs the cycles from x = NaN (not
// read: from zero) and gives u at its points within `tolerance`.
template <typename Check>
void cycle_over_grid(const OverGrid& over, const MultigridParameters& parameters,
                     const std::vector<double>& b, int cycles, const std::vector<double>& u,
                     double tolerance, Check&& check) {
    ThreadRanks ranks(over.grid.ranks());
    ranks.run([&](std::shared_ptr<const Communicator> communicator) {
        const int r = communicator->rank();
        const auto on = test_backend(communicator);
        const PartRows<double> rows = testing::part_rows(over.a, over.grid, over.dimension, r);
        const MultigridHierarchy<double> split =
            hierarchy_on(on, over.entry, over.a, rows, parameters);
        check(split);
        // This rank's part of b, and of the result.
        std::vector<std::int64_t> at;
        const std::vector<double> part_b = part_of(b, rows.box, rows.part, at);
        const auto bp = Array<double>::from_host(on, part_b);
        Array<double> x(on, part_b.size());
        fill(x, std::numeric_limits<double>::quiet_NaN());
        // Every rank's set-up done before any cycle: ranks as threads share one CUDA context,
        // where freeing memory waits for the whole device, also for a neighbour's halo wait on
        // the GPU (SIMRUN_HALO=device).
        communicator->barrier();
        split.cycle_from_zero(bp, x);
        for (int cycle = 1; cycle < cycles; ++cycle) split.cycle(bp, x);
        const std::vector<double> got = x.to_host();
        for (std::size_t i = 0; i < got.size(); ++i) {
            ASSERT_NEAR(got[i], u[static_cast<std::size_t>(at[i])], tolerance)
                << over.grid.ranks() << " ranks: point " << at[i] << " of rank " << r;
        }
    });
}

// A process grid of a case, and what a hierarchy over it says beyond "over N ranks".
struct ProcessGrid {
    std::array<int, 3> parts;
    // Where given (a grid split along one axis): the first level whose parts along that axis
    // would be thinner than the ghost layers. It and the levels after it are held by as many
    // ranks as can hold ghost_layers points each, until that is one rank: from there they are
    // gathered.
    std::optional<std::size_t> first_thin = std::nullopt;
    bool finest_gathered = false;  // parts too thin: every level gathered
};

// A diffusion problem on a box: its points, spacing and sides, and where its coefficient jumps.
struct Problem {
    std::array<std::int32_t, 3> points;
    int dimension;
    std::array<double, 3> h;
    std::array<Side, 6> sides;
    // The coefficient jumps to 100 where slant . (x, y, z) > 0.55 (a slanted line or plane; in
    // 2D z is h_z = 1); 1 everywhere where slant is zero.
    std::array<double, 3> slant;
};

struct Case {
    std::string name;
    Problem problem;
    // gather_size 0 here (the GPU's default gathers levels this small): every level that can
    // be is split.
    MultigridParameters parameters;
    std::vector<ProcessGrid> grids;
    // Where > 0, gather_size is set to this level's size (one process's levels): the levels
    // before it split, it and the rest gathered.
    std::size_t gathered_by_size = 0;
};

// The parameters of the cases, every level split that can be (gather_size 0).
struct CaseParameters {
    MultigridParameters split;  // the defaults
    MultigridParameters chebyshev_w, f_small, nonsymmetric;
    // Levels down to 16 points, so that the split axis's slabs get thin (an F-cycle, and a
    // W-cycle: the ranks that hold none of a level visit the levels below as the others do).
    MultigridParameters thin_f, thin_w;

    CaseParameters() {
        chebyshev_w.smoother = MultigridSmoother::chebyshev;
        chebyshev_w.cycle = MultigridCycle::w;
        chebyshev_w.pre_sweeps = chebyshev_w.post_sweeps = 2;
        f_small.cycle = MultigridCycle::f;
        f_small.coarsest_size = 16;
        nonsymmetric.symmetric = false;
        thin_f.coarsest_size = 16;
        thin_f.cycle = MultigridCycle::f;
        thin_w = thin_f;
        thin_w.cycle = MultigridCycle::w;
        for (MultigridParameters* p :
             {&split, &chebyshev_w, &f_small, &nonsymmetric, &thin_f, &thin_w}) {
            p->gather_size = 0;
        }
    }
};

std::vector<Case> cases() {
    const auto d = Side::dirichlet, n = Side::neumann;
    const std::array<Side, 6> dirichlet{d, d, d, d, d, d};
    const std::array<double, 3> line{1, 0.7, 0}, plane{1, 0.7, 0.3}, none{0, 0, 0};
    const Problem square{{64, 64, 1}, 2, {1.0 / 65, 1.0 / 65, 1}, dirichlet, line};
    const CaseParameters p;
    std::vector<Case> list;
    const auto add = [&](std::string name, const Problem& problem,
                         const MultigridParameters& parameters, std::vector<ProcessGrid> grids) {
        list.push_back({std::move(name), problem, parameters, std::move(grids)});
    };
    // Several split levels, then the rest gathered (slabs of 2 ranks: 32, 16, 8 planes each).
    add("2D jump on x + 0.7 y = 0.55, Dirichlet", square, p.split,
        {{.parts = {1, 2, 1}}, {.parts = {1, 3, 1}}});
    // Uneven parts along both axes; 64 -> 32 -> 16 -> 8 -> 4 points across a part of 2x2, the
    // last level with parts of 2 points (then 1: gathered).
    Problem square_plane = square;
    square_plane.slant = plane;
    add("2D jump on x + 0.7 y + 0.3 = 0.55, Dirichlet", square_plane, p.split,
        {{.parts = {2, 2, 1}}, {.parts = {3, 2, 1}}, {.parts = {1, 3, 1}}, {.parts = {4, 1, 1}}});
    // Split at the finest level, gathered from the second on by its size.
    add("2D jump on x + 0.7 y = 0.55, gathered by size", square, p.split,
        {{.parts = {1, 2, 1}}, {.parts = {1, 3, 1}}});
    list.back().gathered_by_size = 1;
    // Neumann ends along the slabs' split axis (the coarse points' choice at its ends), uneven
    // slabs, a W-cycle with Chebyshev; and across both split axes of boxes.
    Problem neumann{{33, 45, 1}, 2, {0.03, 0.025, 1}, {d, d, n, n, d, d}, none};
    add("2D Neumann in y, Chebyshev W", neumann, p.chebyshev_w,
        {{.parts = {1, 2, 1}}, {.parts = {1, 4, 1}}});
    neumann.sides[0] = n;
    add("2D Neumann at x = 0 and in y, Chebyshev W", neumann, p.chebyshev_w,
        {{.parts = {2, 2, 1}}, {.parts = {3, 1, 1}}});
    // Strong coupling along x only: y is not coarsened (semi-coarsening), nonsymmetric.
    add("2D anisotropic", {{40, 36, 1}, 2, {0.01, 0.1, 1}, dirichlet, none}, p.nonsymmetric,
        {{.parts = {1, 3, 1}}, {.parts = {2, 2, 1}}});
    // 3D, levels down to 16 points (F-cycle), over slabs, and split along one, two and three
    // axes: the Galerkin levels couple diagonal neighbours (8 colours, edges and corners of the
    // halo), and the coarse levels' parts and windows get fewer than 3 points across (their
    // offsets read from the points' coordinates).
    Problem cube{{20, 18, 26}, 3, {0.05, 0.05, 0.04}, {d, n, d, d, n, d}, line};
    add("3D jump on x + 0.7 y = 0.55", cube, p.f_small,
        {{.parts = {1, 1, 2}}, {.parts = {1, 1, 3}}});
    cube.slant = plane;
    add("3D jump on x + 0.7 y + 0.3 z = 0.55", cube, p.f_small,
        {{.parts = {2, 1, 2}}, {.parts = {2, 2, 2}}, {.parts = {1, 3, 1}}, {.parts = {1, 1, 2}}});
    // Two points along an axis: a DIA offset names several steps there (the rows read point by
    // point), in 2D across and along the split, in 3D beside a split axis (over 2x1x2 the
    // parts are 5 points across x, too thin: every level gathered).
    add("2D two points across", {{2, 40, 1}, 2, {0.3, 0.025, 1}, {d, n, d, d, d, d}, plane},
        p.split, {{.parts = {1, 4, 1}}, {.parts = {1, 3, 1}}});
    add("3D two points across", {{10, 2, 12}, 3, {0.1, 0.3, 0.08}, {d, d, n, d, d, d}, none},
        p.f_small, {{.parts = {2, 1, 2}, .finest_gathered = true}, {.parts = {1, 2, 2}}});
    // Fewer points per part than the ghost layers: the finest level is gathered (slabs of 5
    // planes; parts of one point across).
    add("2D thin slabs", {{21, 20, 1}, 2, {0.05, 0.05, 1}, dirichlet, none}, p.split,
        {{.parts = {1, 4, 1}, .finest_gathered = true}});
    add("2D thin parts", {{5, 20, 1}, 2, {0.05, 0.05, 1}, dirichlet, none}, p.split,
        {{.parts = {5, 1, 1}, .finest_gathered = true}});
    // Thin slabs below the finest level: 97 planes over 4 ranks (24-25 each), 49 (12-13), 25
    // (6-7), then level 3's 13 planes (3-4 a rank) split anew over the 2 ranks that can hold 6
    // each, then 6 gathered; over 5 ranks 97 (19-20), 49 (9-10), then level 2's 25 (5 a rank)
    // over 4 ranks, 13 over 2.
    add("2D thin coarse slabs, split over fewer ranks, F-cycle",
        {{24, 97, 1}, 2, {0.01, 0.01, 1}, {d, d, n, n, d, d}, line}, p.thin_f,
        {{.parts = {1, 4, 1}, .first_thin = 3}, {.parts = {1, 5, 1}, .first_thin = 2}});
    // The same in 3D with a W-cycle (the ranks that hold none of a level visit the gathered
    // levels below it as often as the others): 3 ranks, 49 planes (16-17), 25 (8-9), then level
    // 2's 13 (4-5 a rank) over 2.
    add("3D thin coarse slabs, W-cycle",
        {{9, 10, 49}, 3, {0.02, 0.02, 0.02}, {d, d, d, d, d, n}, none}, p.thin_w,
        {{.parts = {1, 1, 3}, .first_thin = 2}});
    return list;
}

DiaData<double> matrix_of(const Problem& problem) {
    const auto& s = problem.slant;
    const auto k = [&](double x, double y, double z) {
        return s[0] * x + s[1] * y + s[2] * z > 0.55 ? 100.0 : 1.0;
    };
    return to_dia(testing::box_diffusion_matrix(problem.points, problem.dimension, problem.h, k,
                                                problem.sides));
}

// describe()'s words for the levels of `whole` from `first_thin` on over `grid`, split along
// one axis: each held by as many ranks as can hold ghost_layers points of it along that axis,
// down to 2, then "from <level> gathered".
std::string fewer_ranks_words(const MultigridHierarchy<double>& whole, const GridBoxes& grid,
                              std::size_t first_thin) {
    const auto axis = static_cast<std::size_t>(
        std::find_if(grid.parts.begin(), grid.parts.end(), [](int p) { return p > 1; }) -
        grid.parts.begin());
    std::string fewer = "(";
    int holders = grid.ranks();
    std::size_t l = first_thin;
    for (; l < whole.levels().size(); ++l) {
        const GridBox& level = whole.levels()[l].box;
        holders = std::min(holders, static_cast<int>(level.points[axis] / multigrid::ghost_layers));
        if (holders < 2) break;
        fewer += level.describe() + " on " + std::to_string(holders) + ", ";
    }
    EXPECT_LT(l, whole.levels().size());
    if (l >= whole.levels().size()) return fewer;
    return fewer + "from " + whole.levels()[l].box.describe() + " gathered";
}

// The split hierarchy's levels are one process's, and describe() says what `g` expects.
void check_levels(const MultigridHierarchy<double>& split, const MultigridHierarchy<double>& whole,
                  const Case& c, const ProcessGrid& g, const GridBoxes& grid) {
    // (Not ASSERT: every rank goes on to the cycles, which it would otherwise leave waiting.)
    EXPECT_EQ(split.levels().size(), whole.levels().size()) << split.describe();
    for (std::size_t l = 0; l < std::min(split.levels().size(), whole.levels().size()); ++l) {
        EXPECT_EQ(split.levels()[l].box.describe(), whole.levels()[l].box.describe());
        EXPECT_EQ(split.levels()[l].colours, whole.levels()[l].colours);
    }
    const std::string description = split.describe();
    std::vector<std::string> words{"over " + std::to_string(grid.ranks()) + " ranks"};
    if (g.first_thin) words.push_back(fewer_ranks_words(whole, grid, *g.first_thin));
    if (c.gathered_by_size > 0) {
        words.push_back("from " + whole.levels()[c.gathered_by_size].box.describe() + " gathered");
    }
    if (g.finest_gathered) words.push_back("every level gathered");
    for (const std::string& expected : words) {
        EXPECT_NE(description.find(expected), std::string::npos)
            << description << "\n expected " << expected;
    }
}

// One process's two cycles of `a` on b from zero, the same whether the first is cycle() from
// x = 0 or cycle_from_zero() from x = NaN.
std::vector<double> two_cycles(const MultigridParameters& parameters, const DiaData<double>& a,
                               const GridBox& box, const std::vector<double>& b) {
    const auto backend = test_backend();
    const MultigridHierarchy<double> whole(backend, a, box, parameters);
    const auto n = b.size();
    Array<double> x1(backend, n);
    fill(x1, 0.0);
    whole.cycle(Array<double>::from_host(backend, b), x1);
    whole.cycle(Array<double>::from_host(backend, b), x1);
    const std::vector<double> u1 = x1.to_host();
    Array<double> x0(backend, n);
    fill(x0, std::numeric_limits<double>::quiet_NaN());
    whole.cycle_from_zero(Array<double>::from_host(backend, b), x0);
    whole.cycle(Array<double>::from_host(backend, b), x0);
    EXPECT_EQ(x0.to_host(), u1);
    return u1;
}

// The first cycle from zero (as a preconditioner takes it, x not read), the second from its
// result; one process's two cycles from zero the same whether the first is cycle() from x = 0
// or cycle_from_zero() from x = NaN.
TEST(MultigridOverPartitions, ACycleIsOneProcessCycle) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    for (const Case& c : cases()) {
        SCOPED_TRACE(c.name);
        const DiaData<double> a = matrix_of(c.problem);
        const int dimension = c.problem.dimension;
        const auto& points = c.problem.points;
        const GridBox box{dimension, {points[0], points[1], points[2]}};
        const auto n = static_cast<std::size_t>(a.n);
        std::vector<double> b(n);
        std::mt19937 generator(7);
        for (double& v : b) v = std::uniform_real_distribution<double>(-1, 1)(generator);
        const auto backend = test_backend();
        const MultigridHierarchy<double> whole(backend, a, box, c.parameters);
        MultigridParameters parameters = c.parameters;
        if (c.gathered_by_size > 0) {
            ASSERT_GT(whole.levels().size(), c.gathered_by_size);
            parameters.gather_size = whole.levels()[c.gathered_by_size].box.size();
        }
        for (const ProcessGrid& g : c.grids) {
            const GridBoxes grid{box.points, g.parts};
            // One process's two cycles, its colours in the order the grid's take them.
            MultigridParameters one = c.parameters;
            one.slow_colour_axes = g.finest_gathered ? 0u : split_axes_of(grid);
            const std::vector<double> u1 = two_cycles(one, a, box, b);
            double scale = 0;
            for (const double v : u1) scale = std::max(scale, std::abs(v));
            for (const Entry entry : entries_of(grid, dimension)) {
                SCOPED_TRACE(words_of(grid, entry));
                cycle_over_grid({a, dimension, grid, entry}, parameters, b, 2, u1, 1e-12 * scale,
                                [&](const MultigridHierarchy<double>& split) {
                                    check_levels(split, whole, c, g, grid);
                                });
            }
        }
    }
}

// One process's cycle from zero on b = cos(0.11 i), its colours in the order `grid`'s take
// them, and its largest magnitude in `scale`.
std::vector<double> one_cycle_in_grid_order(const DiaData<double>& a, const GridBox& box,
                                            const GridBoxes& grid,
                                            const MultigridParameters& parameters,
                                            std::vector<double>& b, double& scale) {
    MultigridParameters in_grid_order = parameters;
    in_grid_order.slow_colour_axes = split_axes_of(grid);
    const auto backend = test_backend();
    const MultigridHierarchy<double> whole(backend, a, box, in_grid_order);
    b.resize(static_cast<std::size_t>(a.n));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.11 * static_cast<double>(i));
    Array<double> x1(backend, b.size());
    whole.cycle_from_zero(Array<double>::from_host(backend, b), x1);
    const std::vector<double> u1 = x1.to_host();
    scale = 0;
    for (const double v : u1) scale = std::max(scale, std::abs(v));
    return u1;
}

// Parts thinner than the ghost layers along a split axis: the level is split anew over fewer
// ranks along that axis (the first ones; the others only visit the levels below for their
// collectives, as often as the cycle does: W), and a cycle is still one process's.
TEST(MultigridOverPartitions, ThinPartsGoToFewerRanks) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    struct Fewer {
        std::int32_t nx, ny;
        std::array<int, 3> parts;
        MultigridCycle cycle;
        std::string held;  // describe()'s words for the level held by fewer ranks
    };
    const auto one = [](double, double, double) { return 1.0; };
    for (const Fewer& c : {Fewer{97, 25, {2, 2, 1}, MultigridCycle::v, "12x6 on 2, "},
                           Fewer{97, 97, {4, 1, 1}, MultigridCycle::w, "12x12 on 2, "},
                           Fewer{60, 61, {3, 2, 1}, MultigridCycle::f, "15x15 on 4, "}}) {
        SCOPED_TRACE(c.held);
        const std::array<std::int32_t, 3> points{c.nx, c.ny, 1};
        const DiaData<double> a = to_dia(testing::box_diffusion_matrix(
            points, 2, {1.0 / c.nx, 1.0 / c.ny, 1}, one, std::array<Side, 6>{}));
        const GridBox box{2, {c.nx, c.ny, 1}};
        MultigridParameters parameters;
        parameters.gather_size = 0;
        parameters.coarsest_size = 16;
        parameters.cycle = c.cycle;
        const GridBoxes grid{box.points, c.parts};
        std::vector<double> b;
        double scale = 0;
        const std::vector<double> u1 = one_cycle_in_grid_order(a, box, grid, parameters, b, scale);
        for (const Entry entry : entries_of(grid, 2)) {
            SCOPED_TRACE(words_of(grid, entry));
            cycle_over_grid({a, 2, grid, entry}, parameters, b, 1, u1, 1e-12 * scale,
                            [&](const MultigridHierarchy<double>& split) {
                                EXPECT_NE(split.describe().find(c.held), std::string::npos)
                                    << split.describe();
                            });
        }
    }
}

// Each rank's levels are made on its back-end from its rows kept there: with few kinds of rows
// (constant coefficients) every split level's operator is row classes; where one rank's rows
// take too many kinds (random coefficients in its corner alone) that rank goes on on the host
// while the others keep theirs, and the cycle is still one process's.
TEST(MultigridOverPartitions, LevelsAreMadeWhereEachRankKeepsItsRows) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto one = [](double, double, double) { return 1.0; };
    const auto corner = [](double x, double y, double) {
        return x < 0.3 && y < 0.3 ? 1.5 + 0.5 * std::sin(997.0 * x + 1213.0 * y) : 1.0;
    };
    const std::array<std::int32_t, 3> points{65, 65, 1};
    const GridBox box{2, {65, 65, 1}};
    MultigridParameters parameters;
    parameters.gather_size = 0;
    for (const bool mixed : {false, true}) {
        SCOPED_TRACE(mixed ? "random corner" : "constant");
        const DiaData<double> a = to_dia(testing::box_diffusion_matrix(
            points, 2, {1.0 / 66, 1.0 / 66, 1}, mixed ? corner : one, std::array<Side, 6>{}));
        const GridBoxes grid{box.points, {2, 2, 1}};
        std::vector<double> b;
        double scale = 0;
        const std::vector<double> u1 = one_cycle_in_grid_order(a, box, grid, parameters, b, scale);
        // The ranks whose split levels (65^2 and 32^2 over 2 x 2; 16^2 gathered) are classes.
        std::atomic<int> kept = 0;
        cycle_over_grid({a, 2, grid, Entry::part_rows}, parameters, b, 1, u1, 1e-12 * scale,
                        [&](const MultigridHierarchy<double>& split) {
                            const auto& levels = split.levels();
                            ASSERT_EQ(levels.size(), 3u) << split.describe();
                            if (levels[0].storage == DiaStorage::classes &&
                                levels[1].storage == DiaStorage::classes) {
                                ++kept;
                            }
                        });
        // The random corner is rank 0's alone: it goes on on the host, the others keep theirs.
        EXPECT_EQ(kept.load(), mixed ? 3 : 4);
    }
}

// The halo exchanges of one cycle on each rank of `grid`.
std::vector<std::int64_t> exchanges_of_a_cycle(const DiaData<double>& a, const GridBoxes& grid,
                                               const MultigridParameters& parameters) {
    std::vector<std::int64_t> counts(static_cast<std::size_t>(grid.ranks()));
    ThreadRanks ranks(grid.ranks());
    ranks.run([&](std::shared_ptr<const Communicator> communicator) {
        const int r = communicator->rank();
        const auto on = test_backend(communicator);
        const PartRows<double> rows = testing::part_rows(a, grid, 2, r);
        const MultigridHierarchy<double> split(on, rows, parameters);
        const auto b = Array<double>::from_host(
            on, std::vector<double>(static_cast<std::size_t>(rows.part.size()), 1.0));
        Array<double> x(on, b.size());
        communicator->barrier();
        const std::int64_t before = communicator->times().halo.count;
        split.cycle_from_zero(b, x);
        counts[static_cast<std::size_t>(r)] = communicator->times().halo.count - before;
    });
    return counts;
}

// A square's Galerkin levels (9 points: 4 colours) split across x exchange their halo as often
// as split across y, once per half of the colours, the colours taking the parity across the
// split slowest; in x's order (the parity along x fastest) split across x they exchange after
// each colour.
TEST(MultigridOverPartitions, ASplitAcrossAnyAxisExchangesOncePerHalfOfTheColours) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto one = [](double, double, double) { return 1.0; };
    const DiaData<double> a = to_dia(testing::box_diffusion_matrix(
        {65, 65, 1}, 2, {1.0 / 66, 1.0 / 66, 1}, one, std::array<Side, 6>{}));
    const GridBox box{2, {65, 65, 1}};
    MultigridParameters parameters;
    parameters.gather_size = 0;
    parameters.cycle = MultigridCycle::v;
    const auto across_y = exchanges_of_a_cycle(a, GridBoxes{box.points, {1, 2, 1}}, parameters);
    const auto across_x = exchanges_of_a_cycle(a, GridBoxes{box.points, {2, 1, 1}}, parameters);
    EXPECT_EQ(across_x, across_y);
    MultigridParameters x_fastest = parameters;
    x_fastest.slow_colour_axes = 0;
    const auto in_order = exchanges_of_a_cycle(a, GridBoxes{box.points, {2, 1, 1}}, x_fastest);
    // Each sweep of each Galerkin level split over both ranks: 2 exchanges more.
    EXPECT_GT(in_order[0], across_x[0] + 2);
}

// A coarse level too thin for every rank, split anew over fewer ranks, that then does not
// coarsen (here: positive couplings, which the interpolation does not follow, leave the next
// level without any) is gathered after all, each rank's restriction writing its own part of
// it: still one process's cycle.
TEST(MultigridOverPartitions, ALevelSplitAnewThatDoesNotCoarsenIsGathered) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const GridBox box{2, {7, 49, 1}};
    DiaData<double> a{box.size(), {-7, -1, 0, 1, 7}, {}};
    a.values.assign(5 * static_cast<std::size_t>(a.n), 0.0);
    for (std::int64_t i = 0; i < a.n; ++i) {
        const std::int64_t x = i % 7, y = i / 7;
        a.at(2, i) = 5.0;
        if (y > 0) a.at(0, i) = 1.0;
        if (x > 0) a.at(1, i) = 1.0;
        if (x < 6) a.at(3, i) = 1.0;
        if (y < 48) a.at(4, i) = 1.0;
    }
    MultigridParameters parameters;
    parameters.gather_size = 0;
    parameters.coarsest_size = 16;
    const auto backend = test_backend();
    const MultigridHierarchy<double> whole(backend, a, box, parameters);
    ASSERT_EQ(whole.levels().size(), 2u) << whole.describe();  // the second does not coarsen
    std::vector<double> b(static_cast<std::size_t>(a.n));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(0.3 * static_cast<double>(i));
    Array<double> x1(backend, b.size());
    whole.cycle_from_zero(Array<double>::from_host(backend, b), x1);
    const std::vector<double> u1 = x1.to_host();
    // Slabs of 5 ranks: 9-10 planes each; the next level's 25 planes would leave them 5, so
    // they go to 4 ranks, and are then gathered.
    const GridBoxes grid{box.points, {1, 5, 1}};
    const std::string gathered = "from " + whole.levels()[1].box.describe() + " gathered";
    for (const Entry entry : entries_of(grid, 2)) {
        SCOPED_TRACE(words_of(grid, entry));
        cycle_over_grid({a, 2, grid, entry}, parameters, b, 1, u1, 1e-12,
                        [&](const MultigridHierarchy<double>& split) {
                            EXPECT_NE(split.describe().find(gathered), std::string::npos)
                                << split.describe();
                        });
    }
}

// gather_size left to the back-end: a GPU gathers a level of at most 65536 points whole on every
// rank (its halo exchanges would cost more than its work), the CPU splits it; 0 splits on both.
TEST(MultigridOverPartitions, TheBackEndChoosesWhereToGather) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto one = [](double, double, double) { return 1.0; };
    const DiaData<double> a = to_dia(testing::diffusion_matrix(95, 2, one));  // 9025 points
    const GridBox box{2, {95, 95, 1}};
    const bool gpu = test_backend()->kind() == BackendKind::cuda;
    MultigridParameters automatic, split;
    split.gather_size = 0;
    EXPECT_EQ(gather_size_on(automatic, BackendKind::cuda), 65536);
    EXPECT_EQ(gather_size_on(automatic, BackendKind::cpu), 0);
    EXPECT_EQ(gather_size_on(split, BackendKind::cuda), 0);
    const GridBoxes grid{box.points, {1, 2, 1}};
    for (const Entry entry : entries_of(grid, 2)) {
        SCOPED_TRACE(words_of(grid, entry));
        ThreadRanks ranks(grid.ranks());
        ranks.run([&](std::shared_ptr<const Communicator> communicator) {
            const auto on = test_backend(communicator);
            const PartRows<double> rows = testing::part_rows(a, grid, 2, communicator->rank());
            const MultigridHierarchy<double> chosen = hierarchy_on(on, entry, a, rows, automatic);
            const MultigridHierarchy<double> all_split = hierarchy_on(on, entry, a, rows, split);
            const bool finest_gathered =
                chosen.describe().find("every level gathered") != std::string::npos;
            EXPECT_EQ(finest_gathered, gpu) << chosen.describe();
            EXPECT_EQ(all_split.describe().find("every level gathered"), std::string::npos)
                << all_split.describe();
        });
    }
}

// Solves over `grid` with `plan`, each rank given its rows as `entry` says and its part of b
// (`b_ranks`, in the ranks' numbering); check(const RankSolve&) runs on each rank's thread.
template <typename Check>
void solve_over_grid(const OverGrid& over, const std::vector<double>& b_ranks,
                     const SolverPlan& plan, const MethodParameters& parameters, Check&& check) {
    if (over.entry == Entry::block_of_planes) {
        // Over slabs the ranks' numbering is the box's: rank r's block is rows firsts[r] on.
        testing::solve_over_ranks(over.a, b_ranks, over.grid.firsts(), plan, parameters, check);
        return;
    }
    testing::solve_blocks_over_ranks(
        [&](int r) { return testing::part_rows(over.a, over.grid, over.dimension, r); }, b_ranks,
        over.grid.firsts(), plan, parameters, check);
}

// CG with the multigrid the plan chooses (over ranks as on one process; the cycle in float on a
// GPU, in double on the CPU), and with the cycle in float everywhere (over ranks r is rounded
// straight into the finest level's window, and z widened from it), its levels split or the
// finest gathered whole: one process's iterations, and its solution.
TEST(MultigridOverPartitions, CgTakesOneProcessIterations) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto one = [](double, double, double) { return 1.0; };
    const DiaData<double> a = to_dia(testing::diffusion_matrix(95, 2, one));
    const GridBox box{2, {95, 95, 1}};
    const auto n = static_cast<std::size_t>(a.n);
    std::vector<double> b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = std::sin(0.37 * static_cast<double>(i)) + 0.5;
    const std::optional<Precision> planned, in_float(Precision::single_precision);
    // Split where it can be (gather_size 0), or gathered whole from the finest level (9025
    // points).
    for (const auto& [precision, gather_size] :
         {std::pair{planned, std::int64_t{0}}, std::pair{in_float, std::int64_t{0}},
          std::pair{in_float, std::int64_t{65536}}}) {
        SCOPED_TRACE(std::string(precision ? "cycle in float" : "cycle in the plan's precision") +
                     ", gather_size " + std::to_string(gather_size));
        SolverRequest request = SolverRequest::parse("pcg", "auto", "dia");
        request.grid = box;
        request.multigrid.gather_size = gather_size;
        request.multigrid.precision = precision;
        MethodParameters parameters;
        parameters.criteria.relative_tolerance = 1e-11;
        const SolverPlan plan = plan_solver(analyze(a), request);
        ASSERT_EQ(plan.first.preconditioner, PreconditionerKind::multigrid) << plan.first.reason;
        // One process: a single rank.
        const testing::RankSolve whole = testing::solve_on_one_rank(a, b, plan, parameters);
        ASSERT_TRUE(whole.report.converged());
        // Slabs of 2, 3 and 4 ranks, and boxes.
        for (const std::array<int, 3> parts :
             {std::array{1, 2, 1}, std::array{1, 3, 1}, std::array{1, 4, 1}, std::array{2, 2, 1},
              std::array{3, 2, 1}}) {
            const GridBoxes grid{box.points, parts};
            request.ranks = grid.ranks();
            const SolverPlan split_plan = plan_solver(analyze(a), request);
            EXPECT_EQ(split_plan.first.name(), plan.first.name());
            // b in the ranks' numbering, and the box's index of each of the ranks' rows.
            const std::vector<std::int64_t> renumbering = grid.renumbering();
            std::vector<double> b_ranks(n);
            std::vector<std::int64_t> box_index(n);
            for (std::size_t i = 0; i < n; ++i) {
                b_ranks[static_cast<std::size_t>(renumbering[i])] = b[i];
                box_index[static_cast<std::size_t>(renumbering[i])] = static_cast<std::int64_t>(i);
            }
            const auto check = [&](const testing::RankSolve& rank) {
                EXPECT_TRUE(rank.report.converged());
                const std::string& details = rank.report.attempts.back().preconditioner_details;
                if (precision) {
                    EXPECT_NE(details.find("in float"), std::string::npos) << details;
                }
                EXPECT_EQ(details.find("every level gathered") != std::string::npos,
                          gather_size > 0)
                    << details;
                // One process's cycle to rounding: the same count, or one more or fewer where
                // the last residual lies that close to the tolerance.
                EXPECT_LE(
                    std::abs(rank.report.total_iterations() - whole.report.total_iterations()), 1);
                for (std::size_t i = 0; i < rank.x.size(); ++i) {
                    const double want = whole.x[static_cast<std::size_t>(
                        box_index[static_cast<std::size_t>(rank.first) + i])];
                    EXPECT_NEAR(rank.x[i], want, 1e-9 * (1 + std::abs(want)));
                }
            };
            for (const Entry entry : entries_of(grid, 2)) {
                SCOPED_TRACE(words_of(grid, entry));
                solve_over_grid({a, 2, grid, entry}, b_ranks, split_plan, parameters, check);
            }
        }
    }
}

// A row at the box's end whose entry steps out of the box (in DIA it would wrap to the next
// line) is refused over ranks as one process refuses it: by the rank that holds it, the others
// learning that it failed (no rank left waiting); so is it by the split for the product.
TEST(MultigridOverPartitions, ACouplingOutOfTheBoxIsRefused) {
    SIMRUN_SKIP_WITHOUT_BACKEND(test_backend());
    const auto one = [](double, double, double) { return 1.0; };
    const DiaData<double> a = to_dia(testing::diffusion_matrix(20, 2, one));
    const GridBox box{2, {20, 20, 1}};
    // Row (19, 5) coupled to (20, 5): the point (0, 6) in DIA.
    DiaData<double> stray = a;
    const int plus_x = stray.find_diagonal(1);
    ASSERT_GE(plus_x, 0);
    stray.at(plus_x, box.row(19, 5, 0)) = -1.0;
    EXPECT_THROW(MultigridHierarchy<double>(test_backend(), stray, box, MultigridParameters{}),
                 std::invalid_argument);
    const GridBoxes grid{box.points, {2, 2, 1}};
    ThreadRanks ranks(grid.ranks());
    ranks.run([&](std::shared_ptr<const Communicator> communicator) {
        const auto on = test_backend(communicator);
        // The window's rows hold the stray entry at the window's offset of the step (+1, 0).
        PartRows<double> rows = testing::part_rows(a, grid, 2, communicator->rank());
        if (rows.part.contains(19, 5, 0)) {
            const Box window = rows.window_part();
            const int d = rows.window.find_diagonal(1);
            ASSERT_GE(d, 0);
            rows.window.at(d, window.index(19, 5, 0)) = -1.0;
        }
        if (rows.part.contains(19, 5, 0)) {
            EXPECT_THROW(MultigridHierarchy<double>(on, rows, MultigridParameters{}),
                         std::invalid_argument);
            EXPECT_THROW(split_part_rows(*communicator, rows), std::invalid_argument);
        } else {
            EXPECT_THROW(MultigridHierarchy<double>(on, rows, MultigridParameters{}), PeerFailure);
            EXPECT_THROW(split_part_rows(*communicator, rows), PeerFailure);
        }
    });
}

}  // namespace
}  // namespace simrun::solvers

// The grid in blocks of planes, as `check` meets it: a block's operator (assembled with its
// neighbouring planes) holds the whole operator's rows, boundary forcing and Dirichlet coupling
// for its own nodes; the explicit stability limit and the matrix analysis merged over blocks
// are the whole grid's, bit for bit; and check_time_integrator decides what the integrator
// decides, for every input file and the boundary and scheme variants.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "simrun/framework/config/config.hpp"
#include "simrun/framework/discretisation/boundary_conditions.hpp"
#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/framework/discretisation/spatial_operator.hpp"
#include "simrun/framework/discretisation/stencil.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/framework/run/simulation.hpp"
#include "simrun/framework/time/time_integrator.hpp"

namespace simrun::framework {
namespace {

TEST(PlaneBlocks, CoverTheGridInOrderWithinTheirSize) {
    for (int dimension : {2, 3}) {
        const Grid grid(dimension, {5, 7, 4}, {0, 0, 0}, {1, 1, 1});
        const PlaneRange all = grid.all_planes();
        EXPECT_EQ(all.count(), dimension == 2 ? 7 : 4);
        EXPECT_EQ(grid.num_points(all), grid.num_points());
        for (std::int64_t nodes : {std::int64_t{1}, grid.plane_size() * 2, std::int64_t{1} << 20}) {
            const auto blocks = grid.plane_blocks(nodes);
            std::int64_t next = 0;
            for (const PlaneRange block : blocks) {
                EXPECT_EQ(block.first, next);
                EXPECT_GE(block.count(), 1);
                EXPECT_TRUE(block.count() == 1 || grid.num_points(block) <= nodes);
                next = block.last;
            }
            EXPECT_EQ(next, all.last);
        }
        const PlaneRange inner = grid.with_neighbours(PlaneRange{1, 2});
        EXPECT_EQ(inner.first, 0);
        EXPECT_EQ(inner.last, 3);
        EXPECT_EQ(grid.with_neighbours(all).last, all.last);
    }
}

BoundaryConditions mixed_boundary(const Grid& grid) {
    std::string text =
        "[boundary]\nleft = \"x + y\"\nright = { type = \"neumann\", value = \"1 + y\" }\n"
        "bottom = { type = \"robin\", coefficient = 2.0, value = \"x\" }\n"
        "top = { type = \"neumann\", value = \"-x\" }\n";
    if (grid.dimension() == 3) {
        text += "front = { type = \"robin\", coefficient = 0.5, value = \"z\" }\nback = \"1\"\n";
    }
    const Config config = Config::from_string(text, "test.toml");
    return BoundaryConditions::from_config(config.section("boundary"), grid);
}

// A nonsymmetric operator whose coefficients vary from node to node (diffusion with central
// convection and a varying diffusivity), so no two rows need be alike.
StencilFunction varying_stencil(const Grid& grid) {
    return [&grid](std::int64_t i, std::int64_t j, std::int64_t k) {
        const auto spacing = grid.spacing();
        const double alpha = 1.0 + 0.1 * static_cast<double>((i * 7 + j * 3 + k * 5) % 11);
        StencilCoefficients s = diffusion_stencil(alpha, spacing.data(), grid.dimension());
        for (int a = 0; a < grid.dimension(); ++a) {
            const double c = (0.5 + a) / (2 * grid.spacing(a));  // v_a / (2 h)
            s.minus[a] += c;
            s.plus[a] -= c;
        }
        return s;
    };
}

// The boxes of a process grid of parts[0] x parts[1] x parts[2] over the grid (the first
// points mod parts boxes along an axis one node longer).
std::vector<Box> boxes_of(const Grid& grid, std::array<std::int64_t, 3> parts) {
    const auto start = [&](std::size_t axis, std::int64_t p) {
        const std::int64_t n = grid.points()[axis];
        return p * (n / parts[axis]) + std::min(p, n % parts[axis]);
    };
    std::vector<Box> boxes;
    for (std::int64_t c = 0; c < parts[2]; ++c) {
        for (std::int64_t b = 0; b < parts[1]; ++b) {
            for (std::int64_t a = 0; a < parts[0]; ++a) {
                boxes.push_back({{start(0, a), start(1, b), start(2, c)},
                                 {start(0, a + 1), start(1, b + 1), start(2, c + 1)}});
            }
        }
    }
    return boxes;
}

// A part's operator (assembled on the part with its neighbouring nodes) holds the whole
// operator's rows of the part's nodes, their Dirichlet flags, row scales, boundary forcing and
// Dirichlet couplings, bit for bit; and the smallest of the parts' stable explicit steps is the
// whole operator's. Parts: blocks of planes, and the boxes of process grids (a box's rows
// are numbered within it, its diagonals at the box's strides).
TEST(PlaneBlocks, APartsOperatorHoldsTheWholeOperatorsRowsAndBoundaryData) {
    for (int dimension : {2, 3}) {
        SCOPED_TRACE(dimension);
        const Grid grid(dimension, {6, 5, 4}, {0, 0, 0}, {1, 2, 1.5});
        const BoundaryConditions boundary = mixed_boundary(grid);
        const StencilFunction stencil = varying_stencil(grid);
        const SpatialOperator whole(grid, stencil, boundary);
        std::vector<double> g(static_cast<std::size_t>(grid.num_points()));
        for (std::size_t i = 0; i < g.size(); ++i) g[i] = std::sin(static_cast<double>(i));
        std::vector<double> whole_forcing(g.size(), 0.0), whole_lg(g.size());
        whole.add_boundary_forcing(0.25, whole_forcing);
        whole.dirichlet_coupling(g, whole_lg);

        std::vector<std::vector<Box>> partitions;
        for (std::int64_t block_nodes : {std::int64_t{1}, 2 * grid.plane_size()}) {
            std::vector<Box> blocks;
            for (const PlaneRange block : grid.plane_blocks(block_nodes)) {
                blocks.push_back(grid.box(block));
            }
            partitions.push_back(blocks);
        }
        partitions.push_back(boxes_of(grid, {2, 2, dimension == 3 ? 2 : 1}));
        partitions.push_back(boxes_of(grid, {3, 1, dimension == 3 ? 2 : 1}));
        for (const auto& parts : partitions) {
            SCOPED_TRACE(std::to_string(parts.size()) + " parts");
            double limit = std::numeric_limits<double>::infinity();
            for (const Box& owned : parts) {
                const SpatialOperator part(grid, stencil, boundary, grid.with_neighbours(owned));
                const Box& box = part.box();
                EXPECT_TRUE(part.complete_box().contains(owned));
                const auto rows = static_cast<std::size_t>(box.size());
                std::vector<double> forcing(rows, 0.0), lg(rows), box_g(rows);
                for (std::size_t r = 0; r < rows; ++r) {
                    const auto [i, j, k] = box.node(static_cast<std::int64_t>(r));
                    box_g[r] = g[static_cast<std::size_t>(grid.index(i, j, k))];
                }
                part.add_boundary_forcing(0.25, forcing);
                part.dirichlet_coupling(box_g, lg);
                for (std::int64_t o = 0; o < owned.size(); ++o) {
                    const auto [i, j, k] = owned.node(o);
                    const std::int64_t node = grid.index(i, j, k);
                    const auto r = static_cast<std::size_t>(box.index(i, j, k));
                    const auto n = static_cast<std::size_t>(node);
                    ASSERT_EQ(part.dirichlet()[r], whole.dirichlet()[n]) << node;
                    EXPECT_EQ(part.row_scale()[r], whole.row_scale()[n]) << node;
                    EXPECT_EQ(forcing[r], whole_forcing[n]) << node;
                    EXPECT_EQ(lg[r], whole_lg[n]) << node;
                    // Diagonal d couples along the same axis and way in both (the offsets
                    // ascend with the strides).
                    for (int d = 0; d < whole.matrix().num_diagonals(); ++d) {
                        EXPECT_EQ(part.matrix().at(d, static_cast<std::int64_t>(r)),
                                  whole.matrix().at(d, node))
                            << node << " diagonal " << d;
                    }
                }
                limit = std::min(limit, part.largest_stable_explicit_step());
            }
            // A minimum over rows: the parts' minimum is the whole operator's, bit for bit.
            EXPECT_EQ(limit, whole.largest_stable_explicit_step());
            EXPECT_TRUE(std::isfinite(limit) && limit > 0.0);
        }
    }
}

void expect_same_properties(const solvers::MatrixProperties& a,
                            const solvers::MatrixProperties& b) {
    EXPECT_EQ(a.describe(), b.describe());
    EXPECT_EQ(a.nnz, b.nnz);
    EXPECT_EQ(a.asymmetry, b.asymmetry);
    EXPECT_EQ(a.worst_dominance_ratio, b.worst_dominance_ratio);
    EXPECT_EQ(a.mean_row_length, b.mean_row_length);
    EXPECT_EQ(a.constant_coefficients, b.constant_coefficients);
    EXPECT_EQ(a.zero_row_sums, b.zero_row_sums);
}

// Every input file on a small grid (verify/ has a pure Neumann problem), and the schemes the
// files do not cover: Crank-Nicolson, explicit Euler. One plane per block, and two.
TEST(IntegratorCheck, DecidesWhatTheIntegratorDecides) {
    // (input file, overrides)
    std::vector<std::pair<std::filesystem::path, std::vector<std::string>>> cases;
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(SIMRUN_SOURCE_DIR "/inputs")) {
        if (entry.path().extension() != ".toml") continue;
        const Config config = Config::from_file(entry.path());
        std::vector<std::string> overrides;
        for (const char* axis : {"nx", "ny", "nz"}) {
            if (config.section("grid").has(axis))
                overrides.push_back(std::string("grid.") + axis + "=9");
        }
        cases.emplace_back(entry.path(), overrides);
    }
    ASSERT_GE(cases.size(), 7u);
    const std::filesystem::path inputs = SIMRUN_SOURCE_DIR "/inputs";
    cases.push_back(
        {inputs / "heat.toml", {"grid.nx=10", "grid.ny=13", "time.scheme=\"crank_nicolson\""}});
    cases.push_back({inputs / "heat.toml",
                     {"grid.nx=10", "grid.ny=13", "time.scheme=\"explicit_euler\"", "time.dt=1e-5",
                      "time.end=1e-4"}});
    int removed_constant = 0, explicit_limits = 0;
    for (const auto& [file, overrides] : cases) {
        const auto config = [&] {
            Config c = Config::from_file(file);
            for (const std::string& o : overrides) c.apply_override(o);
            return c;
        };
        const RunSpec spec = parse_run_spec(config());
        SCOPED_TRACE(file.string() + " " + spec.problem->description());
        RunOptions options;
        options.backend = solvers::BackendChoice::cpu;
        options.quiet = true;
        options.write_output = false;
        const Simulation simulation(parse_run_spec(config()), options);
        const TimeIntegrator& integrator = simulation.integrator();
        for (std::int64_t block_nodes : {std::int64_t{1}, 2 * spec.grid->plane_size()}) {
            const IntegratorCheck check = check_time_integrator(
                *spec.grid, *spec.problem, *spec.boundary, spec.time, spec.solver, block_nodes);
            EXPECT_FALSE(check.first_step_error);
            removed_constant += check.plan && check.plan->remove_constant;
            explicit_limits += check.explicit_limit.has_value();
            if (integrator.plan() == nullptr) {
                ASSERT_TRUE(check.explicit_limit.has_value());
                EXPECT_FALSE(check.plan.has_value());
                EXPECT_GE(*check.explicit_limit, spec.time.dt);
                continue;
            }
            ASSERT_TRUE(check.plan.has_value() && check.properties.has_value());
            expect_same_properties(*check.properties, *integrator.matrix_properties());
            EXPECT_EQ(check.plan->first.name(), integrator.plan()->first.name());
            EXPECT_EQ(check.plan->first.reason, integrator.plan()->first.reason);
            EXPECT_EQ(check.plan->format_reason, integrator.plan()->format_reason);
            EXPECT_EQ(check.plan->fallbacks.size(), integrator.plan()->fallbacks.size());
            EXPECT_EQ(check.plan->remove_constant, integrator.plan()->remove_constant);
        }
    }
    EXPECT_GE(removed_constant, 1);  // verify/poisson_neumann_2d.toml
    EXPECT_GE(explicit_limits, 1);
}

}  // namespace
}  // namespace simrun::framework

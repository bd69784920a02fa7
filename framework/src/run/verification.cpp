#include "simrun/framework/run/verification.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/discretisation/grid_sampling.hpp"
#include "simrun/framework/distributed/agreement.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/framework/run/simulation.hpp"

namespace simrun::framework {
namespace {

// The time-step refinement ratio per level (see the header).
int time_ratio(const std::string& scheme_space, TimeScheme scheme) {
    if (scheme == TimeScheme::explicit_euler) return 4;
    if (scheme_space == "upwind") return 2;
    return scheme == TimeScheme::crank_nicolson ? 2 : 4;
}

// This rank's part of a level's errors against the exact solution at the run's end time: over
// its own nodes (u, the whole field on one process), the sum of squares and the largest. dt is
// the level's step (0: steady). Throws InputError where the exact solution is not finite (the
// lowest such node of the rank).
struct PartialErrors {
    double squares = 0.0;
    double largest = 0.0;
};
PartialErrors measure_own(const Simulation& simulation, const std::vector<double>& u) {
    const Grid& grid = simulation.grid();
    const Box& owned = simulation.decomposition().owned;
    std::vector<double> exact(u.size());
    sample(grid, owned, *simulation.spec().problem->exact_solution(), simulation.time(), exact);
    for (std::size_t i = 0; i < exact.size(); ++i) {
        if (std::isfinite(exact[i])) continue;
        const auto [x, y, z] = owned.node(static_cast<std::int64_t>(i));
        char text[160];
        std::snprintf(text, sizeof text,
                      "the exact solution is %g at node %lld (t = %.6g): no error can be "
                      "measured against it",
                      exact[i], static_cast<long long>(grid.index(x, y, z)), simulation.time());
        throw InputError("key 'problem.exact': " + std::string(text));
    }
    PartialErrors errors;
    for (std::size_t i = 0; i < u.size(); ++i) {
        const double e = std::abs(u[i] - exact[i]);
        errors.squares += e * e;
        errors.largest = std::max(errors.largest, e);
    }
    return errors;
}

// A level's errors: each rank measures its own nodes, then the sums over the ranks (in rank
// order: the same bits every run) and the largest error (collective).
VerificationLevel measure(const Simulation& simulation, const solvers::Communicator& ranks,
                          double dt) {
    const std::vector<double> u = simulation.owned_field();
    const PartialErrors own = agreeing(ranks, [&] { return measure_own(simulation, u); });
    const Grid& grid = simulation.grid();
    VerificationLevel result;
    result.h = grid.spacing(0);
    result.dt = dt;
    result.nodes = grid.num_points();
    double volume = 1.0;
    for (int a = 0; a < grid.dimension(); ++a) volume *= grid.spacing(a);
    result.error_l2 = std::sqrt(ranks.sum(own.squares) * volume);
    result.error_max = ranks.max(own.largest);
    return result;
}

}  // namespace

VerificationReport verify(const std::function<Config()>& make_config, int levels,
                          solvers::BackendChoice backend,
                          std::shared_ptr<const solvers::Communicator> ranks,
                          std::optional<std::array<std::int64_t, 3>> process_grid) {
    if (levels < 2) throw InputError("--levels must be at least 2, got " + std::to_string(levels));
    // Each level has 4 (2D) or 8 (3D) times the nodes of the one before, and more steps: past
    // 10 levels the finest grid of even a 3 x 3 start has 10^6 nodes and the study runs for
    // hours. The finest level's memory is checked with the run's own estimate below.
    if (levels > 10) {
        throw InputError("--levels " + std::to_string(levels) +
                         " is too many: each level has 4 (2D) or 8 (3D) times the nodes of the "
                         "one before; use at most 10");
    }
    VerificationReport report;
    std::array<std::int64_t, 3> base_points{0, 0, 0};
    double base_dt = 0.0;
    TimeScheme scheme = TimeScheme::steady;
    int ratio = 1;
    for (int level = 0; level < levels; ++level) {
        Config config = agreeing(*ranks, make_config);
        if (level == 0) {
            const RunSpec base = parse_run_spec(config);
            if (base.problem->exact_solution() == nullptr) {
                throw InputError(config.source_name() +
                                 ": verification needs the exact solution: add `exact = \"...\"` "
                                 "to [problem]");
            }
            base_points = base.grid->points();
            base_dt = base.time.dt;
            report.problem = base.problem_type;
            report.scheme_space = base.problem->space_scheme();
            scheme = base.time.scheme;
            report.scheme_time = solvers::name_of(scheme);
            ratio = time_ratio(report.scheme_space, scheme);
            config = agreeing(*ranks, make_config);
        }
        // Level k: h / 2^k and dt / ratio^k, set as typed values of the input.
        const std::string origin =
            config.source_name() + " (verify level " + std::to_string(level) + ")";
        const char* axes[3] = {"grid.nx", "grid.ny", "grid.nz"};
        for (int a = 0; a < 3; ++a) {
            if (base_points[static_cast<std::size_t>(a)] <= 1) continue;
            const std::int64_t nodes =
                (base_points[static_cast<std::size_t>(a)] - 1) * (std::int64_t{1} << level) + 1;
            config.set(axes[a], nodes, origin);
        }
        const double dt = base_dt / std::pow(static_cast<double>(ratio), level);
        if (scheme != TimeScheme::steady) config.set("time.dt", dt, origin);
        RunSpec spec = parse_run_spec(config);
        // The algebraic error must stay far below the discretisation error.
        spec.solver.method.criteria.relative_tolerance = 1e-12;
        spec.solver.method.criteria.max_iterations = 100000;

        RunOptions options;
        options.backend = backend;
        options.quiet = true;
        options.write_output = false;
        options.ranks = ranks;
        options.process_grid = process_grid;
        Simulation simulation(std::move(spec), options);
        agreeing(*ranks, [&] { simulation.run(); });
        report.levels.push_back(
            measure(simulation, *ranks, scheme == TimeScheme::steady ? 0.0 : dt));
    }
    const auto& coarse = report.levels[report.levels.size() - 2];
    const auto& fine = report.levels.back();
    const double reduction = std::log(coarse.error_l2 / fine.error_l2);
    report.observed_order_space = reduction / std::log(coarse.h / fine.h);
    if (scheme != TimeScheme::steady) {
        report.observed_order_time = reduction / std::log(coarse.dt / fine.dt);
    }
    return report;
}

std::string format_table(const VerificationReport& report) {
    std::ostringstream text;
    char line[256];
    text << "verify: " << report.problem << ", " << report.scheme_space << " in space, "
         << report.scheme_time << " in time\n";
    std::snprintf(line, sizeof line, "%5s %12s %12s %10s %14s %8s %14s %8s\n", "level", "h", "dt",
                  "nodes", "error L2", "order", "error max", "order");
    text << line;
    for (std::size_t k = 0; k < report.levels.size(); ++k) {
        const auto& l = report.levels[k];
        std::string order_l2 = "-", order_max = "-";
        if (k > 0) {
            const auto& p = report.levels[k - 1];
            char o[32];
            std::snprintf(o, sizeof o, "%.3f",
                          std::log(p.error_l2 / l.error_l2) / std::log(p.h / l.h));
            order_l2 = o;
            std::snprintf(o, sizeof o, "%.3f",
                          std::log(p.error_max / l.error_max) / std::log(p.h / l.h));
            order_max = o;
        }
        std::snprintf(line, sizeof line, "%5zu %12.5g %12.5g %10lld %14.6e %8s %14.6e %8s\n", k,
                      l.h, l.dt, static_cast<long long>(l.nodes), l.error_l2, order_l2.c_str(),
                      l.error_max, order_max.c_str());
        text << line;
    }
    std::snprintf(line, sizeof line, "observed order in space %.3f", report.observed_order_space);
    text << line;
    if (report.observed_order_time) {
        std::snprintf(line, sizeof line, ", in time %.3f", *report.observed_order_time);
        text << line;
    }
    text << "\n";
    return text.str();
}

std::string format_json(const VerificationReport& report) {
    nlohmann::json j;
    j["problem"] = report.problem;
    j["scheme_space"] = report.scheme_space;
    j["scheme_time"] = report.scheme_time;
    nlohmann::json levels = nlohmann::json::array();
    for (const auto& l : report.levels) {
        levels.push_back({{"h", l.h},
                          {"dt", l.dt},
                          {"nodes", l.nodes},
                          {"error_l2", l.error_l2},
                          {"error_max", l.error_max}});
    }
    j["levels"] = levels;
    j["observed_order_space"] = report.observed_order_space;
    j["observed_order_time"] =
        report.observed_order_time ? nlohmann::json(*report.observed_order_time) : nlohmann::json();
    return j.dump();
}

}  // namespace simrun::framework

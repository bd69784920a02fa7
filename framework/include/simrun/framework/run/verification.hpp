#pragma once
// Convergence study against a problem's exact solution (`exact` in [problem]): refine the grid
// (and the time step at the rate the scheme needs), measure the error at the end time, and
// report the observed orders.
//
// Level k has (n0 - 1) 2^k + 1 nodes per axis (h halves) and dt0 / r^k with r = 2^(p_s/p_t):
// p_s = 2 (central) or 1 (upwind), p_t = 1 (backward or explicit Euler) or 2 (Crank-Nicolson).
// So r = 4 for central + Euler (the error then falls like h^2 and like dt), 2 for central +
// Crank-Nicolson and for upwind (r = 2 also for upwind + Crank-Nicolson, where 2^(1/2) would not
// keep end a whole number of steps). Explicit Euler always uses r = 4 (its stability limit).
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "simrun/framework/config/config.hpp"
#include "simrun/solvers/base/backend.hpp"

namespace simrun::framework {

struct VerificationLevel {
    double h = 0.0;   // node spacing along x
    double dt = 0.0;  // 0 when steady
    std::int64_t nodes = 0;
    double error_l2 = 0.0;   // sqrt(sum_i e_i^2 prod_a h_a) over all nodes
    double error_max = 0.0;  // max_i |e_i|
};

struct VerificationReport {
    std::string problem;
    std::string scheme_space;  // central | upwind
    std::string scheme_time;   // backward_euler | crank_nicolson | explicit_euler | steady
    std::vector<VerificationLevel> levels;
    // From the two finest levels, L2 errors: log(e1/e2) / log(h1/h2) and / log(dt1/dt2).
    double observed_order_space = 0.0;
    std::optional<double> observed_order_time;
};

// `make_config` returns the input (with the caller's --set overrides applied) afresh for each
// level. Throws InputError when the input has no exact solution or levels < 2, and SolveFailure
// when a level's solve fails. Over several `ranks` each level runs split over them (collective;
// on `process_grid` where given, RunOptions::process_grid), the errors are measured on rank 0,
// and the report is rank 0's (failures agreed, see distributed/agreement.hpp).
VerificationReport verify(
    const std::function<Config()>& make_config, int levels, solvers::BackendChoice backend,
    std::shared_ptr<const solvers::Communicator> ranks = solvers::single_process(),
    std::optional<std::array<std::int64_t, 3>> process_grid = std::nullopt);

// The report as the text table `simrun verify` prints, and as one JSON object.
std::string format_table(const VerificationReport& report);
std::string format_json(const VerificationReport& report);

}  // namespace simrun::framework

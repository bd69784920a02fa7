// The validations of make_time_integrator, block by block: each block of planes is assembled
// with its neighbouring planes (so its own rows are complete), turned into the system matrix
// the scheme solves, and measured; the measures merge into the whole operator's (see
// MatrixAnalysis and SpatialOperator::largest_stable_explicit_step), from which the plan is
// made exactly as the integrator makes it.
#include <algorithm>
#include <exception>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "grid_integrator.hpp"

namespace simrun::framework {
namespace {

// Where the run meets a data error: the state's Dirichlet values first, then by time, then by
// stage (StepData::evaluate's order at each time).
std::pair<double, int> evaluation_order(const StepDataError& e) {
    if (e.stage() == StepDataError::start_dirichlet_value) {
        return {-std::numeric_limits<double>::infinity(), e.stage()};
    }
    return {e.time(), e.stage()};
}

}  // namespace

IntegratorCheck check_time_integrator(const Grid& grid, const Problem& problem,
                                      const BoundaryConditions& boundary,
                                      const TimeParameters& time, const SolverParameters& solver,
                                      std::int64_t block_nodes) {
    const StencilFunction stencil = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
        return problem.stencil(grid, i, j, k);
    };
    const bool explicit_scheme = time.scheme == TimeScheme::explicit_euler;
    double limit = std::numeric_limits<double>::infinity();
    solvers::MatrixAnalysis analysis;
    // The data the run checks before it writes step 0 (check_start_data): the Dirichlet values
    // of step 0, then the first step's data at each time it evaluates them (later times may
    // fail only later, as they would in the run). The error the run would meet is the one of
    // the earliest time and stage, at its first node: the first block's among those.
    const std::vector<double> data_times = step_data_times(time, 0);
    std::exception_ptr data_error;
    std::optional<std::pair<double, int>> data_error_order;
    std::vector<double> u;
    for (const PlaneRange block : grid.plane_blocks(block_nodes)) {
        SpatialOperator op(grid, stencil, boundary, grid.box(grid.with_neighbours(block)));
        if (!data_error_order || data_error_order->second > StepDataError::start_dirichlet_value) {
            try {
                u.assign(static_cast<std::size_t>(grid.num_points(block)), 0.0);
                StepData data(grid, problem, boundary, op);
                check_start_data(grid, boundary, grid.box(block), 0.0, data_times, u, data);
            } catch (const StepDataError& e) {
                if (!data_error_order || evaluation_order(e) < *data_error_order) {
                    data_error = std::current_exception();
                    data_error_order = evaluation_order(e);
                }
            }
        }
        if (explicit_scheme) {
            limit = std::min(limit, op.largest_stable_explicit_step());
            continue;
        }
        const SystemScaling system = system_scaling(time);
        const std::int64_t begin = grid.first_node(block) - grid.first_node(op.box());
        const solvers::DiaData<double> matrix =
            release_system_matrix(op, system.shift, system.scale);
        analysis.add(matrix, begin, begin + grid.num_points(block), grid.first_node(op.box()));
    }
    IntegratorCheck check;
    if (explicit_scheme) {
        require_stable_explicit_step(time, limit);
        check.explicit_limit = limit;
    } else {
        check.properties = analysis.properties();
        check.plan = plan_grid_solver(grid, *check.properties, solver);
    }
    check.first_step_error = data_error;
    return check;
}

}  // namespace simrun::framework

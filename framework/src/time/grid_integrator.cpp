#include "grid_integrator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/discretisation/grid_loops.hpp"
#include "simrun/solvers/distributed/distributed_matrix.hpp"

namespace simrun::framework {
namespace {

// The source f on `box` kept at the free nodes only (zero at the Dirichlet nodes, in one pass
// with its check): throws the StepDataError of the first free node where it is not finite.
void keep_free_source(const Grid& grid, const Box& box, std::span<double> f,
                      const std::vector<std::uint8_t>& fixed, double t) {
    const auto n = static_cast<std::int64_t>(f.size());
    std::int64_t first = n;
#pragma omp parallel for schedule(static) reduction(min : first)
    for (std::int64_t i = 0; i < n; ++i) {
        const auto r = static_cast<std::size_t>(i);
        if (fixed[r] != 0) {
            f[r] = 0.0;
        } else if (!std::isfinite(f[r])) {
            first = std::min(first, i);
        }
    }
    if (first == n) return;
    throw_not_finite(grid, box, first, f[static_cast<std::size_t>(first)], t, StepDataError::source,
                     "problem.source", "the source");
}

// Writes g(t) at the Dirichlet nodes of `box` into values (numbered within the box), as
// BoundaryConditions::fill_dirichlet does, on the grid's sides alone. Returns the lowest row
// whose value is not finite, or box.size().
std::int64_t fill_dirichlet_on_sides(const Grid& grid, const BoundaryConditions& boundary,
                                     const Box& box, double t, std::span<double> values) {
    std::vector<std::int64_t> first(static_cast<std::size_t>(omp_get_max_threads()), box.size());
    const int blocks = for_each_side_node(
        grid, box, [&](std::int64_t i, std::int64_t j, std::int64_t k, int block) {
            const int s = boundary.dirichlet_side(grid, i, j, k);
            if (s < 0) return;
            const std::int64_t row = box.index(i, j, k);
            const double g =
                boundary.side(static_cast<Side>(s))
                    .value(grid.coordinate(0, i), grid.coordinate(1, j), grid.coordinate(2, k), t);
            values[static_cast<std::size_t>(row)] = g;
            auto& lowest = first[static_cast<std::size_t>(block)];
            if (!std::isfinite(g)) lowest = std::min(lowest, row);
        });
    return *std::min_element(first.begin(), first.begin() + blocks);
}

// The step to a neighbour that a diagonal of an operator on `box` couples along: +-1 along one
// axis at the box's strides, none for the main diagonal. Throws std::logic_error for another
// offset (the spatial operator holds 5- and 7-point stencils).
std::array<std::int64_t, 3> diagonal_step(int offset, const Box& box, int dimension) {
    std::array<std::int64_t, 3> step{0, 0, 0};
    if (offset == 0) return step;
    for (int axis = 0; axis < dimension; ++axis) {
        if (std::abs(offset) == box.stride(axis)) {
            step[static_cast<std::size_t>(axis)] = offset < 0 ? -1 : 1;
            return step;
        }
    }
    throw std::logic_error("a diagonal at offset " + std::to_string(offset) +
                           " of an operator on a box couples no neighbour along an axis");
}

// The system matrix as the operator's assembly makes it, where the integrator needs no L
// (steady, backward Euler: they release it as the system matrix at once); none where it keeps L
// (Crank-Nicolson's right-hand side, explicit Euler).
std::optional<SystemForm> system_only(const TimeParameters& time) {
    const bool keeps_l =
        time.scheme == TimeScheme::explicit_euler || (!time.steady() && time.theta < 1.0);
    if (keeps_l) return std::nullopt;
    const SystemScaling system = system_scaling(time);
    return SystemForm{system.shift, system.scale};
}

}  // namespace

void throw_not_finite(const Grid& grid, const Box& box, std::int64_t row, double value, double t,
                      StepDataError::Stage stage, const char* key, const char* what) {
    const auto index = box.node(row);
    std::string at = "(";
    for (int a = 0; a < grid.dimension(); ++a) {
        char number[32];
        std::snprintf(number, sizeof number, "%s%.6g", a > 0 ? ", " : "",
                      grid.coordinate(a, index[a]));
        at += number;
    }
    char text[256];
    std::snprintf(text, sizeof text, "%s is %g at %s) at t = %.6g: no step is computed from it",
                  what, value, at.c_str(), t);
    throw StepDataError(stage, t, std::string("key '") + key + "': " + text);
}

StepData::StepData(const Grid& grid, const Problem& problem, const BoundaryConditions& boundary,
                   const SpatialOperator& op)
    : grid_(grid),
      problem_(problem),
      boundary_(boundary),
      op_(op),
      depends_on_time_(problem.source_depends_on_time() || boundary.depends_on_time()) {}

void StepData::evaluate(double t) {
    if (evaluated_at_ && (*evaluated_at_ == t || !depends_on_time_)) return;
    // Allocated at the first evaluation: an integrator whose back-end forms the data never
    // holds them (three vectors of n on the host).
    if (forcing_.empty()) {
        const auto n = static_cast<std::size_t>(op_.box().size());
        forcing_.resize(n);
        g_.resize(n);
        lg_.resize(n);
    }
    const auto& fixed = op_.dirichlet();
    const Box& box = op_.box();
    problem_.source(grid_, box, t, forcing_);
    keep_free_source(grid_, box, forcing_, fixed, t);
    op_.add_boundary_forcing(t, forcing_);
    // Only the rows with ghost terms changed since the source's check.
    std::int64_t ghost_bad = box.size();
    for (const auto& term : op_.ghost_terms()) {
        const auto r = static_cast<std::size_t>(term.node);
        if (!fixed[r] && !std::isfinite(forcing_[r])) ghost_bad = std::min(ghost_bad, term.node);
    }
    if (ghost_bad < box.size()) {
        throw_not_finite(grid_, box, ghost_bad, forcing_[static_cast<std::size_t>(ghost_bad)], t,
                         StepDataError::ghost_value, "boundary",
                         "a Neumann or Robin boundary value");
    }
    // g_ is zero off the Dirichlet nodes since its allocation: only theirs are written.
    const std::int64_t bad = fill_dirichlet_on_sides(grid_, boundary_, box, t, g_);
    if (bad < box.size()) {
        throw_not_finite(grid_, box, bad, g_[static_cast<std::size_t>(bad)], t,
                         StepDataError::dirichlet_value, "boundary", "a Dirichlet boundary value");
    }
    op_.dirichlet_coupling(g_, lg_);
    evaluated_at_ = t;
}

GridIntegrator::GridIntegrator(const IntegratorSetup& setup)
    : grid_(setup.grid),
      problem_(setup.problem),
      boundary_(setup.boundary),
      backend_(setup.backend),
      parts_(setup.parts),
      op_(
          setup.grid,
          [&problem = setup.problem, &grid = setup.grid](std::int64_t i, std::int64_t j,
                                                         std::int64_t k) {
              return problem.stencil(grid, i, j, k);
          },
          setup.boundary, setup.parts.assembled, system_only(setup.time)),
      data_(setup.grid, setup.problem, setup.boundary, op_),
      time_(setup.time),
      dt_(setup.time.dt),
      steps_(setup.time.steady() ? 1 : setup.time.steps),
      u_(setup.backend, static_cast<std::size_t>(setup.parts.num_points())) {
    // Assembly and allocation ran on each rank alone: a rank that failed in them meets this
    // agreement in the caller's, before any collective of the integrators.
    agree(ranks(), nullptr);
}

void GridIntegrator::set_state(std::vector<double> state, std::int64_t step) {
    step_ = step;
    if (step_ >= steps_) {  // a run continued from its last step: no data to come
        impose_dirichlet_values(grid_, boundary_, parts_.owned, time(), state);
    } else if (data_on_device()) {
        // The data the first step forms on the device, checked there (compiled expressions,
        // nothing of size n on the host): only the state's Dirichlet values on the host.
        impose_dirichlet_values(grid_, boundary_, parts_.owned, time(), state);
        // The state first: the step's data term reads it (L u at the free nodes' neighbours).
        u_.copy_from_host(state);
        const std::vector<double> times = step_data_times(time_, step_);
        check_data_on_device(time(), times.back());
        return;
    } else {
        check_start_data(grid_, boundary_, parts_.owned, time(), step_data_times(time_, step_),
                         state, data_);
    }
    u_.copy_from_host(state);
}

void GridIntegrator::check_data_on_device(double, double) {
    throw std::logic_error("check_data_on_device: this integrator forms no data on the device");
}

void impose_dirichlet_values(const Grid& grid, const BoundaryConditions& boundary, const Box& box,
                             double t, std::span<double> u) {
    const std::int64_t bad = fill_dirichlet_on_sides(grid, boundary, box, t, u);
    if (bad == box.size()) return;
    throw_not_finite(grid, box, bad, u[static_cast<std::size_t>(bad)], t,
                     StepDataError::start_dirichlet_value, "boundary",
                     "a Dirichlet boundary value");
}

void check_start_data(const Grid& grid, const BoundaryConditions& boundary, const Box& own,
                      double t_start, std::span<const double> t_data, std::span<double> u,
                      StepData& data) {
    impose_dirichlet_values(grid, boundary, own, t_start, u);
    for (const double t : t_data) data.evaluate(t);
}

void GridIntegrator::copy_state(std::span<double> u) const { u_.copy_to_host(u); }

SystemScaling system_scaling(const TimeParameters& time) {
    if (time.steady()) return {0.0, 1.0};
    return {1.0, time.theta * time.dt};
}

std::vector<double> step_data_times(const TimeParameters& time, std::int64_t step) {
    if (time.steady()) return {0.0};
    const double t_next = static_cast<double>(step + 1) * time.dt;
    const bool backward_euler = time.scheme != TimeScheme::explicit_euler && time.theta == 1.0;
    if (backward_euler) return {t_next};
    return {static_cast<double>(step) * time.dt, t_next};
}

void require_stable_explicit_step(const TimeParameters& time, double limit) {
    if (time.dt <= limit) return;
    char text[320];
    if (!(limit > 0.0)) {
        std::snprintf(text, sizeof text,
                      "dt = %.6g: no explicit_euler step is proved stable for this operator (it "
                      "is not dissipative); use an implicit scheme",
                      time.dt);
    } else {
        // The limit printed rounded down, so that giving it back is accepted.
        const double scale = std::pow(10.0, 5.0 - std::floor(std::log10(limit)));
        std::snprintf(text, sizeof text,
                      "dt = %.6g is unstable for explicit_euler on this grid: the largest step "
                      "proved stable is %.6g (the step's numerical radius stays within 1, which "
                      "holds for convection as well as diffusion); use a smaller dt or an "
                      "implicit scheme",
                      time.dt, std::floor(limit * scale) / scale);
    }
    throw InputError(InputError::format(time.dt_place, "time.dt", text));
}

solvers::DiaData<double> owned_rows(solvers::DiaData<double> matrix, std::int64_t first,
                                    std::int64_t rows) {
    if (first == 0 && rows == matrix.n) return matrix;
    matrix.keep_rows(first, rows);  // in the assembled matrix's storage
    return matrix;
}

solvers::SolverPlan plan_grid_solver(const Grid& grid, const solvers::MatrixProperties& properties,
                                     const SolverParameters& solver, int ranks) {
    // Neumann conditions on every side of a steady problem leave u fixed only up to a
    // constant: the solver layer solves a symmetric such system for the solution of zero mean;
    // a nonsymmetric one (convection) has a range it cannot name.
    if (properties.zero_row_sums && !properties.symmetric) {
        throw InputError(
            "key 'boundary': a steady problem with convection and Neumann conditions on every "
            "side is singular (u is fixed only up to a constant): make one side dirichlet or "
            "robin");
    }
    // The rows are the grid's nodes, x fastest: multigrid may coarsen them as a box (over
    // ranks its levels are split as the finest is, in slabs or in boxes).
    solvers::SolverRequest request = solver.request;
    // A PDE with Neumann conditions on every side fixes u only up to a constant: its data are
    // meant up to the operator's range.
    request.remove_constant_null_space = true;
    request.ranks = ranks;
    request.grid =
        solvers::GridBox{grid.dimension(), {grid.points(0), grid.points(1), grid.points(2)}};
    return solvers::plan_solver(properties, request);
}

std::unique_ptr<solvers::LinearSystemSolver<double>> GridIntegrator::make_solver(
    solvers::DiaData<double> matrix, const SolverParameters& solver) {
    const auto seconds_since = [](std::chrono::steady_clock::time_point start) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    setup_times_.assembly = seconds_since(constructed_);
    const auto analysis_start = std::chrono::steady_clock::now();
    const bool slabs = parts_.slabs(grid_);
    if (parts_.distributed()) {
        // Each rank measures its rows (complete in its assembled box), as the whole's (its rows'
        // indices and its diagonals' offsets in the grid); every rank merges all ranks'
        // measures in rank order, so every rank makes the same plan.
        solvers::MatrixAnalysis mine;
        agreeing(ranks(), [&] {
            const Box& own = parts_.owned;
            const Box& all = parts_.assembled;
            // The owned nodes' runs in the assembled box: one for slabs, a line each for boxes.
            std::vector<solvers::MatrixAnalysis::WindowRows> runs;
            const std::int64_t line = slabs ? own.size() : own.points(0);
            for (std::int64_t first = 0; first < own.size(); first += line) {
                const auto [i, j, k] = own.node(first);
                const std::int64_t begin = all.index(i, j, k);
                runs.push_back({begin, begin + line, grid_.index(i, j, k)});
            }
            std::vector<int> whole_offsets;
            for (const int offset : matrix.offsets) {
                const auto step = diagonal_step(offset, all, grid_.dimension());
                whole_offsets.push_back(static_cast<int>(step[0] + grid_.stride(1) * step[1] +
                                                         grid_.stride(2) * step[2]));
            }
            mine.add(matrix, runs, whole_offsets);
        });
        solvers::MatrixAnalysis whole;
        for (const auto& bytes : ranks().all_gather(mine.to_bytes())) whole.merge_bytes(bytes);
        properties_ = whole.properties();
    } else {
        properties_ = solvers::analyze(matrix);
    }
    const solvers::SolverPlan plan = plan_grid_solver(grid_, properties_, solver, parts_.ranks);
    setup_times_.analysis = seconds_since(analysis_start);
    const auto solver_start = std::chrono::steady_clock::now();
    const solvers::MethodParameters& parameters = solver.method;
    // Over slabs the owned rows are a block of the grid's matrix with its couplings to the
    // neighbouring ranks' planes; over boxes, the owned box's rows on its window (the assembled
    // box), which the solver layer splits: multigrid over ranks starts from either. (Cut on
    // each rank alone: all_or_none stops every rank where one cannot, before the solver's
    // collective set-up.)
    std::unique_ptr<solvers::LinearSystemSolver<double>> linear_solver;
    if (!parts_.distributed()) {
        linear_solver = std::make_unique<solvers::LinearSystemSolver<double>>(
            backend_, std::move(matrix), plan, parameters);
    } else if (slabs) {
        solvers::DiaData<double> block = solvers::all_or_none(ranks(), [&] {
            const Box& own = parts_.owned;
            return owned_rows(std::move(matrix),
                              parts_.assembled.index(own.lower[0], own.lower[1], own.lower[2]),
                              own.size());
        });
        linear_solver = std::make_unique<solvers::LinearSystemSolver<double>>(
            backend_, std::move(block), plan, parameters);
    } else {
        linear_solver = std::make_unique<solvers::LinearSystemSolver<double>>(
            backend_, part_rows(std::move(matrix)), plan, parameters);
    }
    // The rows are scaled by the row scale (halved per folded side, quadrature weights): what
    // makes a pure Neumann system compatible is the source's weighted mean, removed in those
    // weights.
    if (plan.remove_constant) linear_solver->set_constant_removal_weights(owned(op_.row_scale()));
    backend_->synchronize();
    setup_times_.solver = seconds_since(solver_start);
    return linear_solver;
}

std::unique_ptr<solvers::LinearOperator<double>> GridIntegrator::owned_operator(
    solvers::DiaData<double> matrix) const {
    if (!parts_.distributed()) {
        return std::make_unique<solvers::DiaMatrix<double>>(backend_, std::move(matrix));
    }
    // The block cut, and on the back-end on each rank alone, before the collective set-up.
    solvers::SplitBlock<double> block = owned_block(std::move(matrix));
    auto inner = solvers::all_or_none(ranks(), [&] {
        return std::make_unique<solvers::DiaMatrix<double>>(backend_, block.inner);
    });
    return std::make_unique<solvers::DistributedMatrix<double>>(std::move(inner),
                                                                std::move(block.outside));
}

solvers::SplitBlock<double> GridIntegrator::owned_block(solvers::DiaData<double> matrix) const {
    const Box& own = parts_.owned;
    const Box& all = parts_.assembled;
    if (parts_.slabs(grid_)) {
        return solvers::all_or_none(ranks(), [&] {
            return solvers::split_block(
                owned_rows(std::move(matrix), all.index(own.lower[0], own.lower[1], own.lower[2]),
                           own.size()));
        });
    }
    return solvers::split_part_rows(ranks(), part_rows(std::move(matrix)));
}

solvers::PartRows<double> GridIntegrator::part_rows(solvers::DiaData<double> matrix) const {
    const Box& own = parts_.owned;
    solvers::PartRows<double> rows;
    rows.box = {grid_.dimension(), {grid_.points(0), grid_.points(1), grid_.points(2)}};
    rows.part = {own.lower, own.upper};
    rows.window = std::move(matrix);
    return rows;
}

solvers::Array<double> GridIntegrator::node_weights(double value_free, double value_fixed,
                                                    bool scaled) const {
    const auto fixed = owned(op_.dirichlet());
    const auto scale = owned(op_.row_scale());
    std::vector<double> w(fixed.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
        w[i] = (fixed[i] ? value_fixed : value_free) * (scaled ? scale[i] : 1.0);
    }
    return solvers::Array<double>::from_host(backend_, w);
}

}  // namespace simrun::framework

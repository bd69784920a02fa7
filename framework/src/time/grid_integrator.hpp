#pragma once
// What the integrators share: the spatial operator with its boundary folding, the step data,
// the state u on the back-end and the step index (t = step dt).
#include <chrono>
#include <memory>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/discretisation/grid_loops.hpp"
#include "simrun/framework/distributed/agreement.hpp"
#include "simrun/framework/distributed/decomposition.hpp"
#include "simrun/framework/time/time_integrator.hpp"
#include "simrun/solvers/distributed/distributed_matrix.hpp"
#include "simrun/solvers/matrices/linear_operator.hpp"

namespace simrun::framework {

struct IntegratorSetup {
    const Grid& grid;
    const Problem& problem;
    const BoundaryConditions& boundary;
    const TimeParameters& time;
    const SolverParameters& solver;
    std::shared_ptr<const solvers::Backend> backend;
    // The box this rank owns (the whole grid on one process); the back-end's communicator
    // holds the ranks.
    Decomposition parts;
};

class GridIntegrator : public TimeIntegrator {
public:
    explicit GridIntegrator(const IntegratorSetup& setup);
    // Also checks the data before the step is written: the Dirichlet values u takes and, unless
    // it is the run's last, the next step's data at every time that step evaluates them
    // (check_start_data; where the back-end forms the data, formed and checked there).
    void set_state(std::vector<double> u, std::int64_t step) override;
    void copy_state(std::span<double> u) const override;
    std::int64_t step() const override { return step_; }
    double time() const override { return static_cast<double>(step_) * dt_; }

protected:
    // A solver for `matrix` (over the assembled box) as the [solver] section asks, with the
    // matrix's measured properties (measured on DIA, over the ranks; the solver takes the owned
    // rows over, see LinearSystemSolver). Collective over the ranks.
    std::unique_ptr<solvers::LinearSystemSolver<double>> make_solver(
        solvers::DiaData<double> matrix, const SolverParameters& solver);
    // `matrix` (over the assembled box: L) as an operator on the owned rows: over several
    // ranks a DistributedMatrix (collective), else the matrix on the back-end.
    std::unique_ptr<solvers::LinearOperator<double>> owned_operator(
        solvers::DiaData<double> matrix) const;
    // The owned rows of `matrix` (over the assembled box) split into the box's own couplings
    // and those to the other ranks' nodes, in the ranks' numbering (collective).
    solvers::SplitBlock<double> owned_block(solvers::DiaData<double> matrix) const;
    // Over a process grid of boxes, `matrix` (over the assembled box, the owned box's window)
    // as the solver layer takes a part of a box (part_rows.hpp).
    solvers::PartRows<double> part_rows(solvers::DiaData<double> matrix) const;
    // The owned part of a vector over the assembled box (the operator's and the step data's):
    // all of it on one process.
    template <typename T>
    OwnedValues<T> owned(std::span<const T> assembled) const {
        return parts_.owned_part(assembled);
    }
    template <typename T>
    OwnedValues<T> owned(const std::vector<T>& assembled) const {
        return owned(std::span<const T>(assembled));
    }
    const solvers::Communicator& ranks() const { return backend_->communicator(); }
    // A vector on the back-end: w_i = value_free at free nodes, value_fixed at Dirichlet nodes,
    // each times the row scale when `scaled`.
    solvers::Array<double> node_weights(double value_free, double value_fixed, bool scaled) const;

    // Whether the back-end forms each step's data (DeviceDataTerm), so that data_ holds none.
    virtual bool data_on_device() const { return false; }
    // Where data_on_device(): forms the data of the step from t_now to t_next on the back-end as
    // the step will (into a vector the step overwrites) and throws its StepDataError, if any.
    virtual void check_data_on_device(double t_now, double t_next);
    // Runs evaluate() (a step's data on this rank's box) and the ranks' agreement on it, so that
    // a value not finite on one rank stops every rank alike: over several ranks the agreed
    // failure is an AgreedStepDataError where the lowest failing rank's error was a
    // StepDataError (found by one more collective, on a failure only).
    template <typename Evaluate>
    void agreeing_on_step_data(Evaluate&& evaluate) const;

    SetupTimes setup_times() const override { return setup_times_; }
    double data_seconds() const override { return data_seconds_; }
    // Runs form(), which forms a step's data term, adding its time to data_seconds().
    template <typename Form>
    void forming_data(Form&& form) {
        const auto start = std::chrono::steady_clock::now();
        form();
        data_seconds_ +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }

    std::chrono::steady_clock::time_point constructed_ = std::chrono::steady_clock::now();
    SetupTimes setup_times_;
    double data_seconds_ = 0.0;
    const Grid& grid_;
    const Problem& problem_;
    const BoundaryConditions& boundary_;
    std::shared_ptr<const solvers::Backend> backend_;
    Decomposition parts_;
    SpatialOperator op_;  // over the rank's assembled box
    StepData data_;
    TimeParameters time_;
    double dt_;
    std::int64_t steps_;  // the run's last step (a steady solve: 1)
    std::int64_t step_ = 0;
    solvers::Array<double> u_;  // on the owned box
    solvers::MatrixProperties properties_;
};

// Calls body(i, j, k, block) at each node of `box` on the grid's sides (where a Dirichlet side
// may hold it), in parallel as for_each_line_in_blocks: a line along x inside the grid holds
// two at most, so the cost is the box's lines, not its nodes. Within a block, in node order.
// Returns the blocks.
template <typename Body>
int for_each_side_node(const Grid& grid, const Box& box, Body&& body) {
    const std::int64_t nx = grid.points(0);
    return for_each_line_in_blocks(box, [&](std::int64_t j, std::int64_t k, int block) {
        const bool on_side = (grid.dimension() > 1 && (j == 0 || j == grid.points(1) - 1)) ||
                             (grid.dimension() > 2 && (k == 0 || k == grid.points(2) - 1));
        if (on_side) {
            for (std::int64_t i = box.lower[0]; i < box.upper[0]; ++i) body(i, j, k, block);
            return;
        }
        if (box.lower[0] == 0) body(std::int64_t{0}, j, k, block);
        if (box.upper[0] == nx && nx > 1) body(nx - 1, j, k, block);
    });
}

// Throws the StepDataError of a value that is not finite at row `row` of `box` at time t,
// naming `key`, the node's coordinates and t.
[[noreturn]] void throw_not_finite(const Grid& grid, const Box& box, std::int64_t row, double value,
                                   double t, StepDataError::Stage stage, const char* key,
                                   const char* what);

// The system an implicit scheme solves each step: shift I - scale L on the free rows
// (system_matrix): steady (0, 1), theta (1, theta dt).
struct SystemScaling {
    double shift;
    double scale;
};
SystemScaling system_scaling(const TimeParameters& time);
// The times at which the step after step `step` evaluates its data, in the order it evaluates
// them (each computed from a step index, as the step computes it): backward Euler t_{n+1};
// Crank-Nicolson and explicit Euler t_n (F^n) then t_{n+1}; the steady solve 0.
std::vector<double> step_data_times(const TimeParameters& time, std::int64_t step);
// Writes g(t) at the Dirichlet nodes of `box` into u (numbered within the box): the values u
// takes at the step a run starts from (0, or a restart's). Throws the StepDataError of the first
// that is not finite (stage start_dirichlet_value), before any step is written or computed.
void impose_dirichlet_values(const Grid& grid, const BoundaryConditions& boundary, const Box& box,
                             double t, std::span<double> u);
// What a run checks before it writes the step it starts from, at time t_start: the Dirichlet
// values u (on `own`) takes there (impose_dirichlet_values), then the next step's data at
// each of `t_data` (step_data_times), in order, evaluated by `data`. Throws the first
// StepDataError. The run (set_state, on its box, where the host forms the data) and
// `simrun check` (check_time_integrator, block by block) both call it.
void check_start_data(const Grid& grid, const BoundaryConditions& boundary, const Box& own,
                      double t_start, std::span<const double> t_data, std::span<double> u,
                      StepData& data);
// Throws InputError at time.dt when dt exceeds explicit Euler's largest stable step `limit`,
// giving the limit (rounded down, so that giving it back is accepted).
void require_stable_explicit_step(const TimeParameters& time, double limit);
// The solver plan for a grid operator's system matrix with `properties`, as [solver] asks: the
// grid's box named for multigrid (on one process, over slabs or over a process grid of boxes),
// a pure Neumann system solved for the solution of zero mean. Throws InputError for a singular
// nonsymmetric all-Neumann system, std::invalid_argument where the solver layer refuses the
// request.
solvers::SolverPlan plan_grid_solver(const Grid& grid, const solvers::MatrixProperties& properties,
                                     const SolverParameters& solver, int ranks = 1);
// Rows [first, first + rows) of a DIA matrix, in the block's numbering, with the entries that
// reach outside the block kept (a rank's block of a distributed matrix).
solvers::DiaData<double> owned_rows(solvers::DiaData<double> matrix, std::int64_t first,
                                    std::int64_t rows);

// TimeIntegrator::data_details over several ranks.
inline constexpr const char* distributed_data_details =
    "on the host of each rank (on the device only in a run of one process, yet)";

template <typename Evaluate>
void GridIntegrator::agreeing_on_step_data(Evaluate&& evaluate) const {
    bool not_finite = false;  // this rank's failure is its data's
    try {
        agreeing(ranks(), [&] {
            try {
                evaluate();
            } catch (const StepDataError&) {
                not_finite = true;
                throw;
            }
        });
    } catch (const AgreedFailure& agreed) {  // every rank is here
        const int lowest =
            static_cast<int>(ranks().min(not_finite ? ranks().rank() : ranks().size()));
        if (agreed.kind() != AgreedFailure::Kind::input || lowest != agreed.rank()) throw;
        throw AgreedStepDataError(agreed.rank(), agreed.every_rank(), agreed.what());
    }
}

std::unique_ptr<TimeIntegrator> make_theta_integrator(const IntegratorSetup& setup);
std::unique_ptr<TimeIntegrator> make_explicit_euler_integrator(const IntegratorSetup& setup);
std::unique_ptr<TimeIntegrator> make_steady_integrator(const IntegratorSetup& setup);

}  // namespace simrun::framework

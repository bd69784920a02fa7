#pragma once
// Time integrators for u_t = L u + f with boundary conditions, and the steady solve -L u = f,
// behind one interface so the run loop is the same for all. Step n is at t = n dt: times are
// computed from the step index, never accumulated, so a restarted run reproduces the same bits.
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/discretisation/boundary_conditions.hpp"
#include "simrun/framework/discretisation/spatial_operator.hpp"
#include "simrun/framework/distributed/agreement.hpp"
#include "simrun/framework/distributed/decomposition.hpp"
#include "simrun/framework/problem/problem.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/matrices/dia_matrix.hpp"
#include "simrun/solvers/selection/linear_system_solver.hpp"
#include "simrun/solvers/selection/matrix_properties.hpp"

namespace simrun::framework {

// Where the set-up of an integrator went, in seconds: assembling the operator (and the
// system matrix), analysing it, building the solver (uploads, a multigrid hierarchy), and
// compiling the data term's kernels (NVRTC; compilation_cached: read from the disk cache).
struct SetupTimes {
    double assembly = 0.0;
    double analysis = 0.0;
    double solver = 0.0;
    double compilation = 0.0;
    bool compilation_cached = false;
};

class TimeIntegrator {
public:
    virtual ~TimeIntegrator() = default;
    // Sets u at step `step` (t = step dt), taken over: the boundary values are imposed in it
    // before it goes to the back-end (no copy is made). Throws InputError
    // (a StepDataError, naming the key, the node and t) where a Dirichlet value there, or the
    // next step's data at any time that step evaluates them, is not finite: a run checks what
    // it starts from before it writes it.
    virtual void set_state(std::vector<double> u, std::int64_t step) = 0;
    // Advances one step (the steady solve: solves once). The report says how the linear solve
    // went; none for explicit Euler. Data not finite at the step's times throw StepDataError
    // (over several ranks AgreedStepDataError, on every rank).
    virtual std::optional<solvers::SolveReport> advance() = 0;
    virtual void copy_state(std::span<double> u) const = 0;
    virtual std::int64_t step() const = 0;
    virtual double time() const = 0;
    // The solver plan, or nullptr when no linear system is solved (explicit Euler).
    virtual const solvers::SolverPlan* plan() const = 0;
    // LinearSystemSolver::preconditioner_details of the solver; empty without one.
    virtual std::string preconditioner_details() const { return {}; }
    virtual const solvers::MatrixProperties* matrix_properties() const { return nullptr; }
    virtual SetupTimes setup_times() const { return {}; }
    // The seconds the steps so far spent forming their data term: the data evaluated at every
    // node (StepData::evaluate) and the term assembled and handed to the back-end.
    virtual double data_seconds() const { return 0.0; }
    // Where each step's data term is formed, e.g. "on the device each step (compiled by NVRTC
    // 13.0 for sm_90 in 0.21 s)" or "on the host: NVRTC ... was not found"; empty where a step
    // forms none.
    virtual std::string data_details() const { return {}; }
};

// A step's field is no longer finite (an unstable or overflowing explicit step). The message
// names the step and time; the outputs written before it are complete.
class FieldNotFinite : public FailureOnEveryRank {  // from the global norm: alike on every rank
public:
    using FailureOnEveryRank::FailureOnEveryRank;
};

// The refusal of a data value that is not finite at time t, with the stage of the evaluation
// that found it (the stages run in this order over all nodes at each time, so an error of an
// earlier stage is met first wherever its node is): the Dirichlet values of the state a run
// starts from (impose_dirichlet_values), then StepData::evaluate's source, ghost and Dirichlet
// values.
class StepDataError : public InputError {
public:
    enum Stage { start_dirichlet_value, source, ghost_value, dirichlet_value };
    StepDataError(Stage stage, double t, const std::string& message)
        : InputError(message), stage_(stage), t_(t) {}
    Stage stage() const { return stage_; }
    double time() const { return t_; }

private:
    Stage stage_;
    double t_;
};

// A step's data not finite on some rank of a distributed run: the ranks' AgreedFailure (of
// kind input) where the failure they agreed on, the lowest failing rank's, is a StepDataError.
class AgreedStepDataError : public AgreedFailure {
public:
    AgreedStepDataError(int rank, bool every_rank, const std::string& message)
        : AgreedFailure(Kind::input, rank, every_rank, message) {}
};

// Evaluates the data of a step on the host: F(t) = f(t) + boundary forcing at free nodes (0 at
// Dirichlet nodes), G(t) = g(t) at Dirichlet nodes (0 elsewhere), and L G(t), the coupling of
// the free nodes to the Dirichlet values; on the nodes of the operator's box.
class StepData {
public:
    StepData(const Grid& grid, const Problem& problem, const BoundaryConditions& boundary,
             const SpatialOperator& op);
    bool depends_on_time() const { return depends_on_time_; }
    // Evaluates F, G and L G at time t (cached when nothing depends on time). Throws InputError
    // naming the key (problem.source, or boundary for a Dirichlet, Neumann or Robin value), the
    // node's coordinates and t when a value is not finite there (a division by zero at some
    // node, an overflow from some time on), so that no step is computed from it.
    void evaluate(double t);
    const std::vector<double>& forcing() const { return forcing_; }
    std::span<const double> dirichlet_values() const { return g_; }
    std::span<const double> dirichlet_coupling() const { return lg_; }

private:
    const Grid& grid_;
    const Problem& problem_;
    const BoundaryConditions& boundary_;
    const SpatialOperator& op_;
    bool depends_on_time_;
    std::optional<double> evaluated_at_;
    std::vector<double> forcing_, g_, lg_;  // allocated at the first evaluate()
};

// Builds the integrator of the scheme in `time` (steady, backward_euler, crank_nicolson,
// explicit_euler). Throws InputError for an explicit step above the stable limit (the message
// gives the largest stable dt) and std::invalid_argument when the solver cannot handle the
// system. With `parts` (a distributed run: the back-end's communicator holds the ranks) the
// integrator holds this rank's box, and its state (set_state, copy_state) is its nodes' (in the
// box's numbering); building it is then collective.
std::unique_ptr<TimeIntegrator> make_time_integrator(
    const Grid& grid, const Problem& problem, const BoundaryConditions& boundary,
    const TimeParameters& time, const SolverParameters& solver,
    std::shared_ptr<const solvers::Backend> backend,
    std::optional<Decomposition> parts = std::nullopt);

// What make_time_integrator decides and refuses, and the first step's data, found without
// building the integrator: the operator is assembled, analysed and bounded over blocks of at
// most about `block_nodes` nodes (whole planes, each with its neighbouring planes), so the
// memory used does not grow with the grid. The properties, plan and stability limit equal the
// integrator's, bit for bit. Throws what make_time_integrator throws; what the first step's
// data would throw is returned, for the caller to raise where the run would meet it.
struct IntegratorCheck {
    std::optional<solvers::MatrixProperties> properties;  // of the system matrix (implicit)
    std::optional<solvers::SolverPlan> plan;              // implicit schemes and steady
    std::optional<double> explicit_limit;                 // explicit Euler's largest stable dt
    std::exception_ptr first_step_error;  // StepData::evaluate's InputError, or none
};
IntegratorCheck check_time_integrator(const Grid& grid, const Problem& problem,
                                      const BoundaryConditions& boundary,
                                      const TimeParameters& time, const SolverParameters& solver,
                                      std::int64_t block_nodes = std::int64_t{1} << 20);

}  // namespace simrun::framework

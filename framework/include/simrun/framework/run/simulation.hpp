#pragma once
// A run: sets up the time integrator on a back-end (from the initial condition, or from a step
// stored by an earlier run), loops over the steps with progress, hands the output cadence to
// writer threads (VTK series, HDF5/XDMF), and summarises.
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "simrun/framework/distributed/agreement.hpp"
#include "simrun/framework/distributed/decomposition.hpp"
#include "simrun/framework/output/restart_state.hpp"
#include "simrun/framework/problem/run_spec.hpp"
#include "simrun/framework/run/setup_phases.hpp"
#include "simrun/framework/time/time_integrator.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/backend_preparation.hpp"

namespace simrun::framework {

// A step's solve did not converge: the run stops (exit code 1); steps written before stay valid.
class SolveFailure : public FailureOnEveryRank {  // from global sums: alike on every rank
public:
    using FailureOnEveryRank::FailureOnEveryRank;
};

// A time step's data (a source or boundary value) are not finite at some node and time, met
// once the outputs hold the steps before it: the run stops (exit code 1; an input error, exit
// 2, means nothing was written); steps written before stay valid. The message names the key,
// the node and t.
class DataNotFinite : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct RunOptions {
    solvers::BackendChoice backend = solvers::BackendChoice::automatic;
    std::optional<std::filesystem::path> output_directory;  // overrides [output] directory
    bool quiet = false;
    bool write_output = true;
    // Continue from the last step stored in this run file (see Simulation::Simulation).
    std::optional<std::filesystem::path> restart_file;
    // The ranks the run is split over (solvers::launched_processes): each holds a box of the
    // grid (Decomposition); one process by default.
    std::shared_ptr<const solvers::Communicator> ranks = solvers::single_process();
    // The process grid: parts along x, y (and z), their product the ranks. None: slabs across
    // the slowest axis (multigrid over ranks runs on them), or where the grid has fewer planes
    // than ranks the boxes with the fewest nodes on their faces.
    std::optional<std::array<std::int64_t, 3>> process_grid;
    // Called after each time step (the Python module checks there for a Ctrl-C now and then).
    // What it throws ends the run as a failed step does: the outputs keep the steps written
    // before. Over several ranks, every rank must throw alike.
    std::function<void()> after_step;
    // SIGINT and SIGTERM during the time steps end the run after the step in progress, that
    // step written (StopSignals; RunSummary::stopped_by says so) instead of wherever they find
    // it. Off by default: a program embedding the framework keeps its own handlers.
    bool stop_on_signals = false;
    // When the run began reading its input: the set-up's phases are timed from it
    // (Simulation::setup_phases); the constructor's start where none is given.
    std::optional<std::chrono::steady_clock::time_point> setup_start;
    // A CUDA context being made while the input was read (solvers::BackendPreparation, for
    // `backend`): joined before the back-end is made. None: the back-end makes its own.
    std::shared_ptr<solvers::BackendPreparation> backend_preparation;
};

struct RunSummary {
    std::int64_t steps = 0;
    std::int64_t total_iterations = 0;
    std::int64_t max_iterations = 0;
    std::int64_t fallbacks = 0;  // steps whose first method failed and a fallback was used
    double seconds = 0.0;        // wall time of run(), waiting for the last output included
    // Of `seconds`: the loop's hand-overs of output steps (each a copy of the field to the host,
    // and a wait when every buffer is still being written), and the wait for the writers at
    // the end. The rest of the output's cost is setting up the files and writers' contention.
    double output_handover_seconds = 0.0;
    double output_wait_seconds = 0.0;
    // Of `seconds`: the linear solves (SolveReport::seconds); the rest of a step forms its data
    // and right-hand side.
    double solver_seconds = 0.0;
    // Of `solver_seconds`: this rank's communication with the other ranks in the solves
    // (SolveReport::communication; zero on one process).
    solvers::CommunicationTimes solver_communication;
    // Of `seconds`: forming the steps' data terms (TimeIntegrator::data_seconds), the cost that
    // time-dependent sources and boundary values add to a step.
    double data_seconds = 0.0;
    // A pure Neumann steady problem (u fixed only up to a constant): the largest share of a
    // right-hand side that was incompatible data and removed (SolveReport::removed_constant);
    // the solution written is the one of zero mean.
    std::optional<double> removed_constant;
    // The signal (SIGINT, SIGTERM) that ended the time steps after `steps` of them, the last
    // one written (RunOptions::stop_on_signals); 0 where the run went to its end.
    int stopped_by = 0;
    double mean_iterations() const {
        return steps > 0 ? static_cast<double>(total_iterations) / static_cast<double>(steps) : 0;
    }
    double seconds_per_step() const { return per_step(seconds); }
    // A total over the run's steps divided by their number (0 without steps).
    double per_step(double total) const {
        return steps > 0 ? total / static_cast<double>(steps) : 0;
    }
};

class Simulation {
public:
    // Builds the back-end, assembles the operator and sets the initial condition, or with
    // options.restart_file the state of the last step that file stores (read_restart_state()
    // says what must match). Throws InputError when the initial condition, the Dirichlet values
    // at the state's time or the first step's data are not finite (TimeIntegrator::set_state),
    // or the restart file does not fit, solvers::Error when the back-end is unavailable,
    // std::invalid_argument when the solver cannot handle the matrix. Over several ranks
    // (options.ranks) it is collective, and run() too: every rank holds its box, rank 0
    // alone writes the outputs (the fields gathered to it), and a failure met on any rank is
    // raised on every rank as an AgreedFailure (distributed/agreement.hpp).
    Simulation(RunSpec spec, const RunOptions& options);
    ~Simulation();

    // Runs to the end time (steady: solves once and writes the solution as step 0);
    // summary.steps counts the steps computed here. After a restart, outputs whose .h5 is the
    // restart file itself are appended to (the .h5 keeps its steps, the .pvd its entries up to
    // the restart step); other outputs start afresh with the restart step. Throws SolveFailure
    // when a step's solve does not converge and DataNotFinite when a step's data are not finite
    // (steps handed to the writer before are still written), std::runtime_error when writing
    // fails. (What the first step meets is checked by the constructor, before any output.)
    RunSummary run();

    const RunSpec& spec() const { return spec_; }
    const Grid& grid() const { return *spec_.grid; }
    const solvers::Backend& backend() const { return *backend_; }
    // Why this back-end (solvers::choose_backend).
    const std::string& backend_reason() const { return backend_reason_; }
    const TimeIntegrator& integrator() const { return *integrator_; }
    // Where the set-up went (this rank's times), from RunOptions::setup_start to the end of the
    // constructor.
    const SetupPhases& setup_phases() const { return setup_; }
    double time() const { return integrator_->time(); }
    // The whole field (over several ranks: gathered on rank 0, empty on the others;
    // collective).
    std::vector<double> field() const;
    // This rank's nodes of the field (decomposition().owned, numbered within it; the whole
    // field on one process).
    std::vector<double> owned_field() const;
    const Decomposition& decomposition() const { return parts_; }
    // Where the outputs went (empty paths when output is off or before run()).
    std::filesystem::path pvd_path() const { return pvd_path_; }
    std::filesystem::path h5_path() const { return h5_path_; }

private:
    struct Outputs;
    void make_backend();
    void finish_setup(std::chrono::steady_clock::time_point started);
    Outputs open_outputs(const SetupPhases& written);
    std::int64_t output_piece_size() const;
    void copy_output_piece(std::span<double> piece) const;

    RunSpec spec_;
    RunOptions options_;
    Decomposition parts_;
    std::shared_ptr<const solvers::Backend> backend_;
    std::string backend_reason_;
    std::unique_ptr<TimeIntegrator> integrator_;
    SetupPhases setup_;
    std::optional<RestartState> restart_;  // its field released once set in the integrator
    std::filesystem::path pvd_path_, h5_path_;
};

// The ranks of a distributed run and its decomposition, e.g. "4 (Open MPI v4.1.4, 4 ranks):
// slabs of 64-65 planes across y, a plane of halo from each neighbour (MPI messages between the
// ranks' memory)", or "4 (...): a 2x2 process grid of boxes of 64-65 x 64-65 nodes, faces
// exchanged with up to 8 neighbours (...)": how the halo travels is the back-end's
// (Backend::halo_path).
std::string describe_ranks(const Grid& grid, const Decomposition& parts,
                           const solvers::Backend& backend);
// The process grid a run over `ranks` ranks takes: `asked` (--process-grid), else slabs
// where every rank gets a plane, else the boxes of fewest face nodes (Decomposition::
// box_parts). Throws InputError where `asked` does not hold `ranks` ranks.
std::array<std::int64_t, 3> choose_process_grid(
    const Grid& grid, int ranks, const std::optional<std::array<std::int64_t, 3>>& asked);

// Every validation constructing a Simulation from `spec` makes (without a restart file), and
// the first step's data, without allocating the problem: the memory the run needs, the
// operator, its analysis, the solver's plan or the explicit stability limit
// (check_time_integrator), the initial condition, all block by block in memory that does not
// grow with the grid. Throws what the Simulation would throw, with the same messages.
IntegratorCheck check_simulation(const RunSpec& spec);

}  // namespace simrun::framework

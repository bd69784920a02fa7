#include "simrun/framework/run/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include "output/output_pipeline.hpp"
#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/distributed/agreement.hpp"
#include "simrun/framework/output/hdf5_run_writer.hpp"
#include "simrun/framework/output/output_lock.hpp"
#include "simrun/framework/output/vtk_series_writer.hpp"
#include "simrun/framework/run/progress.hpp"
#include "simrun/framework/run/stop_signals.hpp"
#include "simrun/solvers/system/memory_budget.hpp"

namespace simrun::framework {

namespace {

// Runs work() (a hand-over to the output pipeline, or its end) and then, over several ranks,
// an agreement on whether any rank's writers failed. A writer's failure is agreed among the
// writers of every rank (each rank's writer threads meet in collectives of their own): the
// rank that failed holds its error, the others solvers::PeerFailure naming it; but when each
// learns it depends on its threads' timing. So every rank states what it holds, and the rank
// that the others name waits for its own writers' error, before the ranks agree: all of them
// end alike, with that rank's message.
template <typename Work>
void agree_on_outputs(const solvers::Communicator& ranks, OutputPipeline& pipeline, Work&& work) {
    if (ranks.size() == 1) return work();
    std::exception_ptr failure;
    int named = ranks.size();  // the rank this one knows to have failed
    try {
        work();
    } catch (const solvers::PeerFailure& peer) {
        failure = std::current_exception();
        named = peer.rank();
    } catch (...) {
        failure = std::current_exception();
        named = ranks.rank();
    }
    const int first = static_cast<int>(ranks.min(named));
    if (first == ranks.size()) return;
    if (first == ranks.rank() && named != ranks.rank()) {
        if (const auto own = pipeline.wait_for_failure()) failure = own;
    }
    agree(ranks, failure);
}

}  // namespace

struct Simulation::Outputs {
    std::unique_ptr<OutputLock> lock;          // this run's hold on its output files
    std::unique_ptr<OutputPipeline> pipeline;  // none when output is off
    // Whether the first step (0, or the restart step) still has to be written to each output:
    // a run file continued in place already holds it.
    bool first_vtk = true;
    bool first_hdf5 = true;
};

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Rank 0's phases on every rank (collective): each rank's values are summed with zeros from
// the others, which leaves rank 0's bits.
SetupPhases rank_zero_phases(const solvers::Communicator& ranks, const SetupPhases& mine) {
    if (ranks.size() == 1) return mine;
    const bool first = ranks.rank() == 0;
    std::array<double, 12> values{mine.input,
                                  mine.context,
                                  mine.coefficients,
                                  mine.compilation,
                                  mine.compilation_cached ? 1.0 : 0.0,
                                  mine.assembly,
                                  mine.analysis,
                                  mine.solver,
                                  mine.data_term,
                                  mine.initial_state,
                                  mine.first_step_data,
                                  mine.total};
    if (!first) values.fill(0.0);
    ranks.sum(values);
    return {values[0], values[1], values[2], values[3], values[4] > 0.5, values[5],
            values[6], values[7], values[8], values[9], values[10],      values[11]};
}

// Runs work() and adds its seconds to `phase`.
template <typename Work>
decltype(auto) timed(double& phase, Work&& work) {
    const auto start = std::chrono::steady_clock::now();
    struct AddOnExit {
        double& phase;
        std::chrono::steady_clock::time_point start;
        ~AddOnExit() { phase += seconds_since(start); }
    } add{phase, start};
    return work();
}

StepStatistics initial_statistics() { return {0, 0.0, "initial", "none", {}}; }

StepStatistics statistics_of(const std::optional<solvers::SolveReport>& report) {
    if (!report) return {0, 0.0, "explicit", "none", {}};
    const solvers::SolveResult& result = report->result();
    return {report->total_iterations(), result.relative_residual(),
            std::string(solvers::to_string(result.status)), report->step().name(),
            result.residual_history};
}

std::string decisions_text(const TimeIntegrator& integrator, const solvers::Backend& backend,
                           const RunSpec& spec, const Decomposition& parts,
                           const SetupPhases& setup) {
    std::string text = "backend = " + std::string(solvers::to_string(backend.kind())) + " (" +
                       backend.description() + ")\n";
    if (parts.distributed()) {
        text += "ranks = " + describe_ranks(*spec.grid, parts, backend) + "\n";
    }
    text += "scheme = " + std::string(solvers::name_of(spec.time.scheme)) +
            "\nboundary = " + spec.boundary->describe() + "\n";
    for (const auto& note : spec.problem->notes(*spec.grid)) text += "note = " + note + "\n";
    if (const std::string data = integrator.data_details(); !data.empty()) {
        text += "data = " + data + "\n";
    }
    text += setup_decisions(setup);
    const solvers::SolverPlan* plan_pointer = integrator.plan();
    if (plan_pointer == nullptr) return text + "solver = none (explicit scheme)\n";
    const solvers::SolverPlan& plan = *plan_pointer;
    text += "method = " + solvers::to_string(plan.first.method) +
            "\npreconditioner = " + solvers::to_string(plan.first.preconditioner) +
            "\nformat = " + std::string(solvers::to_string(plan.format)) +
            "\nreason = " + plan.first.reason + "\nformat_reason = " + plan.format_reason + "\n";
    if (const std::string details = integrator.preconditioner_details(); !details.empty()) {
        text += (plan.first.preconditioner == solvers::PreconditionerKind::multigrid
                     ? "multigrid = "
                     : "preconditioner_details = ") +
                details + "\n";
    }
    for (const auto& fallback : plan.fallbacks) {
        text += "fallback = " + fallback.name() + ": " + fallback.reason + "\n";
    }
    return text;
}

// What a run holds per grid node, at most, in host memory: the operator in DIA (5 or 7
// diagonals, and the system matrix made from it), the field and the step data (forcing,
// Dirichlet values, their coupling), the solver's vectors (BiCGStab's 8, the initial guess and
// the recomputed residual), the output buffers, and a byte of boundary marks and a row scale.
double estimated_run_bytes(const Grid& grid, std::int64_t nodes) {
    const double diagonals = 2.0 * grid.dimension() + 1.0;
    const double per_node = 8.0 * (2 * diagonals + 1 + 3 + 10 + 2) + 1 + 8;
    return per_node * static_cast<double>(nodes);
}

// What one process holds: the whole grid, or over several ranks its box with the nodes around
// it.
void require_memory_for(const RunSpec& spec, const Decomposition& parts) {
    const Grid& grid = *spec.grid;
    const std::int64_t nodes = parts.assembled.size();
    if (const auto problem = solvers::memory_problem(estimated_run_bytes(grid, nodes))) {
        throw InputError(
            spec.source_name, "grid",
            "a grid of " + std::to_string(grid.num_points()) + " nodes " +
                (parts.distributed() ? "(" + std::to_string(nodes) + " of them on this rank) "
                                     : std::string()) +
                *problem + "; use a coarser grid" + (parts.distributed() ? " or more ranks" : ""));
    }
}

// Calls make(), turning the solver layer's refusal of the system the input asks for (a format
// the matrix does not fit, a method its diagonal forbids) into an input error at [solver].
template <typename Make>
auto placing_solver_refusals(const RunSpec& spec, Make&& make) {
    try {
        return make();
    } catch (const std::invalid_argument& e) {
        throw InputError(spec.source_name, "solver", e.what());
    }
}

// `message` with the input file's name ahead of it where it names only a key.
std::string placed(const RunSpec& spec, std::string_view message) {
    if (!message.starts_with("key '")) return std::string(message);
    return spec.source_name + ": " + std::string(message);
}

// Calls make(), naming the input file in an InputError that names only a key (one found while
// computing: non-finite data, an initial condition, an explicit step).
template <typename Make>
auto placing_input_errors(const RunSpec& spec, Make&& make) {
    try {
        return make();
    } catch (const InputError& e) {
        const std::string_view message = e.what();
        if (!message.starts_with("key '")) throw;
        throw InputError(placed(spec, message));
    } catch (const AgreedFailure& e) {  // the same, agreed by the ranks
        const std::string_view message = e.what();
        if (e.kind() != AgreedFailure::Kind::input || !message.starts_with("key '")) throw;
        throw AgreedFailure(e.kind(), e.rank(), e.every_rank(), placed(spec, message));
    }
}

// A time step of a run, for the message of its failure: what the outputs hold by then.
struct StepOfRun {
    std::int64_t step;
    std::int64_t first;  // the step the run started from (0, or the restart's)
    bool writing;        // whether the run writes outputs
};

// What the outputs hold when `at` fails: the step the run started from and every
// output.every-th after it, so up to the last of those before it; nothing with output off.
std::string outputs_held(const RunSpec& spec, const StepOfRun& at) {
    if (!at.writing) return "; nothing was written (output is off)";
    const std::int64_t every = spec.output.every;
    const std::int64_t last = std::max(at.first, (at.step - 1) / every * every);
    char text[120];
    std::snprintf(text, sizeof text, "; the outputs are complete up to step %lld (t = %.6g)",
                  static_cast<long long>(last), static_cast<double>(last) * spec.time.dt);
    return text;
}

// Runs a time step (work), once outputs hold the steps before it: its data turning non-finite
// at some node and time (StepDataError; over several ranks AgreedStepDataError) is a failure of
// the computation, exit 1, not an input error, which means that nothing was written; over
// several ranks it stays agreed, as a failure. Any other error passes as it is.
template <typename Work>
auto computing_step(const RunSpec& spec, const StepOfRun& at, Work&& work) {
    return placing_input_errors(spec, [&] {
        try {
            return work();
        } catch (const AgreedStepDataError& e) {
            throw AgreedFailure(AgreedFailure::Kind::failure, e.rank(), e.every_rank(),
                                placed(spec, e.what()) + outputs_held(spec, at));
        } catch (const StepDataError& e) {
            throw DataNotFinite(placed(spec, e.what()) + outputs_held(spec, at));
        }
    });
}

// Throws InputError at the first node of `box` (in its numbering; the grid's index named) where
// u is not finite.
void require_finite_initial(const Grid& grid, const Box& box, std::span<const double> u) {
    for (std::size_t i = 0; i < u.size(); ++i) {
        if (!std::isfinite(u[i])) {
            const auto [x, y, z] = box.node(static_cast<std::int64_t>(i));
            const std::int64_t node = grid.index(x, y, z);
            throw InputError("key 'problem.initial': the initial condition is not finite at node " +
                             std::to_string(node) + " (value " + std::to_string(u[i]) + ")");
        }
    }
}

// Blocks of planes for check_simulation: about 2^20 nodes each.
constexpr std::int64_t check_block_nodes = std::int64_t{1} << 20;

}  // namespace

std::string describe_ranks(const Grid& grid, const Decomposition& parts,
                           const solvers::Backend& backend) {
    // The nodes of the parts along an axis: "64" or "64-65".
    const auto lengths = [&](int axis) {
        const std::int64_t n = grid.points(axis), k = parts.parts[static_cast<std::size_t>(axis)];
        const std::int64_t fewest = n / k, most = fewest + (n % k != 0 ? 1 : 0);
        return std::to_string(fewest) + (most != fewest ? "-" + std::to_string(most) : "");
    };
    const std::string ranks =
        std::to_string(parts.ranks) + " (" + backend.communicator().describe() + "): ";
    if (parts.slabs(grid)) {
        return ranks + "slabs of " + lengths(grid.slowest_axis()) + " planes across " +
               (grid.dimension() == 2 ? "y" : "z") + ", a plane of halo from each neighbour (" +
               backend.halo_path() + ")";
    }
    std::string sizes = lengths(0);
    for (int axis = 1; axis < grid.dimension(); ++axis) sizes += " x " + lengths(axis);
    return ranks + "a " + Decomposition::describe_parts(grid, parts.parts) +
           " process grid of boxes of " + sizes + " nodes, each exchanging its faces with up to " +
           std::to_string(grid.dimension() == 2 ? 4 : 6) + " neighbours (" + backend.halo_path() +
           ")";
}

std::array<std::int64_t, 3> choose_process_grid(
    const Grid& grid, int ranks, const std::optional<std::array<std::int64_t, 3>>& asked) {
    if (asked) {
        const std::int64_t held = (*asked)[0] * (*asked)[1] * (*asked)[2];
        if (held != ranks) {
            throw InputError("--process-grid " + Decomposition::describe_parts(grid, *asked) +
                             " holds " + std::to_string(held) + " ranks, but the run has " +
                             std::to_string(ranks));
        }
        return *asked;
    }
    if (grid.all_planes().count() >= ranks) return Decomposition::slab_parts(grid, ranks);
    return Decomposition::box_parts(grid, ranks, 2)
        .value_or(Decomposition::slab_parts(grid, ranks));
}

IntegratorCheck check_simulation(const RunSpec& spec) {
    require_memory_for(spec, Decomposition::whole(*spec.grid));
    return placing_input_errors(spec, [&] {
        for (const PlaneRange block : spec.grid->plane_blocks(check_block_nodes)) {
            spec.problem->check_stencil(*spec.grid, spec.grid->box(block));
        }
        IntegratorCheck check = placing_solver_refusals(spec, [&] {
            return check_time_integrator(*spec.grid, *spec.problem, *spec.boundary, spec.time,
                                         spec.solver, check_block_nodes);
        });
        if (!spec.time.steady()) {
            std::vector<double> u;
            for (const PlaneRange block : spec.grid->plane_blocks(check_block_nodes)) {
                u.assign(static_cast<std::size_t>(spec.grid->num_points(block)), 0.0);
                spec.problem->initial_condition(*spec.grid, spec.grid->box(block), u);
                require_finite_initial(*spec.grid, spec.grid->box(block), u);
            }
        }
        if (check.first_step_error) std::rethrow_exception(check.first_step_error);
        return check;
    });
}

Simulation::Simulation(RunSpec spec, const RunOptions& options)
    : spec_(std::move(spec)), options_(options) {
    const auto constructed = std::chrono::steady_clock::now();
    const auto started = options_.setup_start.value_or(constructed);
    setup_.input = std::chrono::duration<double>(constructed - started).count();
    const solvers::Communicator& ranks = *options_.ranks;
    const Grid& grid = *spec_.grid;
    if (options_.output_directory) spec_.output.directory = *options_.output_directory;
    // Every step below that a rank may fail alone is followed by an agreement of all ranks
    // (agreeing; nothing on one process).
    agreeing(ranks, [&] {
        // (On one process too: a process grid asked for must hold the ranks.)
        const auto parts = choose_process_grid(grid, ranks.size(), options_.process_grid);
        parts_ = ranks.size() > 1 ? Decomposition::of(grid, ranks.rank(), parts)
                                  : Decomposition::whole(grid);
        require_memory_for(spec_, parts_);
        // The restart file is checked first: its errors are the user's, and cheap to find.
        if (options_.restart_file) {
            // Each rank reads its own box of the stored field (any rank count continues).
            timed(setup_.initial_state, [&] {
                restart_ =
                    read_restart_state(*options_.restart_file, grid, spec_.time, parts_.owned);
            });
        }
        // The coefficients, checked on the host while the CUDA context is being made (its
        // thread is joined in make_backend).
        timed(setup_.coefficients, [&] {
            placing_input_errors(spec_, [&] { spec_.problem->check_stencil(grid, parts_.owned); });
        });
        make_backend();
    });
    double integrator_seconds = 0.0;
    agreeing(ranks, [&] {
        integrator_ = timed(integrator_seconds, [&] {
            return placing_input_errors(spec_, [&] {
                return placing_solver_refusals(spec_, [&] {
                    return make_time_integrator(grid, *spec_.problem, *spec_.boundary, spec_.time,
                                                spec_.solver, backend_, parts_);
                });
            });
        });
    });
    const SetupTimes times = integrator_->setup_times();
    setup_.data_term = std::max(0.0, integrator_seconds - (times.assembly + times.analysis +
                                                           times.solver + times.compilation));
    // The state is checked where it is set, before anything is written: its Dirichlet values
    // and the first step's data (as `simrun check` checks them).
    // (u is handed over: the integrator imposes the boundary values in it, without a copy.)
    const auto set_state = [&](std::vector<double>&& u, std::int64_t step) {
        timed(setup_.first_step_data, [&] {
            agreeing(ranks, [&] {
                placing_input_errors(spec_, [&] { integrator_->set_state(std::move(u), step); });
            });
        });
    };
    if (restart_) {
        set_state(std::move(restart_->u), restart_->step);
        restart_->u = {};
        finish_setup(started);
        return;
    }
    std::vector<double> u;
    timed(setup_.initial_state, [&] {
        u.assign(static_cast<std::size_t>(parts_.num_points()), 0.0);
        if (spec_.time.steady()) return;
        agreeing(ranks, [&] {
            spec_.problem->initial_condition(grid, parts_.owned, u);
            placing_input_errors(spec_, [&] { require_finite_initial(grid, parts_.owned, u); });
        });
    });
    set_state(std::move(u), 0);
    finish_setup(started);
}

Simulation::~Simulation() = default;

// The back-end (solvers::choose_backend), once the context being made for it is there
// (RunOptions::backend_preparation): a CUDA back-end's wait and making are the set-up's context.
void Simulation::make_backend() {
    const double waited = options_.backend_preparation ? options_.backend_preparation->join() : 0.0;
    const auto start = std::chrono::steady_clock::now();
    solvers::BackendDecision decision = solvers::choose_backend(options_.backend, options_.ranks);
    if (decision.backend->kind() == solvers::BackendKind::cuda) {
        setup_.context = waited + seconds_since(start);
    }
    backend_ = std::move(decision.backend);
    backend_reason_ = std::move(decision.reason);
}

// The integrator's phases, and the set-up's whole time from `started`.
void Simulation::finish_setup(std::chrono::steady_clock::time_point started) {
    const SetupTimes times = integrator_->setup_times();
    setup_.assembly = times.assembly;
    setup_.analysis = times.analysis;
    setup_.solver = times.solver;
    setup_.compilation = times.compilation;
    setup_.compilation_cached = times.compilation_cached;
    setup_.total = seconds_since(started);
}

std::vector<double> Simulation::owned_field() const {
    std::vector<double> u(static_cast<std::size_t>(parts_.num_points()));
    integrator_->copy_state(u);
    return u;
}

std::vector<double> Simulation::field() const {
    std::vector<double> u = owned_field();
    if (!parts_.distributed()) return u;
    const std::vector<double> gathered = options_.ranks->gather(u, 0);
    return gathered.empty() ? gathered : parts_.to_grid_order(*spec_.grid, gathered);
}

// Over several ranks every rank opens the outputs with its share: its piece of each VTK step,
// its box of the run file's fields (collective, on communicators of the writers' own);
// rank 0 alone holds the output directory's lock and writes the indexes.
Simulation::Outputs Simulation::open_outputs(const SetupPhases& written) {
    Outputs outputs;
    const OutputParameters& output = spec_.output;
    if (!options_.write_output || (!output.vtk && !output.hdf5)) return outputs;
    const solvers::Communicator& ranks = *options_.ranks;
    std::optional<VtkPieces> pieces;
    std::optional<Hdf5Ranks> hdf5_ranks;
    if (parts_.distributed()) {
        if (output.vtk) {
            pieces = VtkPieces{ranks.duplicate(), parts_.output_pieces(*spec_.grid), parts_.owned};
        }
        if (output.hdf5) hdf5_ranks = Hdf5Ranks{ranks.duplicate(), parts_.owned};
    }
    const auto h5_file = output.directory / (output.basename + ".h5");
    // Rank 0 takes the lock, making the output directory, and decides whether a run continued
    // into the file it continues from appends to its outputs; its failure is agreed at once
    // (all_or_none) and its decision shared: the writers' construction that follows is
    // collective, in the one mode every rank takes.
    bool append = false;
    solvers::all_or_none(ranks, [&] {
        if (parts_.rank != 0) return;
        outputs.lock = std::make_unique<OutputLock>(output.directory, output.basename);
        if (restart_ && output.hdf5) {
            std::error_code error;
            append = std::filesystem::equivalent(h5_file, restart_->file, error);
        }
    });
    if (parts_.distributed()) append = ranks.max(append ? 1.0 : 0.0) > 0;
    std::unique_ptr<VtkSeriesWriter> vtk;
    std::unique_ptr<Hdf5RunWriter> hdf5;
    if (output.vtk) {
        vtk = append ? std::make_unique<VtkSeriesWriter>(output.directory, output.basename,
                                                         *spec_.grid,
                                                         ContinueSeries{restart_->step}, pieces)
                     : std::make_unique<VtkSeriesWriter>(output.directory, output.basename,
                                                         *spec_.grid, pieces);
        vtk->set_compression(output.compression);
        // Rank 0 read the series: the others learn from it whether the first step is there.
        const bool first = !vtk->has_step(integrator_->step());
        outputs.first_vtk = ranks.min(parts_.rank == 0 && !first ? 0.0 : 1.0) > 0;
        pvd_path_ = vtk->pvd_path();
    }
    if (output.hdf5) {
        hdf5 = std::make_unique<Hdf5RunWriter>(
            h5_file, *spec_.grid, spec_.effective_input,
            decisions_text(*integrator_, *backend_, spec_, parts_, written),
            append ? Hdf5OpenMode::append : Hdf5OpenMode::create, hdf5_ranks);
        outputs.first_hdf5 = !append;
        h5_path_ = h5_file;
    }
    outputs.pipeline = std::make_unique<OutputPipeline>(
        std::move(vtk), std::move(hdf5), static_cast<std::size_t>(output_piece_size()), backend_,
        OutputPipeline::default_buffer_bytes, static_cast<std::size_t>(parts_.num_points()));
    return outputs;
}

// This rank's piece of an output step: its box, and where VTK pieces are written, the nodes of
// the next boxes that its piece shares (Decomposition::output_pieces).
std::int64_t Simulation::output_piece_size() const {
    if (!parts_.distributed() || !spec_.output.vtk) return parts_.num_points();
    return parts_.output_pieces(*spec_.grid)[static_cast<std::size_t>(parts_.rank)].size();
}

// Fills `piece` with this rank's own nodes (numbered within its box), then (output_piece_size)
// the other nodes of its VTK piece in the piece's order, which the ranks holding them send
// (collective; with slabs, the next rank's first plane).
void Simulation::copy_output_piece(std::span<double> piece) const {
    const Grid& grid = *spec_.grid;
    const Box& own = parts_.owned;
    const auto owned = piece.first(static_cast<std::size_t>(own.size()));
    // A copy that fails on this rank alone still takes part in the exchange below, which its
    // neighbours wait in; its failure is raised after it (and agreed by the caller).
    std::exception_ptr copy_failure;
    try {
        integrator_->copy_state(owned);
    } catch (...) {
        copy_failure = std::current_exception();
    }
    if (!parts_.distributed() || !spec_.output.vtk) {
        if (copy_failure) std::rethrow_exception(copy_failure);
        return;
    }
    const std::vector<Box> pieces = parts_.output_pieces(grid);
    const Box& mine = pieces[static_cast<std::size_t>(parts_.rank)];
    // To each rank, this rank's nodes in its piece; from each, its nodes in this rank's piece:
    // boxes, in their order.
    std::vector<std::vector<double>> to(static_cast<std::size_t>(parts_.ranks)),
        from(static_cast<std::size_t>(parts_.ranks));
    std::vector<solvers::Message> sends, receives;
    const auto bytes = [](std::vector<double>& values) {
        return std::as_writable_bytes(std::span(values));
    };
    for (int q = 0; q < parts_.ranks; ++q) {
        if (q == parts_.rank) continue;
        const auto r = static_cast<std::size_t>(q);
        const Box sent = intersection(pieces[r], own);
        for (std::int64_t n = 0; n < sent.size(); ++n) {
            const auto [i, j, k] = sent.node(n);
            to[r].push_back(owned[static_cast<std::size_t>(own.index(i, j, k))]);
        }
        from[r].resize(static_cast<std::size_t>(intersection(mine, parts_.box_of(grid, q)).size()));
        if (!to[r].empty()) sends.push_back({q, bytes(to[r])});
        if (!from[r].empty()) receives.push_back({q, bytes(from[r])});
    }
    options_.ranks->start_exchange(sends, receives)->finish();
    for (int q = 0; q < parts_.ranks; ++q) {
        if (q == parts_.rank) continue;
        const Box got = intersection(mine, parts_.box_of(grid, q));
        for (std::int64_t n = 0; n < got.size(); ++n) {
            const auto [i, j, k] = got.node(n);
            piece[static_cast<std::size_t>(Decomposition::piece_value_index(mine, own, i, j, k))] =
                from[static_cast<std::size_t>(q)][static_cast<std::size_t>(n)];
        }
    }
    if (copy_failure) std::rethrow_exception(copy_failure);
}

RunSummary Simulation::run() {
    RunSummary summary;
    const auto start = std::chrono::steady_clock::now();
    const double data_seconds_before = integrator_->data_seconds();
    // The run file's set-up phases are rank 0's, on every rank (its header's; the writers'
    // collective writes take the same text from each).
    const SetupPhases written = rank_zero_phases(*options_.ranks, setup_);
    // Rank 0 alone opens the outputs: the others learn here whether it could.
    Outputs outputs = agreeing(*options_.ranks, [&] { return open_outputs(written); });
    // Called where a failure ends the run: one of this rank's alone (not agreed) leaves the
    // writers as they are, never closed: closing them is collective, and the other ranks may be
    // waiting in the solver's collectives; the program ends every rank once it is reported
    // (Communicator::abort).
    const auto abandon_outputs_on_lone_failure = [&] {
        if (options_.ranks->size() == 1 || !outputs.pipeline) return;
        try {
            throw;
        } catch (const AgreedFailure&) {
            return;
        } catch (...) {
            if (agreed_on(std::current_exception())) return;
        }
        [[maybe_unused]] auto* abandoned = outputs.pipeline.release();
    };
    // The copy into the pipeline's host buffer (pinned on CUDA) synchronises with the device and
    // is the loop's whole cost of an output step; the writer threads take it from there.
    // Over several ranks every rank hands its own piece to its writers (the ranks agree on
    // the steps and on which outputs already hold the first one).
    auto submit = [&](StepStatistics statistics, bool vtk, bool hdf5) {
        const auto handover = std::chrono::steady_clock::now();
        if (!outputs.pipeline || !(vtk || hdf5)) return;
        agree_on_outputs(*options_.ranks, *outputs.pipeline, [&] {
            outputs.pipeline->submit(
                {integrator_->step(), time(), std::move(statistics), vtk, hdf5},
                [&](std::span<double> u) { copy_output_piece(u); });
        });
        summary.output_handover_seconds += seconds_since(handover);
    };
    // The run's time includes waiting for the writers to finish.
    auto finish = [&] {
        const auto wait = std::chrono::steady_clock::now();
        if (outputs.pipeline) {
            agree_on_outputs(*options_.ranks, *outputs.pipeline,
                             [&] { outputs.pipeline->finish(); });
        }
        summary.output_wait_seconds = seconds_since(wait);
        summary.seconds = seconds_since(start);
        summary.data_seconds = integrator_->data_seconds() - data_seconds_before;
    };
    auto check = [&](const std::optional<solvers::SolveReport>& report, std::int64_t step) {
        if (!report) return;
        if (report->removed_constant) {
            summary.removed_constant =
                std::max(summary.removed_constant.value_or(0.0), *report->removed_constant);
        }
        summary.total_iterations += report->total_iterations();
        summary.solver_seconds += report->seconds;
        summary.solver_communication += report->communication;
        summary.max_iterations = std::max(summary.max_iterations, report->total_iterations());
        summary.fallbacks += static_cast<std::int64_t>(report->attempts.size()) - 1;
        if (report->converged()) return;
        std::string attempts;
        for (const auto& attempt : report->attempts) {
            attempts += "; " + attempt.step.name() + ": " + attempt.result.summary();
        }
        throw SolveFailure("step " + std::to_string(step) + " (t = " + std::to_string(time()) +
                           "): the linear solve did not converge" + attempts +
                           "; outputs up to the previous written step are complete");
    };
    if (spec_.time.steady()) {
        const auto report = [&] {
            try {
                return placing_input_errors(spec_, [&] { return integrator_->advance(); });
            } catch (...) {
                abandon_outputs_on_lone_failure();
                throw;
            }
        }();
        check(report, 0);
        summary.steps = 1;
        submit(statistics_of(report), true, true);
        finish();
        return summary;
    }
    submit(restart_ ? restart_->statistics : initial_statistics(), outputs.first_vtk,
           outputs.first_hdf5);
    ProgressReporter progress(
        spec_.time.steps, ProgressReporter::mode_for_stderr(options_.quiet || parts_.rank != 0));
    // A stop asked by signal, taken between steps. Over several ranks each rank may receive it
    // at another step: they agree after every step (the largest signal number any received),
    // so that all stop after the same one.
    std::optional<StopSignals> signals;
    if (options_.stop_on_signals) signals.emplace(!options_.quiet && parts_.rank == 0);
    const solvers::Communicator& ranks = *options_.ranks;
    const auto stop_asked = [&] {
        const int received = signals->received();
        return ranks.size() == 1 ? received : static_cast<int>(ranks.max(received));
    };
    try {
        for (std::int64_t step = integrator_->step() + 1; step <= spec_.time.steps; ++step) {
            const StepOfRun at{step, restart_ ? restart_->step : 0, outputs.pipeline != nullptr};
            const auto report = computing_step(spec_, at, [&] { return integrator_->advance(); });
            summary.steps += 1;
            check(report, step);
            if (options_.after_step) options_.after_step();
            progress.update(step, time(), report ? report->total_iterations() : 0);
            const int stop = signals ? stop_asked() : 0;
            // The step a stop ends on is written too: the outputs' last step is the run's.
            if (step % spec_.output.every == 0 || step == spec_.time.steps || stop != 0) {
                submit(statistics_of(report), true, true);
            }
            // (A stop asked at the last step changes nothing: the run ends there anyway.)
            if (stop != 0 && step < spec_.time.steps) {
                summary.stopped_by = stop;
                break;
            }
        }
    } catch (...) {
        progress.finish();
        abandon_outputs_on_lone_failure();
        throw;
    }
    progress.finish();
    finish();
    return summary;
}

}  // namespace simrun::framework

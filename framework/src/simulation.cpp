#include "simrun/framework/simulation.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "simrun/framework/field.hpp"
#include "simrun/framework/hdf5_run_writer.hpp"
#include "simrun/framework/input_error.hpp"
#include "simrun/framework/progress.hpp"
#include "simrun/framework/vtk_series_writer.hpp"

namespace simrun::framework {

struct Simulation::Writers {
    std::unique_ptr<VtkSeriesWriter> vtk;
    std::unique_ptr<Hdf5RunWriter> hdf5;
};

namespace {

std::string decisions_text(const TimeIntegrator& integrator, const solvers::Backend& backend,
                           const RunSpec& spec) {
    std::string text = "backend = " + std::string(solvers::to_string(backend.kind())) + " (" +
                       backend.description() + ")\nscheme = " + spec.time.scheme +
                       "\nboundary = " + spec.boundary->describe() + "\n";
    for (const auto& note : spec.problem->notes(*spec.grid)) text += "note = " + note + "\n";
    const solvers::SolverPlan* plan_pointer = integrator.plan();
    if (plan_pointer == nullptr) return text + "solver = none (explicit scheme)\n";
    const solvers::SolverPlan& plan = *plan_pointer;
    text += "method = " + solvers::to_string(plan.first.method) +
            "\npreconditioner = " + solvers::to_string(plan.first.preconditioner) +
            "\nformat = " + std::string(solvers::to_string(plan.format)) +
            "\nreason = " + plan.first.reason + "\nformat_reason = " + plan.format_reason + "\n";
    for (const auto& fallback : plan.fallbacks) {
        text += "fallback = " + fallback.name() + ": " + fallback.reason + "\n";
    }
    return text;
}

}  // namespace

Simulation::Simulation(RunSpec spec, const RunOptions& options)
    : spec_(std::move(spec)), options_(options), writers_(std::make_unique<Writers>()) {
    if (options_.output_directory) spec_.output.directory = *options_.output_directory;
    backend_ = solvers::make_backend(options_.backend);
    integrator_ = make_time_integrator(*spec_.grid, *spec_.problem, *spec_.boundary, spec_.time,
                                       spec_.solver, backend_);
    std::vector<double> u(static_cast<std::size_t>(spec_.grid->num_points()), 0.0);
    if (!spec_.time.steady()) spec_.problem->initial_condition(*spec_.grid, u);
    for (std::size_t i = 0; i < u.size(); ++i) {
        if (!std::isfinite(u[i])) {
            throw InputError("key 'problem.initial': the initial condition is not finite at node " +
                             std::to_string(i) + " (value " + std::to_string(u[i]) + ")");
        }
    }
    integrator_->set_state(u, 0);
}

Simulation::~Simulation() = default;

std::vector<double> Simulation::field() const {
    std::vector<double> u(static_cast<std::size_t>(spec_.grid->num_points()));
    integrator_->copy_state(u);
    return u;
}

std::filesystem::path Simulation::pvd_path() const {
    return writers_->vtk ? writers_->vtk->pvd_path() : std::filesystem::path{};
}

std::filesystem::path Simulation::h5_path() const {
    return writers_->hdf5 ? writers_->hdf5->h5_path() : std::filesystem::path{};
}

void Simulation::write(std::int64_t step, const solvers::SolveReport* report) {
    if (!options_.write_output) return;
    const std::vector<double> u = field();
    const FieldView fields[] = {{"u", u}};
    if (writers_->vtk) writers_->vtk->write_step(step, time(), fields);
    if (writers_->hdf5) {
        StepStatistics statistics{0, 0.0, "initial"};
        if (report != nullptr) {
            statistics = {report->total_iterations(), report->result().relative_residual(),
                          std::string(solvers::to_string(report->result().status))};
        }
        writers_->hdf5->write_step(step, time(), fields, statistics);
    }
}

RunSummary Simulation::run() {
    const OutputParameters& output = spec_.output;
    if (options_.write_output) {
        if (output.vtk) {
            writers_->vtk =
                std::make_unique<VtkSeriesWriter>(output.directory, output.basename, *spec_.grid);
        }
        if (output.hdf5) {
            std::filesystem::create_directories(output.directory);
            writers_->hdf5 = std::make_unique<Hdf5RunWriter>(
                output.directory / (output.basename + ".h5"), *spec_.grid, spec_.effective_input,
                decisions_text(*integrator_, *backend_, spec_));
        }
    }
    RunSummary summary;
    const auto start = std::chrono::steady_clock::now();
    auto check = [&](const std::optional<solvers::SolveReport>& report, std::int64_t step) {
        if (!report) return;
        summary.total_iterations += report->total_iterations();
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
        const auto report = integrator_->advance();
        check(report, 0);
        summary.steps = 1;
        write(0, report ? &*report : nullptr);
        summary.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return summary;
    }
    write(integrator_->step(), nullptr);
    ProgressReporter progress(spec_.time.steps, ProgressReporter::mode_for_stderr(options_.quiet));
    for (std::int64_t step = integrator_->step() + 1; step <= spec_.time.steps; ++step) {
        const auto report = integrator_->advance();
        summary.steps += 1;
        try {
            check(report, step);
        } catch (...) {
            progress.finish();
            throw;
        }
        progress.update(step, time(), report ? report->total_iterations() : 0);
        if (step % output.every == 0 || step == spec_.time.steps) {
            write(step, report ? &*report : nullptr);
        }
    }
    progress.finish();
    summary.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return summary;
}

}  // namespace simrun::framework

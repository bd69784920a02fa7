#pragma once
// A run: sets up the time integrator on a back-end, loops over the steps with progress,
// writes the output cadence (VTK series + HDF5/XDMF), and summarises.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "simrun/framework/run_spec.hpp"
#include "simrun/framework/time_integrator.hpp"
#include "simrun/solvers/backend.hpp"

namespace simrun::framework {

// A step's solve did not converge: the run stops (exit code 1); steps written before stay valid.
class SolveFailure : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct RunOptions {
    solvers::BackendChoice backend = solvers::BackendChoice::automatic;
    std::optional<std::filesystem::path> output_directory;  // overrides [output] directory
    bool quiet = false;
    bool write_output = true;
};

struct RunSummary {
    std::int64_t steps = 0;
    std::int64_t total_iterations = 0;
    std::int64_t max_iterations = 0;
    std::int64_t fallbacks = 0;  // steps whose first method failed and a fallback was used
    double seconds = 0.0;
    double mean_iterations() const {
        return steps > 0 ? static_cast<double>(total_iterations) / static_cast<double>(steps) : 0;
    }
    double seconds_per_step() const { return steps > 0 ? seconds / static_cast<double>(steps) : 0; }
};

class Simulation {
public:
    // Builds the back-end, assembles the operator and sets the initial condition. Throws
    // InputError when the initial condition is not finite, solvers::Error when the back-end is
    // unavailable, std::invalid_argument when the solver cannot handle the matrix.
    Simulation(RunSpec spec, const RunOptions& options);
    ~Simulation();

    // Runs to the end time (steady: solves once and writes the solution as step 0). Throws
    // SolveFailure when a step's solve does not converge.
    RunSummary run();

    const RunSpec& spec() const { return spec_; }
    const Grid& grid() const { return *spec_.grid; }
    const solvers::Backend& backend() const { return *backend_; }
    const TimeIntegrator& integrator() const { return *integrator_; }
    double time() const { return integrator_->time(); }
    std::vector<double> field() const;
    // Where the outputs went (empty paths when output is off).
    std::filesystem::path pvd_path() const;
    std::filesystem::path h5_path() const;

private:
    struct Writers;
    void write(std::int64_t step, const solvers::SolveReport* report);

    RunSpec spec_;
    RunOptions options_;
    std::shared_ptr<const solvers::Backend> backend_;
    std::unique_ptr<TimeIntegrator> integrator_;
    std::unique_ptr<Writers> writers_;
};

}  // namespace simrun::framework

#pragma once
// Where a run's set-up went, phase by phase: the header's set-up line and the run file's
// solver_decisions (setup.* keys) say it.
#include <string>

namespace simrun::framework {

// Seconds, from the start of reading the input to the Simulation made.
struct SetupPhases {
    double input = 0.0;    // reading and checking the input
    double context = 0.0;  // the CUDA back-end made: its context waited for, then the rest
    // The stencil's coefficients checked at every owned node (Problem::check_stencil), while
    // the CUDA context is made (before the back-end is waited for).
    double coefficients = 0.0;
    // NVRTC's data-term kernels, compiled or (compilation_cached) read from the disk cache
    double compilation = 0.0;
    bool compilation_cached = false;
    double assembly = 0.0;  // the operator and the system matrix (SetupTimes)
    double analysis = 0.0;  // the matrix analysis and the solver's plan
    double solver = 0.0;    // the solver's set-up (uploads, a multigrid hierarchy)
    // The integrator's making less the phases above: the step's data term prepared (on the
    // device or on the host) and the vectors its steps use.
    double data_term = 0.0;
    // The state the run starts from: the initial condition at every node (zeros for a steady
    // solve), or the restart file's field read.
    double initial_state = 0.0;
    // TimeIntegrator::set_state: the state's Dirichlet values, the first step's data (for a
    // steady solve on the host, its right-hand side) formed and checked, the state handed to
    // the back-end.
    double first_step_data = 0.0;
    double total = 0.0;
    // The rest of `total` (the decomposition, the memory check, a CPU back-end's making): total
    // less the phases, never below zero.
    double other() const;
};

// The header's set-up line after "set-up   ", e.g. "1.143 s: input 0.001 s, context 0.212 s,
// coefficient check 0.031 s, compilation 0.004 s (cached), assembly 0.143 s, matrix analysis
// 0.070 s, solver set-up 0.617 s, data term 0.002 s, initial state 0.021 s, first step's data
// 0.040 s, other 0.002 s". Assembly, matrix analysis and solver set-up always appear; the
// others where they are not zero at the printed precision (a CPU run names neither context
// nor compilation).
std::string describe_setup(const SetupPhases& phases);

// The phases as "key = value" lines for the run file's solver_decisions: setup.total,
// setup.input, setup.context, setup.coefficients, setup.compilation,
// setup.compilation_cached (true or false), setup.assembly, setup.analysis, setup.solver,
// setup.data_term, setup.initial_state, setup.first_step_data and setup.other, in seconds to
// the microsecond; every phase is written, zero or not, and they add up to setup.total (to the
// rounding).
std::string setup_decisions(const SetupPhases& phases);

}  // namespace simrun::framework

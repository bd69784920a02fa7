#pragma once
// Where a run's set-up went, phase by phase: the header's set-up line and the run file's
// solver_decisions (setup.* keys) say it.
#include <string>

namespace simrun::framework {

// Seconds, from the start of reading the input to the Simulation made.
struct SetupPhases {
    double input = 0.0;    // reading and checking the input
    double context = 0.0;  // the CUDA back-end made: its context waited for, then the rest
    // NVRTC's data-term kernels, compiled or (compilation_cached) read from the disk cache
    double compilation = 0.0;
    bool compilation_cached = false;
    double assembly = 0.0;  // the operator and the system matrix (SetupTimes)
    double analysis = 0.0;  // the matrix analysis and the solver's plan
    double solver = 0.0;    // the solver's set-up (uploads, a multigrid hierarchy)
    double total = 0.0;
    // The rest of `total` (the decomposition, a restart file, the initial condition, the first
    // step's data checked): total less the phases, never below zero.
    double other() const;
};

// The header's set-up line after "set-up   ", e.g. "1.143 s: input 0.001 s, context 0.212 s,
// compilation 0.004 s (cached), assembly 0.143 s, matrix analysis 0.070 s, solver set-up
// 0.617 s, other 0.002 s". Context, compilation and other appear where they are not zero at
// the printed precision (a CPU run names neither context nor compilation).
std::string describe_setup(const SetupPhases& phases);

// The phases as "key = value" lines for the run file's solver_decisions: setup.total,
// setup.input, setup.context, setup.compilation, setup.compilation_cached (true or false),
// setup.assembly, setup.analysis, setup.solver and setup.other, in seconds to the microsecond;
// every phase is written, zero or not, and they add up to setup.total (to the rounding).
std::string setup_decisions(const SetupPhases& phases);

}  // namespace simrun::framework

#pragma once
// A run asked to stop (Ctrl-C: SIGINT; a batch system's time limit, `kill`, mpirun passing
// either on: SIGTERM) ends between two time steps rather than wherever the signal finds it:
// the step in progress is finished and written, the writers finish, and the outputs end on a
// whole step from which `--restart` continues. While a StopSignals lives, the first of either
// signal is only recorded (its handler is async-signal-safe: it stores the number and may write
// one line); a second of either ends the process as the signal would have without one (the
// handler resets both when it runs). One at a time: the process's handlers are global.
#include <string>

namespace simrun::framework {

class StopSignals {
public:
    // `announce`: the handler writes a line to stderr saying the run stops after its step (one
    // rank of several says it).
    explicit StopSignals(bool announce);
    ~StopSignals();  // the dispositions found are restored
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

    // The signal received (SIGINT or SIGTERM), 0 while none has been.
    int received() const;
};

// "SIGINT", "SIGTERM", else "signal N".
std::string signal_name(int signal);

}  // namespace simrun::framework

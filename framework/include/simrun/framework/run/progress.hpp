#pragma once
// Progress of a run on standard error: a bar with ETA on a terminal, plain log lines (about
// every 10% of the run) otherwise, nothing when quiet.
#include <chrono>
#include <cstdint>
#include <cstdio>

namespace simrun::framework {

class ProgressReporter {
public:
    enum class Mode { bar, lines, quiet };
    // mode_for_stderr(): bar when stderr is a terminal, lines otherwise.
    static Mode mode_for_stderr(bool quiet);

    ProgressReporter(std::int64_t total_steps, Mode mode, std::FILE* stream = stderr);
    // After step `step` (1-based) reaching time t with the solve's iteration count.
    void update(std::int64_t step, double t, std::int64_t iterations);
    // Ends the bar's line.
    void finish();

private:
    std::int64_t total_;
    Mode mode_;
    std::FILE* stream_;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_draw_;
    std::int64_t next_line_step_ = 0;
};

}  // namespace simrun::framework

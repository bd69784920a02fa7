#include "simrun/framework/run/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <string>

namespace simrun::framework {

ProgressReporter::Mode ProgressReporter::mode_for_stderr(bool quiet) {
    if (quiet) return Mode::quiet;
    return isatty(STDERR_FILENO) ? Mode::bar : Mode::lines;
}

ProgressReporter::ProgressReporter(std::int64_t total_steps, Mode mode, std::FILE* stream)
    : total_(std::max<std::int64_t>(total_steps, 1)),
      mode_(mode),
      stream_(stream),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void ProgressReporter::update(std::int64_t step, double t, std::int64_t iterations) {
    if (mode_ == Mode::quiet) return;
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double fraction = static_cast<double>(step) / static_cast<double>(total_);
    const double eta = step > 0 ? elapsed * (1.0 - fraction) / fraction : 0.0;
    if (mode_ == Mode::bar) {
        if (step != total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
        last_draw_ = now;
        constexpr int width = 30;
        const int filled = static_cast<int>(fraction * width);
        const std::string bar = std::string(static_cast<std::size_t>(filled), '#') +
                                std::string(static_cast<std::size_t>(width - filled), '.');
        std::fprintf(stream_, "\r[%s] %3.0f%%  step %lld/%lld  t = %-10.4g  %4lld its  ETA %5.1fs ",
                     bar.c_str(), 100.0 * fraction, static_cast<long long>(step),
                     static_cast<long long>(total_), t, static_cast<long long>(iterations), eta);
        std::fflush(stream_);
        return;
    }
    if (step < next_line_step_ && step != total_) return;
    next_line_step_ = step + std::max<std::int64_t>(total_ / 10, 1);
    std::fprintf(stream_,
                 "step %lld/%lld  t = %.6g  solver iterations %lld  elapsed %.2fs  ETA %.2fs\n",
                 static_cast<long long>(step), static_cast<long long>(total_), t,
                 static_cast<long long>(iterations), elapsed, eta);
}

void ProgressReporter::finish() {
    if (mode_ == Mode::bar) std::fprintf(stream_, "\n");
}

}  // namespace simrun::framework

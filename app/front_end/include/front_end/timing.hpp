#pragma once
// The clock both front ends time a run's and a solve's phases with (wall time, steady).
#include <chrono>

namespace simrun::front_end {

using Clock = std::chrono::steady_clock;

// Seconds from `start` to now.
inline double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace simrun::front_end

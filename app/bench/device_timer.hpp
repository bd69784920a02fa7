#pragma once
// DeviceTimer: the time the work issued to one back-end between start() and stop_seconds()
// took, measured the same way for every caller (the benchmark harness times simrun's solvers
// and the cuSPARSE baseline with it). On a CUDA back-end: two cudaEvents recorded on the
// back-end's stream, so the time is the device's, not the host's launch loop. On the CPU: the
// host's steady clock, after the back-end has finished earlier work (synchronize()).
//
// Placement: the CPU clock is header-only (below); the CUDA clock is in device_timer_cuda.cpp,
// and a build without CUDA gets the stub in device_timer_stub.cpp (unreachable: such a build
// cannot make a CUDA back-end).
#include <chrono>
#include <memory>

#include "simrun/solvers/base/backend.hpp"

namespace simrun::solvers {

class DeviceTimer {
public:
    // One back-end's clock. start() marks the beginning of the work issued after it;
    // stop_seconds() waits for that work to finish and returns its duration in seconds.
    class Clock {
    public:
        virtual ~Clock() = default;
        virtual void start() = 0;
        virtual double stop_seconds() = 0;
    };

    // The back-end must outlive the timer. Throws CudaError when an event cannot be created.
    explicit DeviceTimer(const Backend& backend);

    void start() { clock_->start(); }
    // Seconds since start(), after all work issued to the back-end since then has finished.
    // Throws CudaError when the device reports an error.
    double stop_seconds() { return clock_->stop_seconds(); }

private:
    std::unique_ptr<Clock> clock_;
};

namespace detail {

// The host's steady clock around work that the back-end finishes before synchronize() returns.
class HostClock final : public DeviceTimer::Clock {
public:
    explicit HostClock(const Backend& backend) : backend_(backend) {}
    void start() override {
        backend_.synchronize();
        start_ = std::chrono::steady_clock::now();
    }
    double stop_seconds() override {
        backend_.synchronize();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

private:
    const Backend& backend_;
    std::chrono::steady_clock::time_point start_;
};

// cudaEvents on the CUDA back-end's stream (device_timer_cuda.cpp). Throws NotCompiled in a
// build without CUDA.
std::unique_ptr<DeviceTimer::Clock> make_cuda_event_clock(const Backend& backend);

}  // namespace detail

inline DeviceTimer::DeviceTimer(const Backend& backend)
    : clock_(backend.kind() == BackendKind::cuda ? detail::make_cuda_event_clock(backend)
                                                 : std::make_unique<detail::HostClock>(backend)) {}

}  // namespace simrun::solvers

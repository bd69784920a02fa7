// DeviceTimer's CUDA clock: two cudaEvents on the CUDA back-end's stream, reached through the
// solver layer's public interop (cuda_interop.hpp). Needs the CUDA runtime alone, which the
// solver layer links already.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "device_timer.hpp"
#include "simrun/solvers/base/cuda_interop.hpp"
#include "simrun/solvers/base/errors.hpp"

namespace simrun::solvers {
namespace {

// Throws CudaError naming `call` and CUDA's message where `status` is not cudaSuccess.
void check(cudaError_t status, const char* call) {
    if (status != cudaSuccess) {
        throw CudaError(std::string(call) +
                        " failed in DeviceTimer's CUDA clock: " + cudaGetErrorString(status));
    }
}

class CudaEventClock final : public DeviceTimer::Clock {
public:
    explicit CudaEventClock(const Backend& backend) : stream_(cuda_stream(backend)) {
        check(cudaEventCreate(&begin_), "cudaEventCreate");
        check(cudaEventCreate(&end_), "cudaEventCreate");
    }
    ~CudaEventClock() override {
        // Errors at teardown cannot be reported.
        cudaEventDestroy(end_);
        cudaEventDestroy(begin_);
    }
    CudaEventClock(const CudaEventClock&) = delete;
    CudaEventClock& operator=(const CudaEventClock&) = delete;

    void start() override { check(cudaEventRecord(begin_, stream_), "cudaEventRecord"); }
    double stop_seconds() override {
        check(cudaEventRecord(end_, stream_), "cudaEventRecord");
        check(cudaEventSynchronize(end_), "cudaEventSynchronize");
        float milliseconds = 0.0f;
        check(cudaEventElapsedTime(&milliseconds, begin_, end_), "cudaEventElapsedTime");
        return 1e-3 * static_cast<double>(milliseconds);
    }

private:
    cudaStream_t stream_;
    cudaEvent_t begin_ = nullptr;
    cudaEvent_t end_ = nullptr;
};

}  // namespace

namespace detail {

std::unique_ptr<DeviceTimer::Clock> make_cuda_event_clock(const Backend& backend) {
    if (backend.kind() != BackendKind::cuda) {
        throw std::invalid_argument("make_cuda_event_clock: the back-end is not CUDA");
    }
    return std::make_unique<CudaEventClock>(backend);
}

}  // namespace detail
}  // namespace simrun::solvers

// DeviceTimer's CUDA clock in a build without nvcc: it reports that CUDA was not compiled (no
// CUDA back-end can exist in such a build, so the harness never reaches it), and the program
// links everywhere.
#include "device_timer.hpp"
#include "simrun/solvers/base/errors.hpp"

namespace simrun::solvers::detail {

std::unique_ptr<DeviceTimer::Clock> make_cuda_event_clock(const Backend&) {
    throw NotCompiled("CUDA");
}

}  // namespace simrun::solvers::detail

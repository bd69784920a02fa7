// The CUDA back-end of a build without nvcc (and its interop): it reports that it was not
// compiled.
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/cuda_interop.hpp"
#include "simrun/solvers/base/errors.hpp"

namespace simrun::solvers {

std::shared_ptr<const Backend> make_cuda_backend(int, std::shared_ptr<const Communicator>) {
    throw NotCompiled("CUDA");
}
int cuda_device_count() { return 0; }
bool cuda_compiled() { return false; }
CudaStream cuda_stream(const Backend&) { throw NotCompiled("CUDA"); }
int cuda_device(const Backend&) { throw NotCompiled("CUDA"); }

}  // namespace simrun::solvers

// The CUDA back-end of a build without nvcc: it reports that it was not compiled.
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/errors.hpp"

namespace simrun::solvers {

std::shared_ptr<const Backend> make_cuda_backend(int, std::shared_ptr<const Communicator>) {
    throw NotCompiled("CUDA");
}
int cuda_device_count() { return 0; }
bool cuda_compiled() { return false; }

}  // namespace simrun::solvers

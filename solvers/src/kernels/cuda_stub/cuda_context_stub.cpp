// open_cuda_context (base/backend_preparation.hpp) in a build without CUDA: there is none.
#include "simrun/solvers/base/backend_preparation.hpp"

namespace simrun::solvers {

bool open_cuda_context(int) { return false; }

}  // namespace simrun::solvers

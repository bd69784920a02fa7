// open_cuda_context (base/backend_preparation.hpp) for the CUDA back-end.
#include <cuda_runtime_api.h>

#include "simrun/solvers/base/backend_preparation.hpp"

namespace simrun::solvers {

bool open_cuda_context(int host_rank) {
    int count = 0;
    bool opened = cudaGetDeviceCount(&count) == cudaSuccess && count > 0 &&
                  cudaSetDevice(host_rank % count) == cudaSuccess;
    // cudaFree(nullptr) frees nothing and makes the device's primary context: the runtime keeps
    // it, and the back-end's own calls on any thread take it up.
    opened = opened && cudaFree(nullptr) == cudaSuccess;
    cudaGetLastError();  // this thread's error, if any, is the back-end's to meet and report
    return opened;
}

}  // namespace simrun::solvers

#pragma once
// SIMRUN_CUDA_CHECK(call): throws CudaError naming the call, the place and CUDA's message.
#include <cuda_runtime_api.h>

#include <string>

#include "simrun/solvers/base/errors.hpp"

#define SIMRUN_CUDA_CHECK(call)                                                                \
    do {                                                                                       \
        const cudaError_t simrun_cuda_status = (call);                                         \
        if (simrun_cuda_status != cudaSuccess) {                                               \
            throw ::simrun::solvers::CudaError(std::string(#call) + " failed at " + __FILE__ + \
                                               ":" + std::to_string(__LINE__) + ": " +         \
                                               cudaGetErrorString(simrun_cuda_status));        \
        }                                                                                      \
    } while (0)

// After a kernel launch: checks the launch itself (configuration, missing device code).
#define SIMRUN_CUDA_CHECK_LAUNCH(kernel_name) SIMRUN_CUDA_CHECK(cudaGetLastError())

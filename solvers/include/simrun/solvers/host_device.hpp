#pragma once
// SIMRUN_HOST_DEVICE marks functions (and lambdas) that run on the host and, when compiled by
// nvcc, on the GPU: element-wise kernels and stencil coefficients are written once with it.
#if defined(__CUDACC__)
#define SIMRUN_HOST_DEVICE __host__ __device__
#else
#define SIMRUN_HOST_DEVICE
#endif

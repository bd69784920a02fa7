#pragma once
// SIMRUN_HOST_DEVICE marks functions (and lambdas) that run on the host and, when compiled by
// nvcc, on the GPU: element-wise kernels and stencil coefficients are written once with it.
#if defined(__CUDACC__)
#define SIMRUN_HOST_DEVICE __host__ __device__
#else
#define SIMRUN_HOST_DEVICE
#endif

// Unrolls the loop that follows (fixed trip counts): on the GPU, and on the host when GCC
// compiles it directly (nvcc's host pass takes neither pragma).
#if defined(__CUDA_ARCH__)
#define SIMRUN_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define SIMRUN_UNROLL
#elif defined(__GNUC__) && !defined(__clang__)
#define SIMRUN_UNROLL _Pragma("GCC unroll 16")
#else
#define SIMRUN_UNROLL
#endif

#pragma once
// Math the unified kernels need on the host and on the GPU, under one name.
#include <cmath>

#include "simrun/solvers/base/host_device.hpp"

namespace simrun::solvers {

template <typename T>
SIMRUN_HOST_DEVICE inline bool is_finite(T value) {
#if defined(__CUDA_ARCH__)
    return isfinite(value);
#else
    return std::isfinite(value);
#endif
}

template <typename T>
SIMRUN_HOST_DEVICE inline T square_root(T value) {
#if defined(__CUDA_ARCH__)
    return sqrt(value);
#else
    return std::sqrt(value);
#endif
}

}  // namespace simrun::solvers

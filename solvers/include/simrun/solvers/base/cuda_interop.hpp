#pragma once
// What a program linking simrun::solvers needs to run CUDA work of its own (a vendor library,
// its own kernels) beside a CUDA back-end: the stream on which the back-end orders every kernel
// and copy, its device, and the device pointers of its arrays. Work issued on that stream runs
// in order with the back-end's, so it may read and write an Array between the back-end's steps.
// No CUDA header is needed here: a CudaStream is CUDA's cudaStream_t (both `CUstream_st*`).
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"

struct CUstream_st;  // CUDA's opaque stream

namespace simrun::solvers {

// cudaStream_t, named without CUDA's headers.
using CudaStream = CUstream_st*;

// The stream on which `backend` orders all its work. Throws std::invalid_argument where
// `backend` is not a CUDA back-end, NotCompiled in a build without CUDA.
CudaStream cuda_stream(const Backend& backend);
// The device `backend` runs on and holds its memory on, as cudaSetDevice numbers it. Throws as
// cuda_stream.
int cuda_device(const Backend& backend);

// The device pointer of `array`'s values (null where it holds none), on cuda_device of its
// back-end, for work issued on cuda_stream (or after waiting for it: the memory is the stream's,
// allocated and freed in its order, and may serve another array as soon as this one goes).
// Throws as cuda_stream.
template <typename T>
T* cuda_pointer(Array<T>& array) {
    static_cast<void>(cuda_stream(array.backend()));
    return array.data();
}
template <typename T>
const T* cuda_pointer(const Array<T>& array) {
    static_cast<void>(cuda_stream(array.backend()));
    return array.data();
}

}  // namespace simrun::solvers

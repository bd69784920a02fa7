#pragma once
// Kernels compiled while the program runs, from source text made for the problem at hand (the
// framework's expressions): on CUDA by NVRTC, loaded into the back-end's device and launched on
// its stream. A back-end that cannot (the CPU, a machine without NVRTC, a source NVRTC refuses)
// says why, and its caller runs its own host code instead.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace simrun::solvers {

// The language of the source a back-end's compile_kernels takes (Backend::kernel_dialect).
enum class KernelDialect {
    none,      // compiles nothing: its callers run their host code (the CPU back-end)
    cuda_cpp,  // CUDA C++ with extern "C" __global__ kernels, compiled by NVRTC (CUDA)
};

class RuntimeKernel {
public:
    virtual ~RuntimeKernel() = default;
    // Launches the kernel over `threads` threads (blocks of runtime_kernel_block of them, so
    // the kernel tests its index against its own bound), asynchronously on the back-end's
    // stream. The kernel takes one parameter, a struct by value: `parameters` points to its
    // bytes, copied at the launch. Throws CudaError where the launch fails.
    virtual void launch(std::size_t threads, const void* parameters) const = 0;
};

inline constexpr int runtime_kernel_block = 256;

// What Backend::compile_kernels gives: one kernel per name asked for, or none and the reason.
struct RuntimeCompilation {
    std::vector<std::shared_ptr<const RuntimeKernel>> kernels;  // empty where it failed
    // Why it failed, or how it was compiled ("compiled by NVRTC 13.0 for sm_90").
    std::string note;
    double seconds = 0.0;  // spent compiling (0 when the source was compiled before)
    bool cached = false;   // the program was read from the disk cache, not compiled
    bool compiled() const { return !kernels.empty(); }
};

}  // namespace simrun::solvers

#pragma once
// The CUDA back-end: one device, one stream on which every kernel and copy is ordered, and a
// small workspace for deterministic two-pass reductions.
#include <cuda_runtime_api.h>

#include "simrun/solvers/backend.hpp"

namespace simrun::solvers::cuda {

// Reductions use at most this many partial sums (one per block of the first pass).
constexpr int max_reduction_blocks = 1024;

class CudaBackend final : public Backend {
public:
    explicit CudaBackend(int device);
    ~CudaBackend() override;

    BackendKind kind() const override { return BackendKind::cuda; }
    std::string description() const override;
    void* allocate(std::size_t bytes) const override;
    void release(void* pointer) const noexcept override;
    void copy_from_host(void* destination, const void* source, std::size_t bytes) const override;
    void copy_to_host(void* destination, const void* source, std::size_t bytes) const override;
    void copy(void* destination, const void* source, std::size_t bytes) const override;
    void synchronize() const override;

    cudaStream_t stream() const { return stream_; }
    int device() const { return device_; }
    // Device scratch of max_reduction_blocks + 1 doubles, and one pinned host double.
    void* reduction_scratch() const { return reduction_scratch_; }
    void* host_result() const { return host_result_; }

protected:
    const KernelTable<float>& float_kernels() const override;
    const KernelTable<double>& double_kernels() const override;

private:
    int device_;
    cudaStream_t stream_ = nullptr;
    void* reduction_scratch_ = nullptr;
    void* host_result_ = nullptr;
};

template <typename T>
const KernelTable<T>& kernel_table();

inline const CudaBackend& as_cuda(const Backend& backend) {
    return static_cast<const CudaBackend&>(backend);
}

}  // namespace simrun::solvers::cuda

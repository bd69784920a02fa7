#pragma once
// The CUDA back-end: one device, one stream on which every kernel and copy is ordered, and a
// small workspace for deterministic two-pass reductions. Kernels that may run side by side
// (csr_spmv's row bins) fork onto auxiliary streams and join back before stream() goes on.
#include <cuda_runtime_api.h>

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/kernel_table.hpp"
#include "simrun/solvers/base/backend.hpp"

namespace simrun::solvers::cuda {

// Reductions use at most this many partial sums (one per block of the first pass).
constexpr int max_reduction_blocks = 1024;

class CudaBackend final : public Backend {
public:
    CudaBackend(int device, std::shared_ptr<const Communicator> communicator);
    ~CudaBackend() override;

    BackendKind kind() const override { return BackendKind::cuda; }
    std::string description() const override;
    void* allocate(std::size_t bytes) const override;
    void release(void* pointer) const noexcept override;
    void* allocate_host(std::size_t bytes) const override;
    void release_host(void* pointer) const noexcept override;
    std::optional<std::size_t> device_bytes_in_use() const override;
    void copy_from_host(void* destination, const void* source, std::size_t bytes) const override;
    void copy_to_host(void* destination, const void* source, std::size_t bytes) const override;
    void copy(void* destination, const void* source, std::size_t bytes) const override;
    void copy_to_host_async(void* destination, const void* source,
                            std::size_t bytes) const override;
    void copy_from_host_async(void* destination, const void* source,
                              std::size_t bytes) const override;
    void synchronize() const override;
    // Captures the work into a CUDA graph on stream() and instantiates it.
    std::unique_ptr<RecordedWork> record(std::function<void()> issue) const override;
    // NVRTC into a cubin for this device (runtime_compiler.cpp).
    RuntimeCompilation compile_kernels(const std::string& source,
                                       const std::vector<std::string>& names) const override;

    // Halo exchanges on the GPUs where every rank's can reach its neighbours'
    // (cuda_device_halo.cu).
    std::string halo_path() const override;
    void collect_device_halo_times() const override;
    // Device counter of the nanoseconds the device halos' waits took (null before one was
    // wanted).
    unsigned long long* halo_waited_ns() const { return halo_waited_ns_; }
    // A device halo's exported buffer, freed with the back-end (at the process's end) rather
    // than at once: a neighbour may not have closed its mapping of it yet, and CUDA leaves
    // freeing memory that another process maps undefined.
    void retire_halo_buffer(void* buffer) const { retired_halo_buffers_.push_back(buffer); }
    // The frees release() deferred while the stream was recorded, issued now.
    void free_deferred() const noexcept;

    cudaStream_t stream() const { return stream_; }
    int device() const { return device_; }
    // Device scratch of reduction_scratch_doubles: room for max_krylov_vectors + 1 sums per
    // block of a reduction's first pass (a (sum, compensation) pair per block for one dot),
    // and their totals.
    static constexpr std::size_t reduction_scratch_doubles =
        (max_krylov_vectors + 1) * std::size_t(max_reduction_blocks + 1);
    void* reduction_scratch() const { return reduction_scratch_; }
    // Copies a reduction's results (at most max_krylov_vectors + 1 doubles) from device memory
    // into the pinned result buffer on the stream, waits for them, and returns the buffer.
    const void* fetch_result(const void* device_result, std::size_t bytes) const;

    // Streams for work that may run beside stream(), created once. A fork records fork_event()
    // on stream() and makes aux_stream(k) wait on it; the join records join_event(k) on
    // aux_stream(k) and makes stream() wait on it, so stream() stays the one order of record.
    static constexpr int aux_stream_count = 2;
    cudaStream_t aux_stream(int k) const { return aux_streams_[static_cast<std::size_t>(k)]; }
    cudaEvent_t fork_event() const { return fork_event_; }
    cudaEvent_t join_event(int k) const { return join_events_[static_cast<std::size_t>(k)]; }

protected:
    DeviceHaloReadiness device_halo_readiness() const override;
    std::unique_ptr<DeviceHalo> make_device_halo(std::span<const HaloSide> sides) const override;
    const KernelTable<float>& float_kernels() const override;
    const KernelTable<double>& double_kernels() const override;

private:
    int device_;
    cudaStream_t stream_ = nullptr;
    cudaMemPool_t pool_ = nullptr;  // the back-end's own, which allocate() draws from
    // Arrays released while the stream was recorded, freed at the next allocation or at the end.
    mutable std::mutex deferred_mutex_;
    mutable std::vector<void*> deferred_frees_;
    void* reduction_scratch_ = nullptr;
    void* host_result_ = nullptr;
    std::array<cudaStream_t, aux_stream_count> aux_streams_{};
    cudaEvent_t fork_event_ = nullptr;
    std::array<cudaEvent_t, aux_stream_count> join_events_{};
    // What open_device_halo last agreed (-1 before it ran, 0 host staging, 1 on the GPUs),
    // and the halo waits' counter with the part of it already collected.
    mutable int device_halos_ = -1;
    mutable unsigned long long* halo_waited_ns_ = nullptr;
    mutable unsigned long long halo_collected_ns_ = 0;
    mutable std::vector<void*> retired_halo_buffers_;
};

template <typename T>
const KernelTable<T>& kernel_table();

inline const CudaBackend& as_cuda(const Backend& backend) {
    return static_cast<const CudaBackend&>(backend);
}

}  // namespace simrun::solvers::cuda

#include "cuda_backend.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_check.hpp"
#include "simrun/solvers/base/cuda_interop.hpp"

namespace simrun::solvers {
namespace cuda {

CudaBackend::CudaBackend(int device, std::shared_ptr<const Communicator> communicator)
    : Backend(std::move(communicator), KernelDialect::cuda_cpp), device_(device) {
    SIMRUN_CUDA_CHECK(cudaSetDevice(device_));
    SIMRUN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    SIMRUN_CUDA_CHECK(cudaMalloc(&reduction_scratch_, reduction_scratch_doubles * sizeof(double)));
    SIMRUN_CUDA_CHECK(cudaMallocHost(&host_result_, (max_krylov_vectors + 1) * sizeof(double)));
    for (auto& aux : aux_streams_) {
        SIMRUN_CUDA_CHECK(cudaStreamCreateWithFlags(&aux, cudaStreamNonBlocking));
    }
    SIMRUN_CUDA_CHECK(cudaEventCreateWithFlags(&fork_event_, cudaEventDisableTiming));
    for (auto& join : join_events_) {
        SIMRUN_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    }
    // Arrays come from a pool of the back-end's own in the stream's order, and what is freed
    // stays in it for the next allocation (no release threshold) until the back-end goes: a
    // set-up that makes and frees a few dozen arrays a level then pays neither cudaMalloc's nor
    // cudaFree's device-wide wait, and other libraries' allocations (CuPy's) are not starved by
    // a pool they share.
    cudaMemPoolProps properties{};
    properties.allocType = cudaMemAllocationTypePinned;
    properties.location.type = cudaMemLocationTypeDevice;
    properties.location.id = device_;
    SIMRUN_CUDA_CHECK(cudaMemPoolCreate(&pool_, &properties));
    std::uint64_t keep_all = ~std::uint64_t{0};
    SIMRUN_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep_all));
}

CudaBackend::~CudaBackend() {
    // Errors at teardown cannot be reported; the driver reclaims everything at exit anyway.
    for (cudaEvent_t join : join_events_) cudaEventDestroy(join);
    cudaEventDestroy(fork_event_);
    for (cudaStream_t aux : aux_streams_) cudaStreamDestroy(aux);
    cudaFreeHost(host_result_);
    cudaFree(halo_waited_ns_);
    for (void* buffer : retired_halo_buffers_) cudaFree(buffer);
    cudaFree(reduction_scratch_);
    free_deferred();
    cudaStreamSynchronize(stream_);
    cudaMemPoolDestroy(pool_);  // its memory back to the device
    cudaStreamDestroy(stream_);
}

std::string CudaBackend::description() const {
    cudaDeviceProp properties{};
    SIMRUN_CUDA_CHECK(cudaGetDeviceProperties(&properties, device_));
    return std::string(properties.name) + " (device " + std::to_string(device_) + ", sm_" +
           std::to_string(properties.major) + std::to_string(properties.minor) + ")";
}

namespace {

bool capturing(cudaStream_t stream) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    return cudaStreamIsCapturing(stream, &status) == cudaSuccess &&
           status != cudaStreamCaptureStatusNone;
}

}  // namespace

// Usable in the stream's order (every use of an array is on the stream, or after waiting
// for it); freed in the same order. Never while the stream's work is recorded (record()): the
// allocation would be a node of the graph, made at each launch.
void* CudaBackend::allocate(std::size_t bytes) const {
    if (bytes == 0) return nullptr;
    if (capturing(stream_)) {
        throw std::logic_error("CudaBackend: an array allocated while the stream is recorded");
    }
    free_deferred();
    void* pointer = nullptr;
    SIMRUN_CUDA_CHECK(cudaMallocFromPoolAsync(&pointer, bytes, pool_, stream_));
    return pointer;
}

// An array that goes while the stream is recorded is freed after the recording (a free recorded
// would run at every launch of the graph).
void CudaBackend::release(void* pointer) const noexcept {
    if (pointer == nullptr) return;
    if (capturing(stream_)) {
        const std::lock_guard lock(deferred_mutex_);
        deferred_frees_.push_back(pointer);
        return;
    }
    cudaFreeAsync(pointer, stream_);
}

void CudaBackend::free_deferred() const noexcept {
    std::vector<void*> frees;
    {
        const std::lock_guard lock(deferred_mutex_);
        frees.swap(deferred_frees_);
    }
    for (void* pointer : frees) cudaFreeAsync(pointer, stream_);
}

// Total minus free memory of the device, as the driver reports it (allocations are counted
// in its pages, so this is what they really take), less what the pool keeps of arrays freed.
std::optional<std::size_t> CudaBackend::device_bytes_in_use() const {
    synchronize();
    std::size_t free = 0, total = 0;
    SIMRUN_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    std::uint64_t reserved = 0, used = 0;
    SIMRUN_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved));
    SIMRUN_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &used));
    return total - free - static_cast<std::size_t>(reserved - used);
}

// Pinned for every context (portable), so a pipeline thread may allocate it; cudaHostAlloc
// pins each page (~1 ms per 8 MB), so the caller keeps the buffer for reuse.
void* CudaBackend::allocate_host(std::size_t bytes) const {
    SIMRUN_CUDA_CHECK(cudaSetDevice(device_));
    void* pointer = nullptr;
    SIMRUN_CUDA_CHECK(cudaHostAlloc(&pointer, bytes == 0 ? 1 : bytes, cudaHostAllocPortable));
    return pointer;
}

// cudaFreeHost waits for the device: release buffers outside the time loop.
void CudaBackend::release_host(void* pointer) const noexcept { cudaFreeHost(pointer); }

void CudaBackend::copy_from_host(void* destination, const void* source, std::size_t bytes) const {
    SIMRUN_CUDA_CHECK(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyHostToDevice, stream_));
    SIMRUN_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// Into pinned memory (allocate_host) a DMA at the bus's speed; into pageable memory the driver
// stages it through its own pinned buffer, ~2-3x slower.
void CudaBackend::copy_to_host(void* destination, const void* source, std::size_t bytes) const {
    SIMRUN_CUDA_CHECK(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToHost, stream_));
    SIMRUN_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaBackend::copy_to_host_async(void* destination, const void* source,
                                     std::size_t bytes) const {
    SIMRUN_CUDA_CHECK(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToHost, stream_));
}

void CudaBackend::copy_from_host_async(void* destination, const void* source,
                                       std::size_t bytes) const {
    SIMRUN_CUDA_CHECK(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyHostToDevice, stream_));
}

void CudaBackend::copy(void* destination, const void* source, std::size_t bytes) const {
    SIMRUN_CUDA_CHECK(
        cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToDevice, stream_));
}

const void* CudaBackend::fetch_result(const void* device_result, std::size_t bytes) const {
    if (bytes > (max_krylov_vectors + 1) * sizeof(double)) {
        throw CudaError("fetch_result: at most max_krylov_vectors + 1 doubles");
    }
    SIMRUN_CUDA_CHECK(
        cudaMemcpyAsync(host_result_, device_result, bytes, cudaMemcpyDeviceToHost, stream_));
    SIMRUN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return host_result_;
}

void CudaBackend::synchronize() const { SIMRUN_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

namespace {

// An instantiated graph, launched on the stream it was captured from.
class GraphWork final : public RecordedWork {
public:
    GraphWork(cudaGraphExec_t graph, cudaStream_t stream) : graph_(graph), stream_(stream) {}
    ~GraphWork() override { cudaGraphExecDestroy(graph_); }
    GraphWork(const GraphWork&) = delete;
    GraphWork& operator=(const GraphWork&) = delete;
    void run() const override { SIMRUN_CUDA_CHECK(cudaGraphLaunch(graph_, stream_)); }

private:
    cudaGraphExec_t graph_;
    cudaStream_t stream_;
};

}  // namespace

std::unique_ptr<RecordedWork> CudaBackend::record(std::function<void()> issue) const {
    SIMRUN_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    try {
        issue();
    } catch (...) {
        cudaGraph_t abandoned = nullptr;
        cudaStreamEndCapture(stream_, &abandoned);
        if (abandoned != nullptr) cudaGraphDestroy(abandoned);
        throw;
    }
    cudaGraph_t graph = nullptr;
    SIMRUN_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    cudaGraphExec_t executable = nullptr;
    const cudaError_t status = cudaGraphInstantiate(&executable, graph, 0);
    cudaGraphDestroy(graph);
    SIMRUN_CUDA_CHECK(status);
    return std::make_unique<GraphWork>(executable, stream_);
}

const KernelTable<float>& CudaBackend::float_kernels() const { return kernel_table<float>(); }
const KernelTable<double>& CudaBackend::double_kernels() const { return kernel_table<double>(); }

}  // namespace cuda

int cuda_device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky "no device" error
        return 0;
    }
    return count;
}

bool cuda_compiled() { return true; }

std::shared_ptr<const Backend> make_cuda_backend(int device,
                                                 std::shared_ptr<const Communicator> communicator) {
    const int count = cuda_device_count();
    if (count == 0) {
        throw DeviceUnavailable(
            "the CUDA back-end was requested but no CUDA GPU is available on this machine "
            "(cudaGetDeviceCount found none); use --backend cpu or auto");
    }
    if (device < 0 || device >= count) {
        throw DeviceUnavailable("CUDA device " + std::to_string(device) + " requested but only " +
                                std::to_string(count) + " present");
    }
    return std::make_shared<cuda::CudaBackend>(device, std::move(communicator));
}

// cuda_interop.hpp: the CUDA back-end's stream and device, for a program's own CUDA work.
static_assert(std::is_same_v<CudaStream, cudaStream_t>);

namespace {

const cuda::CudaBackend& cuda_backend_of(const Backend& backend) {
    if (backend.kind() != BackendKind::cuda) {
        throw std::invalid_argument("CUDA interop: the " + std::string(to_string(backend.kind())) +
                                    " back-end has no CUDA stream or device memory");
    }
    return cuda::as_cuda(backend);
}

}  // namespace

CudaStream cuda_stream(const Backend& backend) { return cuda_backend_of(backend).stream(); }
int cuda_device(const Backend& backend) { return cuda_backend_of(backend).device(); }

}  // namespace simrun::solvers

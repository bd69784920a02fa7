#pragma once
// A back-end owns memory and runs kernels: the CPU (OpenMP, the reference every GPU result is
// tested against) or a CUDA GPU. Algorithms are written once against this interface.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/base/device_halo.hpp"
#include "simrun/solvers/base/enum_names.hpp"
#include "simrun/solvers/base/runtime_kernel.hpp"

namespace simrun::solvers {

// The back-end's kernels, one entry per operation (internal: solvers/src/kernels/).
template <typename T>
struct KernelTable;

enum class BackendKind { cpu, cuda };
template <>
inline constexpr std::array enum_names<BackendKind> = {
    EnumName<BackendKind>{BackendKind::cpu, "cpu"},
    EnumName<BackendKind>{BackendKind::cuda, "cuda"}};
// What the user asked for: auto is CUDA when a GPU is present, the CPU otherwise.
enum class BackendChoice { automatic, cpu, cuda };
template <>
inline constexpr std::array enum_names<BackendChoice> = {
    EnumName<BackendChoice>{BackendChoice::automatic, "auto"},
    EnumName<BackendChoice>{BackendChoice::cpu, "cpu"},
    EnumName<BackendChoice>{BackendChoice::cuda, "cuda"}};

std::string_view to_string(BackendKind kind);
// Parses "auto", "cpu" or "cuda"; throws std::invalid_argument naming the accepted values.
BackendChoice parse_backend_choice(std::string_view text);

// Work issued to a back-end, recorded once to be run many times.
class RecordedWork {
public:
    virtual ~RecordedWork() = default;
    // Issues the recorded work again (asynchronously, as any kernel).
    virtual void run() const = 0;
};

class Backend;

// Work on a pair of vectors (an input and an output), recorded the first time it is asked of
// them and replayed after (on CUDA one graph launch for what is many small kernels), recorded
// again when asked of other vectors: a preconditioner's application.
class RecordedForOperands {
public:
    void run(const Backend& backend, const void* in, const void* out,
             const std::function<void()>& issue);

private:
    std::unique_ptr<RecordedWork> work_;
    std::pair<const void*, const void*> operands_{nullptr, nullptr};
};

class Backend {
public:
    virtual ~Backend() = default;
    // `dialect`: what compile_kernels takes on this back-end (kernel_dialect()).
    explicit Backend(std::shared_ptr<const Communicator> communicator = single_process(),
                     KernelDialect dialect = KernelDialect::none)
        : communicator_(std::move(communicator)), kernel_dialect_(dialect) {}
    Backend(const Backend&) = delete;
    Backend& operator=(const Backend&) = delete;

    virtual BackendKind kind() const = 0;
    // Human-readable description, e.g. "CPU, OpenMP, 2 threads" or "NVIDIA H100 80GB HBM3".
    virtual std::string description() const = 0;

    // Raw memory of this back-end. allocate throws on failure; release never throws.
    virtual void* allocate(std::size_t bytes) const = 0;
    virtual void release(void* pointer) const noexcept = 0;
    // Host memory that copy_to_host/copy_from_host move fastest: page-locked (pinned) on CUDA,
    // so the GPU copies it by DMA at the bus's speed (~2-3x pageable memory) and without a
    // staging copy; aligned memory on the CPU. Slow to allocate (CUDA pins every page): keep
    // and reuse it. allocate_host throws on failure (std::bad_alloc, or the back-end's
    // error); release_host never throws. Callable from any thread.
    virtual void* allocate_host(std::size_t bytes) const = 0;
    virtual void release_host(void* pointer) const noexcept = 0;
    virtual void copy_from_host(void* destination, const void* source, std::size_t bytes) const = 0;
    virtual void copy_to_host(void* destination, const void* source, std::size_t bytes) const = 0;
    virtual void copy(void* destination, const void* source, std::size_t bytes) const = 0;
    // copy_to_host issued in order with the back-end's work without waiting for it: the bytes
    // are in `destination` (memory from allocate_host) once synchronize() has returned, so a
    // result rides on a wait the caller makes anyway. The CPU back-end copies at once.
    virtual void copy_to_host_async(void* destination, const void* source,
                                    std::size_t bytes) const {
        copy_to_host(destination, source, bytes);
    }
    // copy_from_host issued in order with the back-end's work without waiting for it: the work
    // issued after it reads the bytes, and `source` (memory from allocate_host) must stay
    // unchanged until synchronize() has returned. The CPU back-end copies at once.
    virtual void copy_from_host_async(void* destination, const void* source,
                                      std::size_t bytes) const {
        copy_from_host(destination, source, bytes);
    }
    // Waits until all work issued to this back-end has finished.
    virtual void synchronize() const = 0;
    // Bytes of the device's memory in use (by every user of the device, less what the back-end's
    // pool keeps of arrays freed), where the back-end has memory of its own: what a set-up
    // costs is the difference before and after it.
    virtual std::optional<std::size_t> device_bytes_in_use() const { return std::nullopt; }
    // Records, without running it, the work `issue` issues to this back-end (kernels and
    // device copies, no host waits), to be run as one unit: on CUDA a graph, which starts a
    // whole batch of kernels with one launch; on the CPU the function itself. Arguments are
    // fixed when recorded, so the buffers it uses must outlive the recording.
    virtual std::unique_ptr<RecordedWork> record(std::function<void()> issue) const = 0;
    // The language compile_kernels takes here, fixed for the back-end's life: cuda_cpp on the
    // CUDA back-end, none on the CPU (the build without CUDA makes no CUDA back-end). A caller
    // with kernels in no other language asks this before making their source.
    KernelDialect kernel_dialect() const { return kernel_dialect_; }
    // Compiles `source`, in kernel_dialect() (cuda_cpp: CUDA C++ with extern "C" __global__
    // kernels, each taking one struct by value), for this back-end's device and returns its
    // kernels `names`, in that order; a source compiled before in this process is not compiled
    // again (cached by its text). Never throws for a source or a machine that cannot be
    // compiled for: the result then holds no kernel and says why (a back-end of dialect none
    // compiles nothing: its callers run host code).
    virtual RuntimeCompilation compile_kernels(const std::string& source,
                                               const std::vector<std::string>& names) const;

    // Collective over communicator(), every rank at the same point: a halo exchange with the
    // neighbouring ranks that stays on the devices (device_halo.hpp), or null on every rank
    // alike where one rank's cannot be made -- then the caller stages its halo through host
    // memory. The CPU back-end makes none. Throws std::invalid_argument, on every rank, where
    // SIMRUN_HALO is set to something else than auto, host or device on some rank. `sides`: this
    // rank's neighbours (distinct ranks; a side of no bytes either way takes no part), their
    // order the halo's sides'.
    std::unique_ptr<DeviceHalo> open_device_halo(std::span<const HaloSide> sides) const;
    // How this back-end's halo exchanges travel, for a run's header (e.g. "GPU to GPU: peer
    // copies into the neighbours' memory (CUDA IPC), waited for on the GPU"); what
    // open_device_halo decided once it ran.
    virtual std::string halo_path() const;
    // Adds to communicator().times().halo the seconds the device has waited for halos since
    // the last call (a device halo's waits are on the GPU, not on the host's clock): one small
    // copy and a wait where device halos were opened, nothing otherwise.
    virtual void collect_device_halo_times() const {}

    template <typename T>
    const KernelTable<T>& kernels() const;

    // The ranks a distributed solve splits its vectors over, each rank holding its rows in
    // this back-end's memory: the reductions of vector_ops (dot, norm2) and of the methods sum
    // over them. One process unless made with another.
    const Communicator& communicator() const { return *communicator_; }
    const std::shared_ptr<const Communicator>& shared_communicator() const { return communicator_; }

protected:
    // Whether this rank can make device halos, before any collective (the ranks agree on the
    // least): a SIMRUN_HALO it does not know, none, or some.
    enum class DeviceHaloReadiness { bad_setting = 0, unable = 1, able = 2 };
    virtual DeviceHaloReadiness device_halo_readiness() const {
        return DeviceHaloReadiness::unable;
    }
    // open_device_halo's work where every rank is able: collective over communicator(), every
    // rank returning a halo or null alike.
    virtual std::unique_ptr<DeviceHalo> make_device_halo(std::span<const HaloSide> sides) const;

    virtual const KernelTable<float>& float_kernels() const = 0;
    virtual const KernelTable<double>& double_kernels() const = 0;

private:
    std::shared_ptr<const Communicator> communicator_;
    KernelDialect kernel_dialect_;
};

template <>
inline const KernelTable<float>& Backend::kernels<float>() const {
    return float_kernels();
}
template <>
inline const KernelTable<double>& Backend::kernels<double>() const {
    return double_kernels();
}

std::shared_ptr<const Backend> make_cpu_backend(
    std::shared_ptr<const Communicator> communicator = single_process());
// Throws NotCompiled in a build without CUDA, DeviceUnavailable when no GPU can be used.
std::shared_ptr<const Backend> make_cuda_backend(
    int device = 0, std::shared_ptr<const Communicator> communicator = single_process());
// Number of usable CUDA devices (0 in a build without CUDA or when the driver has none).
int cuda_device_count();
bool cuda_compiled();
// Resolves a choice: automatic gives CUDA when cuda_device_count() > 0, the CPU otherwise.
std::shared_ptr<const Backend> make_backend(BackendChoice choice);

// Below this many unknowns `automatic` keeps a single solve (simrun solve) on the CPU, a GPU
// or not: the GPU's start-up (0.22-0.34 s on the lent H100) outweighs what it saves. Measured
// with simrun solve beside the H100 (16 cores), start to finish: at 40000 rows the CPU
// finished first for CG and for GMRES, at 90000 the GPU for GMRES (docs/benchmarks.md).
inline constexpr std::int64_t gpu_crossover_rows = 50000;

struct BackendDecision {
    std::shared_ptr<const Backend> backend;
    std::string reason;  // e.g. "auto: 960 unknowns, below the 50000 where ..."
};
// The back-end for one solve of `rows` unknowns: the one named, or for `automatic` CUDA when a
// GPU is usable and rows >= gpu_crossover_rows, the CPU otherwise; with the reason.
BackendDecision choose_backend_for_solve(BackendChoice choice, std::int64_t rows);
// The back-end for a run (many solves, the GPU's start-up spread over them; per iteration the
// GPU was faster at every size measured, from 900 rows): the one named, or for `automatic`
// CUDA when a GPU is usable; with the reason. Over several ranks, each takes the GPU of its
// host numbered by its rank on the host (modulo the GPUs there: ranks may share one).
BackendDecision choose_backend(BackendChoice choice,
                               std::shared_ptr<const Communicator> communicator = single_process());

}  // namespace simrun::solvers

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "base/kernel_table.hpp"
#include "cpu_kernels.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/system/host_pages.hpp"

namespace simrun::solvers {
namespace {

// Work recorded on the CPU: the function that issues it, called again.
class FunctionWork final : public RecordedWork {
public:
    explicit FunctionWork(std::function<void()> issue) : issue_(std::move(issue)) {}
    void run() const override { issue_(); }

private:
    std::function<void()> issue_;
};

class CpuBackend final : public Backend {
public:
    // Compiles no kernels at run time: callers run their host code.
    explicit CpuBackend(std::shared_ptr<const Communicator> communicator)
        : Backend(std::move(communicator), KernelDialect::none) {}
    BackendKind kind() const override { return BackendKind::cpu; }
    std::string description() const override {
        return "CPU, OpenMP, " + std::to_string(omp_get_max_threads()) + " threads";
    }
    void* allocate(std::size_t bytes) const override {
        // 64-byte alignment: whole cache lines, and aligned vector loads; large vectors on
        // huge pages (fewer page faults at the first touch, fewer TLB misses in a sweep).
        void* pointer = allocate_host_pages(bytes, 64);
        if (pointer == nullptr) throw std::bad_alloc();
        return pointer;
    }
    void release(void* pointer) const noexcept override { std::free(pointer); }
    // Host and back-end memory are the same memory.
    void* allocate_host(std::size_t bytes) const override { return allocate(bytes); }
    void release_host(void* pointer) const noexcept override { release(pointer); }
    void copy_from_host(void* destination, const void* source, std::size_t bytes) const override {
        copy(destination, source, bytes);
    }
    void copy_to_host(void* destination, const void* source, std::size_t bytes) const override {
        copy(destination, source, bytes);
    }
    // Large copies in parallel chunks: one core cannot saturate the memory bandwidth (an output
    // step's 8 MB field is handed over in the time of ~1/threads of one memcpy).
    void copy(void* destination, const void* source, std::size_t bytes) const override {
        constexpr std::size_t chunk = std::size_t{1} << 20;
        if (bytes <= chunk) {
            std::memcpy(destination, source, bytes);
            return;
        }
        const auto chunks = static_cast<std::int64_t>((bytes + chunk - 1) / chunk);
#pragma omp parallel for schedule(static)
        for (std::int64_t c = 0; c < chunks; ++c) {
            const std::size_t begin = static_cast<std::size_t>(c) * chunk;
            std::memcpy(static_cast<char*>(destination) + begin,
                        static_cast<const char*>(source) + begin, std::min(chunk, bytes - begin));
        }
    }
    void synchronize() const override {}
    std::unique_ptr<RecordedWork> record(std::function<void()> issue) const override {
        return std::make_unique<FunctionWork>(std::move(issue));
    }

protected:
    const KernelTable<float>& float_kernels() const override { return cpu::kernel_table<float>(); }
    const KernelTable<double>& double_kernels() const override {
        return cpu::kernel_table<double>();
    }
};

}  // namespace

std::shared_ptr<const Backend> make_cpu_backend(std::shared_ptr<const Communicator> communicator) {
    return std::make_shared<CpuBackend>(std::move(communicator));
}

}  // namespace simrun::solvers

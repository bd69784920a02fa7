// CudaBackend::compile_kernels: source text compiled by NVRTC into a cubin for the device's
// architecture, loaded as a CUDA library (context-independent: every device of the process can
// launch it) and kept for the process, by the source's text and the architecture, and on disk
// between runs (system/program_cache: a second run of the same input compiles nothing). NVRTC
// is opened with dlopen, not linked, so that a machine without it still runs (its caller's host
// path) instead of failing to start.
#include <dlfcn.h>
#include <nvrtc.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "system/program_cache.hpp"

namespace simrun::solvers::cuda {
namespace {

// The NVRTC entry points this file uses, or why they could not be had.
struct Nvrtc {
    decltype(&nvrtcVersion) version = nullptr;
    decltype(&nvrtcGetErrorString) error_string = nullptr;
    decltype(&nvrtcCreateProgram) create = nullptr;
    decltype(&nvrtcCompileProgram) compile = nullptr;
    decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
    decltype(&nvrtcGetProgramLog) log = nullptr;
    decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
    decltype(&nvrtcGetCUBIN) cubin = nullptr;
    decltype(&nvrtcDestroyProgram) destroy = nullptr;
    std::string missing;   // empty where every entry point was found
    std::string name;      // e.g. "NVRTC 13.0"
    std::string identity;  // the name, and the file the library was loaded from (library_identity)
};

template <typename Function>
bool find(void* library, const char* symbol, Function& function) {
    function = reinterpret_cast<Function>(dlsym(library, symbol));
    return function != nullptr;
}

// The file that holds `symbol` (dladdr) with its size and time of change, so that a patch update
// of one version or another build that SIMRUN_NVRTC names tells itself apart; "unknown file"
// where it cannot be had.
std::string library_identity(const void* symbol) {
    Dl_info info{};
    struct stat status {};
    if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr ||
        ::stat(info.dli_fname, &status) != 0) {
        return "unknown file";
    }
    std::error_code error;
    const std::filesystem::path resolved = std::filesystem::canonical(info.dli_fname, error);
    return (error ? std::string(info.dli_fname) : resolved.string()) + " " +
           std::to_string(status.st_size) + " " + std::to_string(status.st_mtim.tv_sec) + "." +
           std::to_string(status.st_mtim.tv_nsec);
}

// The library SIMRUN_NVRTC names where it is set, else the toolkit's own major version first
// (its NVRTC knows the architectures the build targets), then any.
Nvrtc open_nvrtc() {
    Nvrtc nvrtc;
    const char* named = std::getenv("SIMRUN_NVRTC");
    const std::string versioned = "libnvrtc.so." + std::to_string(CUDART_VERSION / 1000);
    const std::vector<std::string> names = named != nullptr
                                               ? std::vector<std::string>{named}
                                               : std::vector<std::string>{versioned, "libnvrtc.so"};
    void* library = nullptr;
    for (const std::string& name : names) {
        library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (library != nullptr) break;
    }
    if (library == nullptr) {
        nvrtc.missing = "NVRTC (" + names.front() + ") was not found on this machine";
        return nvrtc;
    }
    const bool found = find(library, "nvrtcVersion", nvrtc.version) &&
                       find(library, "nvrtcGetErrorString", nvrtc.error_string) &&
                       find(library, "nvrtcCreateProgram", nvrtc.create) &&
                       find(library, "nvrtcCompileProgram", nvrtc.compile) &&
                       find(library, "nvrtcGetProgramLogSize", nvrtc.log_size) &&
                       find(library, "nvrtcGetProgramLog", nvrtc.log) &&
                       find(library, "nvrtcGetCUBINSize", nvrtc.cubin_size) &&
                       find(library, "nvrtcGetCUBIN", nvrtc.cubin) &&
                       find(library, "nvrtcDestroyProgram", nvrtc.destroy);
    if (!found) {
        nvrtc.missing = "the NVRTC library found lacks " + std::string(dlerror());
        return nvrtc;
    }
    int major = 0, minor = 0;
    nvrtc.version(&major, &minor);
    nvrtc.name = "NVRTC " + std::to_string(major) + "." + std::to_string(minor);
    nvrtc.identity =
        nvrtc.name + " " + library_identity(reinterpret_cast<const void*>(nvrtc.version));
    return nvrtc;
}

const Nvrtc& nvrtc() {
    static const Nvrtc library = open_nvrtc();
    return library;
}

class LibraryKernel final : public RuntimeKernel {
public:
    LibraryKernel(cudaKernel_t kernel, const CudaBackend& backend)
        : kernel_(kernel), backend_(backend) {}
    void launch(std::size_t threads, const void* parameters) const override {
        if (threads == 0) return;
        const std::size_t blocks = (threads + runtime_kernel_block - 1) / runtime_kernel_block;
        void* arguments[] = {const_cast<void*>(parameters)};
        SIMRUN_CUDA_CHECK(cudaLaunchKernel(
            reinterpret_cast<const void*>(kernel_), dim3(static_cast<unsigned>(blocks)),
            dim3(runtime_kernel_block), arguments, 0, backend_.stream()));
    }

private:
    cudaKernel_t kernel_;
    const CudaBackend& backend_;
};

// Libraries loaded in this process, by architecture and source text; never unloaded (the
// driver frees them at exit), so kernels handed out stay valid.
struct LoadedLibraries {
    std::mutex mutex;
    std::map<std::pair<std::string, std::string>, cudaLibrary_t> by_source;
};
LoadedLibraries& loaded_libraries() {
    static LoadedLibraries libraries;
    return libraries;
}

// What the cubin of `source` for `architecture` ("sm_90") depends on: its compile options
// and the compiler's version and library file too.
ProgramKey program_key(const Nvrtc& api, const std::string& source,
                       const std::string& architecture) {
    // No contraction of a * b + c into one rounding: the values follow the host's operations.
    return {source,
            {"--gpu-architecture=" + architecture, "--fmad=false", "--std=c++17"},
            architecture,
            api.identity};
}

// The cubin of `key`, or the reason it could not be made.
std::pair<std::vector<char>, std::string> compile_cubin(const Nvrtc& api, const ProgramKey& key) {
    nvrtcProgram program = nullptr;
    if (const nvrtcResult status =
            api.create(&program, key.source.c_str(), "simrun_runtime.cu", 0, nullptr, nullptr);
        status != NVRTC_SUCCESS) {
        return {{}, api.name + " could not take the source: " + api.error_string(status)};
    }
    std::vector<const char*> options;
    for (const std::string& option : key.options) options.push_back(option.c_str());
    const nvrtcResult status =
        api.compile(program, static_cast<int>(options.size()), options.data());
    std::vector<char> cubin;
    std::string failure;
    if (status == NVRTC_SUCCESS) {
        std::size_t size = 0;
        api.cubin_size(program, &size);
        cubin.resize(size);
        api.cubin(program, cubin.data());
    } else {
        std::size_t size = 0;
        api.log_size(program, &size);
        std::string log(size, '\0');
        api.log(program, log.data());
        // The first line of the log names the first error.
        const std::size_t end = log.find('\n');
        failure = api.name + " refused the source for " + key.architecture + ": " +
                  api.error_string(status) + (log.empty() ? "" : " (" + log.substr(0, end) + ")");
    }
    api.destroy(&program);
    return {std::move(cubin), std::move(failure)};
}

// The cache of this process's runs, where the environment puts it (SIMRUN_CACHE_DIR, else
// $XDG_CACHE_HOME/simrun, else ~/.cache/simrun); off where it cannot be written.
const ProgramCache& program_cache() {
    static const ProgramCache cache(program_cache_directory());
    return cache;
}

// Loads `cubin` into `library`; the driver's reason where it cannot.
std::string load_cubin(const std::vector<char>& cubin, cudaLibrary_t& library) {
    if (const cudaError_t status =
            cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
        status != cudaSuccess) {
        cudaGetLastError();
        return cudaGetErrorString(status);
    }
    return {};
}

// A loaded library of `key`'s program, whether its cubin came from the disk cache, or why
// there is none.
struct LoadedProgram {
    cudaLibrary_t library = nullptr;
    bool cached = false;
    std::string failure;
};

// The cubin cached on disk where it validates and the driver takes it; else compiled by NVRTC,
// loaded, and stored for the next run (a cache that cannot be written is passed over).
LoadedProgram load_program(const Nvrtc& api, const ProgramKey& key) {
    LoadedProgram loaded;
    const ProgramCache& cache = program_cache();
    if (const std::optional<std::vector<char>> cubin = cache.load(key)) {
        if (load_cubin(*cubin, loaded.library).empty()) {
            loaded.cached = true;
            return loaded;
        }
    }
    auto [cubin, failure] = compile_cubin(api, key);
    if (!failure.empty()) {
        loaded.failure = std::move(failure);
    } else if (std::string refused = load_cubin(cubin, loaded.library); !refused.empty()) {
        loaded.failure =
            "the CUDA driver could not load the cubin " + api.name + " made: " + refused;
    } else {
        cache.store(key, cubin);
    }
    return loaded;
}

}  // namespace

RuntimeCompilation CudaBackend::compile_kernels(const std::string& source,
                                                const std::vector<std::string>& names) const {
    const Nvrtc& api = nvrtc();
    if (!api.missing.empty()) return {{}, api.missing, 0.0};
    int major = 0, minor = 0;
    SIMRUN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_));
    SIMRUN_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device_));
    const std::string architecture = "sm_" + std::to_string(major) + std::to_string(minor);
    RuntimeCompilation result;
    bool cached = false;
    LoadedLibraries& libraries = loaded_libraries();
    const std::lock_guard lock(libraries.mutex);
    const auto key = std::make_pair(architecture, source);
    auto found = libraries.by_source.find(key);
    if (found == libraries.by_source.end()) {
        const auto start = std::chrono::steady_clock::now();
        const LoadedProgram loaded = load_program(api, program_key(api, source, architecture));
        if (!loaded.failure.empty()) return {{}, loaded.failure, 0.0};
        cached = loaded.cached;
        result.cached = cached;
        found = libraries.by_source.emplace(key, loaded.library).first;
        // Above zero for a cubin read from the disk cache too (zero says "compiled before").
        result.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    for (const std::string& name : names) {
        cudaKernel_t kernel = nullptr;
        if (const cudaError_t status = cudaLibraryGetKernel(&kernel, found->second, name.c_str());
            status != cudaSuccess) {
            cudaGetLastError();
            return {{}, "the compiled source has no kernel '" + name + "'", 0.0};
        }
        result.kernels.push_back(std::make_shared<LibraryKernel>(kernel, *this));
    }
    char text[128];
    std::snprintf(text, sizeof text, "compiled by %s for %s%s", api.name.c_str(),
                  architecture.c_str(), cached ? ", read from the cache" : "");
    result.note = text;
    return result;
}

}  // namespace simrun::solvers::cuda

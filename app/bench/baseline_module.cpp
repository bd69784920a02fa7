#include "baseline_module.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>
#include <vector>

namespace simrun::app {
namespace {

namespace fs = std::filesystem;

constexpr const char* module_file = "libsimrun_bench_baseline.so";
constexpr const char* override_variable = "SIMRUN_BENCH_BASELINE";

// The places to look, in order (baseline_module.hpp).
std::vector<fs::path> candidates() {
    std::error_code error;
    const char* named = std::getenv(override_variable);
    if (named != nullptr && *named != '\0') {
        // Absolute, so that the file checked is the file loaded: dlopen would search the
        // library path for a name without '/', not the working directory.
        const fs::path absolute = fs::absolute(named, error);
        return {error ? fs::path(named) : absolute};
    }
    const fs::path executable = fs::read_symlink("/proc/self/exe", error);
    if (error) return {};
    const fs::path directory = executable.parent_path();
    return {directory / module_file,
            (directory / SIMRUN_BASELINE_INSTALL_DIR / module_file).lexically_normal()};
}

// The module at `path`, or why not (appended to `tried`).
std::optional<BaselineModule> open_module(const fs::path& path, std::string& tried) {
    tried += "\n  " + path.string() + ": ";
    std::error_code error;
    if (!fs::exists(path, error)) {
        tried += "no such file";
        return std::nullopt;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* reason = dlerror();
        tried += reason != nullptr ? reason : "dlopen failed";
        return std::nullopt;
    }
    const auto entry = reinterpret_cast<SimrunBaselineEntry>(dlsym(handle, SIMRUN_BASELINE_ENTRY));
    const SimrunBaselineTable* table = entry != nullptr ? entry() : nullptr;
    if (table == nullptr) {
        tried += std::string("not a baseline module (no ") + SIMRUN_BASELINE_ENTRY + ")";
    } else if (table->abi_version != SIMRUN_BASELINE_ABI_VERSION) {
        tried += "built for interface version " + std::to_string(table->abi_version) +
                 ", this simrun needs version " + std::to_string(SIMRUN_BASELINE_ABI_VERSION) +
                 " (a module of another build)";
    } else {
        return BaselineModule{table, path.string()};
    }
    dlclose(handle);
    return std::nullopt;
}

// The module, or the message of BaselineUnavailable.
struct LoadOutcome {
    std::optional<BaselineModule> module;
    std::string failure;
};

LoadOutcome load() {
    if (!SIMRUN_BASELINE_MODULE_BUILT) {
        return {std::nullopt,
                "this simrun was built without CUDA, so it has no cuSPARSE/cuBLAS baseline "
                "module"};
    }
    std::string tried;
    for (const fs::path& path : candidates()) {
        if (auto module = open_module(path, tried)) return {std::move(module), ""};
    }
    return {std::nullopt, std::string("the cuSPARSE/cuBLAS baseline module (") + module_file +
                              ") could not be loaded; tried:" + tried + "\n  (set " +
                              override_variable + " to the module's path)"};
}

}  // namespace

const BaselineModule& baseline_module() {
    static const LoadOutcome outcome = load();
    if (!outcome.module) throw BaselineUnavailable(outcome.failure);
    return *outcome.module;
}

}  // namespace simrun::app

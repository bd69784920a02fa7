// The cuSPARSE/cuBLAS baseline lives in a module that `simrun bench` loads only when it needs it:
// the executable and the Python module link neither library, the module is found beside the
// executable, and a missing, broken or foreign module is named in a clear message (exit 1),
// never a crash.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "support/run_simrun.hpp"

namespace simrun {
namespace {

using testing::run_simrun;
using testing::TemporaryDirectory;

// Built in this build (empty where not: no CUDA, no Python).
const std::string baseline_module = SIMRUN_TEST_BASELINE_MODULE;
const std::string python_module = SIMRUN_TEST_PYTHON_MODULE;
const std::string foreign_module = SIMRUN_TEST_FOREIGN_BASELINE_MODULE;

// The NEEDED entries of an ELF file, from `readelf -d`; nullopt-like empty plus `ok` false
// where readelf cannot be run.
std::vector<std::string> needed_libraries(const std::string& file, bool& ok) {
    std::vector<std::string> needed;
    const std::string command = "readelf -d '" + file + "' 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    ok = pipe != nullptr;
    if (!ok) return needed;
    char line[1024];
    while (std::fgets(line, sizeof line, pipe.get()) != nullptr) {
        const std::string text = line;
        const auto open = text.find("Shared library: [");
        if (open == std::string::npos) continue;
        const auto start = open + 17;
        needed.push_back(text.substr(start, text.find(']', start) - start));
    }
    ok = !needed.empty();  // every dynamic executable needs libc at least
    return needed;
}

bool names_vendor_library(const std::string& library) {
    return library.find("cusparse") != std::string::npos ||
           library.find("cublas") != std::string::npos;
}

TEST(BenchBaselineModule, ExecutableAndPythonModuleLinkNeitherCusparseNorCublas) {
    std::vector<std::string> files = {SIMRUN_EXECUTABLE};
    if (!python_module.empty()) files.push_back(python_module);
    for (const std::string& file : files) {
        SCOPED_TRACE(file);
        bool ok = false;
        const auto needed = needed_libraries(file, ok);
        if (!ok) GTEST_SKIP() << "readelf -d gave no NEEDED entries for " << file;
        for (const std::string& library : needed) EXPECT_FALSE(names_vendor_library(library));
    }
    if (baseline_module.empty()) return;
    // The check above sees the libraries where they are linked: the module has both.
    bool ok = false;
    const auto needed = needed_libraries(baseline_module, ok);
    ASSERT_TRUE(ok) << baseline_module;
    int vendor = 0;
    for (const std::string& library : needed) vendor += names_vendor_library(library) ? 1 : 0;
    EXPECT_EQ(vendor, 2) << "libcusparse and libcublas expected among the module's NEEDED";
}

// `simrun bench --baseline on` with SIMRUN_BENCH_BASELINE naming `module`: exit 1 before any
// case, and the message names the module and says what is wrong with it.
void expect_refused(const std::string& module, const std::string& reason) {
    TemporaryDirectory dir;
    const auto result = run_simrun("bench --baseline on --backend cpu --quick", dir.path(),
                                   "SIMRUN_BENCH_BASELINE='" + module + "'");
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(result.out.find("simrun bench:"), std::string::npos) << "no case should run";
    if (baseline_module.empty()) {
        EXPECT_NE(result.err.find("built without CUDA"), std::string::npos) << result.err;
        return;
    }
    EXPECT_NE(result.err.find("baseline module (libsimrun_bench_baseline.so) could not be loaded"),
              std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find(module + ": " + reason), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("set SIMRUN_BENCH_BASELINE"), std::string::npos) << result.err;
}

TEST(BenchBaselineModule, MissingModuleIsNamedAndNothingRuns) {
    TemporaryDirectory dir;
    expect_refused((dir.path() / "libsimrun_bench_baseline.so").string(), "no such file");
}

TEST(BenchBaselineModule, FileThatIsNoLibraryIsRefused) {
    TemporaryDirectory dir;
    const auto text = dir.write("libsimrun_bench_baseline.so", "not an ELF file\n");
    expect_refused(text.string(), text.string());  // dlerror names the file
}

TEST(BenchBaselineModule, ModuleOfAnotherInterfaceVersionIsRefused) {
    expect_refused(foreign_module, "built for interface version 2, this simrun needs version 1");
}

TEST(BenchBaselineModule, ModuleBesideTheExecutableLoadsAndTheBackEndIsChecked) {
    if (baseline_module.empty()) GTEST_SKIP() << "a build without CUDA has no baseline module";
    TemporaryDirectory dir;
    // Found without SIMRUN_BENCH_BASELINE, loaded and its version accepted: what stops the run is
    // the CPU back-end, which the baseline cannot use (exit 2: the options ask for it).
    const auto result = run_simrun("bench --baseline on --backend cpu --quick", dir.path(),
                                   "env -u SIMRUN_BENCH_BASELINE");
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE(result.err.find("runs on the CUDA back-end only"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find(std::filesystem::path(baseline_module).filename().string()),
              std::string::npos)
        << result.err;
}

}  // namespace
}  // namespace simrun

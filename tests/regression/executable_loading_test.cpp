// What the executable loads at start-up, and the benchmark's baseline module that it loads only
// when `simrun bench` needs it: the executable and the Python module link neither cuSPARSE nor
// cuBLAS, their run paths send the loader to no working directory, the module is found beside
// the executable (or where SIMRUN_BENCH_BASELINE names it, relative to the working directory),
// and a missing, broken or foreign module is named in a clear message (exit 1), never a crash.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
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

// The values of the dynamic entries of kind `tag` ("Shared library" for NEEDED, "Library
// runpath" for RUNPATH, "Library rpath") of an ELF file, from `readelf -d`. `ran` is false
// where readelf cannot be run or lists no NEEDED entry (every dynamic file needs libc).
std::vector<std::string> dynamic_entries(const std::string& file, const std::string& tag,
                                         bool& ran) {
    std::vector<std::string> values;
    const std::string command = "readelf -d '" + file + "' 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    ran = false;
    if (pipe == nullptr) return values;
    char line[4096];
    while (std::fgets(line, sizeof line, pipe.get()) != nullptr) {
        const std::string text = line;
        ran = ran || text.find("Shared library: [") != std::string::npos;
        const auto open = text.find(tag + ": [");
        if (open == std::string::npos) continue;
        const auto start = open + tag.size() + 3;
        values.push_back(text.substr(start, text.find(']', start) - start));
    }
    return values;
}

std::vector<std::string> executable_and_python_module() {
    std::vector<std::string> files = {SIMRUN_EXECUTABLE};
    if (!python_module.empty()) files.push_back(python_module);
    return files;
}

bool names_vendor_library(const std::string& library) {
    return library.find("cusparse") != std::string::npos ||
           library.find("cublas") != std::string::npos;
}

TEST(ExecutableLoading, ExecutableAndPythonModuleLinkNeitherCusparseNorCublas) {
    for (const std::string& file : executable_and_python_module()) {
        SCOPED_TRACE(file);
        bool ran = false;
        const auto needed = dynamic_entries(file, "Shared library", ran);
        if (!ran) GTEST_SKIP() << "readelf -d gave no NEEDED entries for " << file;
        for (const std::string& library : needed) EXPECT_FALSE(names_vendor_library(library));
    }
    if (baseline_module.empty()) return;
    // The check above sees the libraries where they are linked: the module has both.
    bool ran = false;
    const auto needed = dynamic_entries(baseline_module, "Shared library", ran);
    ASSERT_TRUE(ran) << baseline_module;
    int vendor = 0;
    for (const std::string& library : needed) vendor += names_vendor_library(library) ? 1 : 0;
    EXPECT_EQ(vendor, 2) << "libcusparse and libcublas expected among the module's NEEDED";
}

// An empty or relative run-path entry makes the loader look in the working directory for every
// library at every start (slower, and a library planted there would be loaded).
TEST(ExecutableLoading, RunPathsNameNoWorkingDirectory) {
    std::vector<std::string> files = executable_and_python_module();
    if (!baseline_module.empty()) files.push_back(baseline_module);
    for (const std::string& file : files) {
        SCOPED_TRACE(file);
        bool ran = false;
        for (const char* tag : {"Library runpath", "Library rpath"}) {
            for (const std::string& path : dynamic_entries(file, tag, ran)) {
                std::stringstream entries(path);
                std::string entry;
                while (std::getline(entries, entry, ':')) {
                    EXPECT_TRUE(!entry.empty() && (entry[0] == '/' || entry[0] == '$'))
                        << tag << " [" << path << "] has the entry '" << entry << "'";
                }
                if (!path.empty() && path.back() == ':') ADD_FAILURE() << "empty last entry";
            }
        }
        if (!ran) GTEST_SKIP() << "readelf -d gave no NEEDED entries for " << file;
    }
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

// A name without '/' is the file in the working directory, checked and loaded by its absolute
// path (dlopen alone would search the library path for it).
TEST(BenchBaselineModule, RelativeNameIsTheFileInTheWorkingDirectory) {
    TemporaryDirectory dir;
    const auto text = dir.write("libsimrun_bench_baseline.so", "not an ELF file\n");
    const auto result = run_simrun("bench --baseline on --backend cpu --quick", dir.path(),
                                   "SIMRUN_BENCH_BASELINE=libsimrun_bench_baseline.so");
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    if (baseline_module.empty()) return;
    const std::string absolute = std::filesystem::canonical(text).string();
    EXPECT_NE(result.err.find("\n  " + absolute + ": " + absolute), std::string::npos)
        << result.err;  // dlerror names the file it opened: the one checked
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

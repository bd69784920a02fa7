// tools/setup's recovery logic, with cmake, dpkg-query and nvcc replaced by stubs that log their
// calls: a build tree it did not finish configuring is configured afresh (after a failed or
// interrupted configure, a cache of another checkout, a missing Makefile, a CPU-only cache once
// nvcc exists), a complete one only builds, and a failing step is named with a non-zero exit.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/run_simrun.hpp"

namespace simrun {
namespace {

using testing::read_text;
using testing::TemporaryDirectory;

namespace fs = std::filesystem;

// The stub cmake: a configure (-S) writes the cache (and, unless STUB_CONFIGURE_FAILS is set,
// the Makefile) as CMake would; a build (--build) exits with STUB_BUILD_STATUS.
const std::string stub_cmake = R"sh(#!/bin/bash
echo "cmake $*" >> "$STUB_LOG"
if [[ $1 == --build ]]; then exit "${STUB_BUILD_STATUS:-0}"; fi
while (($#)); do
    case $1 in
        -B) build=$2; shift ;;
        -S) source=$(cd "$2" && pwd -P); shift ;;
    esac
    shift
done
mkdir -p "$build"
echo "CMAKE_HOME_DIRECTORY:INTERNAL=$source" > "$build/CMakeCache.txt"
if [[ -n ${STUB_CONFIGURE_FAILS:-} ]]; then echo "CMake Error: stub" >&2; exit 1; fi
touch "$build/Makefile"
)sh";

class SetupScript : public ::testing::Test {
protected:
    void SetUp() override {
        for (const auto& [name, text] :
             {std::pair<std::string, std::string>{"cmake", stub_cmake},
              {"dpkg-query", "#!/bin/bash\necho -n 'install ok installed'\n"},
              {"nvcc", "#!/bin/bash\nexit 0\n"}}) {
            const fs::path path = dir_.write(name, text);
            fs::permissions(path, fs::perms::owner_all);
        }
    }

    struct Outcome {
        int exit_code = -1;
        std::string calls;  // the stub cmake's log of this run
        std::string err;
    };

    // Runs tools/setup with the stubs first on PATH and ENVIRONMENT (shell assignments) set.
    Outcome setup(const std::string& environment = "") const {
        fs::remove(log());
        const std::string command = "env PATH='" + dir_.path().string() + "':\"$PATH\" STUB_LOG='" +
                                    log().string() + "' BUILD_DIR='" + build().string() + "' " +
                                    environment + " '" SIMRUN_SOURCE_DIR "/tools/setup' > '" +
                                    (dir_.path() / "out").string() + "' 2> '" +
                                    (dir_.path() / "err").string() + "'";
        const int status = std::system(command.c_str());
        Outcome outcome;
        outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        outcome.calls = fs::exists(log()) ? read_text(log()) : "";
        outcome.err = read_text(dir_.path() / "err");
        return outcome;
    }

    static bool configured(const Outcome& outcome) {
        return outcome.calls.find("cmake --fresh -S . -B") != std::string::npos;
    }
    static bool built(const Outcome& outcome) {
        return outcome.calls.find("cmake --build") != std::string::npos;
    }

    fs::path build() const { return dir_.path() / "build"; }
    fs::path log() const { return dir_.path() / "cmake.log"; }

    TemporaryDirectory dir_;
};

TEST_F(SetupScript, ConfiguresOnceThenOnlyBuilds) {
    const Outcome first = setup();
    EXPECT_EQ(first.exit_code, 0) << first.err;
    EXPECT_TRUE(configured(first)) << first.calls;
    EXPECT_TRUE(built(first)) << first.calls;
    const Outcome second = setup();
    EXPECT_EQ(second.exit_code, 0) << second.err;
    EXPECT_FALSE(configured(second)) << second.calls;
    EXPECT_TRUE(built(second)) << second.calls;
}

TEST_F(SetupScript, FailedConfigureIsNamedAndConfiguredAgainNextTime) {
    const Outcome failed = setup("STUB_CONFIGURE_FAILS=1");
    EXPECT_EQ(failed.exit_code, 1);
    EXPECT_NE(failed.err.find("step 'configure' failed"), std::string::npos) << failed.err;
    EXPECT_FALSE(built(failed)) << failed.calls;
    ASSERT_TRUE(fs::exists(build() / "CMakeCache.txt"));  // what used to block the next run
    const Outcome fixed = setup();
    EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
    EXPECT_TRUE(configured(fixed)) << fixed.calls;
    EXPECT_TRUE(built(fixed)) << fixed.calls;
}

TEST_F(SetupScript, FailedBuildIsNamedAndResumedWithoutReconfiguring) {
    ASSERT_EQ(setup().exit_code, 0);
    const Outcome failed = setup("STUB_BUILD_STATUS=2");
    EXPECT_EQ(failed.exit_code, 1);
    EXPECT_NE(failed.err.find("step 'build' failed"), std::string::npos) << failed.err;
    const Outcome resumed = setup();
    EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_FALSE(configured(resumed)) << resumed.calls;
    EXPECT_TRUE(built(resumed)) << resumed.calls;
}

TEST_F(SetupScript, IncompleteOrForeignBuildTreesAreConfiguredAfresh) {
    ASSERT_EQ(setup().exit_code, 0);
    fs::remove(build() / "Makefile");
    EXPECT_TRUE(configured(setup())) << "a build tree without its Makefile";
    EXPECT_FALSE(configured(setup())) << "complete again after that";

    std::ofstream(build() / "CMakeCache.txt") << "CMAKE_HOME_DIRECTORY:INTERNAL=/elsewhere\n";
    EXPECT_TRUE(configured(setup())) << "a cache made for another checkout";

    const std::string cache = read_text(build() / "CMakeCache.txt");
    std::ofstream(build() / "CMakeCache.txt")
        << cache << "CMAKE_CUDA_COMPILER:FILEPATH=CMAKE_CUDA_COMPILER-NOTFOUND\n";
    EXPECT_TRUE(configured(setup())) << "a CPU-only cache once nvcc is on PATH";
    std::ofstream(build() / "CMakeCache.txt")
        << cache << "SIMRUN_CUDA:STRING=off\n"
        << "CMAKE_CUDA_COMPILER:FILEPATH=CMAKE_CUDA_COMPILER-NOTFOUND\n";
    EXPECT_FALSE(configured(setup())) << "unless the CUDA back-end was turned off";
}

}  // namespace
}  // namespace simrun

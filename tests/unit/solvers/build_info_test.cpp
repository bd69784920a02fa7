// How a build describes itself: CUDA architecture lists and OpenMP versions as users read them.
#include "simrun/solvers/system/build_info.hpp"

#include <gtest/gtest.h>

namespace simrun::solvers {
namespace {

TEST(BuildInfo, CudaArchitecturesReadAsMachineCodeAndPtx) {
    EXPECT_EQ(describe_cuda_architectures("90"), "sm_90 + compute_90 PTX");
    EXPECT_EQ(describe_cuda_architectures("90-real"), "sm_90");
    EXPECT_EQ(describe_cuda_architectures("90-virtual"), "compute_90 PTX");
    EXPECT_EQ(describe_cuda_architectures("80-real;90"), "sm_80, sm_90 + compute_90 PTX");
    EXPECT_EQ(describe_cuda_architectures("80-real,90-real,90-virtual"),
              "sm_80, sm_90, compute_90 PTX");
    EXPECT_EQ(describe_cuda_architectures("native"), "native");
    EXPECT_EQ(describe_cuda_architectures("90-other"), "90-other");
    EXPECT_EQ(describe_cuda_architectures(";90;"), "sm_90 + compute_90 PTX");
    EXPECT_EQ(describe_cuda_architectures(""), "");
}

TEST(BuildInfo, OpenMpDatesReadAsSpecificationNumbers) {
    EXPECT_EQ(describe_openmp_version(201511), "4.5 (201511)");
    EXPECT_EQ(describe_openmp_version(201811), "5.0 (201811)");
    EXPECT_EQ(describe_openmp_version(201999), "201999");
}

TEST(BuildInfo, ThisBuildReportsOpenMp) {
    // The CPU back-end is built with OpenMP (CMake requires it).
    EXPECT_FALSE(solver_build_info().openmp.empty());
}

}  // namespace
}  // namespace simrun::solvers

#pragma once
// The back-end a test source built once per back-end runs on: the CPU, or compiled with
// SIMRUN_TEST_ON_CUDA the GPU (null where there is none, and the test skips with a message).
#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "simrun/solvers/base/backend.hpp"

namespace simrun::testing {

#ifdef SIMRUN_TEST_ON_CUDA
// With `ranks`: a back-end whose vectors are split over them (several may share the GPU).
inline std::shared_ptr<const solvers::Backend> test_backend(
    std::shared_ptr<const solvers::Communicator> ranks = solvers::single_process()) {
    return solvers::cuda_compiled() && solvers::cuda_device_count() > 0
               ? solvers::make_cuda_backend(0, std::move(ranks))
               : nullptr;
}
#define SIMRUN_SKIP_WITHOUT_BACKEND(b) \
    if (!(b)) GTEST_SKIP() << "no CUDA GPU (or no CUDA back-end in this build): GPU test skipped"
#else
inline std::shared_ptr<const solvers::Backend> test_backend(
    std::shared_ptr<const solvers::Communicator> ranks = solvers::single_process()) {
    return solvers::make_cpu_backend(std::move(ranks));
}
#define SIMRUN_SKIP_WITHOUT_BACKEND(b) (void)(b)
#endif

}  // namespace simrun::testing

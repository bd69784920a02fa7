// The CUDA context made ahead of the back-end (base/backend_preparation.hpp): nothing started
// for the CPU or in a build without CUDA, always joined, and the back-end made afterwards is
// the one made without it.
#include "simrun/solvers/base/backend_preparation.hpp"

#include <gtest/gtest.h>

namespace simrun::solvers {
namespace {

TEST(BackendPreparation, TheCpuNamedStartsNothing) {
    BackendPreparation preparation(BackendChoice::cpu, 0);
    EXPECT_FALSE(preparation.started());
    const double waited = preparation.join();
    EXPECT_GE(waited, 0.0);
    EXPECT_LT(waited, 0.01);
    EXPECT_EQ(make_backend(BackendChoice::cpu)->kind(), BackendKind::cpu);
}

// Automatic and CUDA start a thread exactly where the build has CUDA; join() returns, twice,
// and the back-end is the one the machine gives without preparation.
TEST(BackendPreparation, AutomaticStartsWhereCudaIsBuiltAndJoins) {
    for (const BackendChoice choice : {BackendChoice::automatic, BackendChoice::cuda}) {
        BackendPreparation preparation(choice, 0);
        EXPECT_EQ(preparation.started(), cuda_compiled());
        EXPECT_GE(preparation.join(), 0.0);
        EXPECT_GE(preparation.join(), 0.0);
    }
    BackendPreparation preparation(BackendChoice::automatic, 3);
    preparation.join();
    EXPECT_EQ(make_backend(BackendChoice::automatic)->kind(),
              cuda_device_count() > 0 ? BackendKind::cuda : BackendKind::cpu);
}

TEST(BackendPreparation, DestroyedWithoutJoinJoins) {
    for (int host_rank = 0; host_rank < 4; ++host_rank) {
        const BackendPreparation preparation(BackendChoice::automatic, host_rank);
    }
    SUCCEED();
}

// A context is opened exactly where a GPU is usable (none in a build without CUDA), on any
// rank's number.
TEST(BackendPreparation, ContextOpenedWhereAGpuIsUsable) {
    for (int host_rank = 0; host_rank < 3; ++host_rank) {
        EXPECT_EQ(open_cuda_context(host_rank), cuda_device_count() > 0) << host_rank;
    }
}

}  // namespace
}  // namespace simrun::solvers

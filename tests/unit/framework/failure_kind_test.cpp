// The one classification of failures (input, usage, failure) that the command line's exit code,
// the Python module's exception class and the ranks' agreement read.
#include "simrun/framework/distributed/failure_kind.hpp"

#include <gtest/gtest.h>

#include <new>
#include <stdexcept>

#include "simrun/framework/config/input_error.hpp"
#include "simrun/framework/distributed/agreement.hpp"
#include "simrun/framework/run/simulation.hpp"
#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/base/errors.hpp"
#include "simrun/solvers/matrices/matrix_market.hpp"

namespace simrun::framework {
namespace {

template <typename Error>
FailureKind kind_of(const Error& error) {
    const FailureKind direct = classify(error);
    EXPECT_EQ(classify(std::make_exception_ptr(error)), direct);
    return direct;
}

TEST(FailureKind, WhatTheInputAsksIsAnInputError) {
    EXPECT_EQ(kind_of(InputError("in.toml:3:1", "grid.nx", "must be >= 3")), FailureKind::input);
    // A Matrix Market file is input too, wherever it is read (agreed over ranks as such).
    EXPECT_EQ(kind_of(solvers::MatrixMarketError("a.mtx:4: row index 4 out of range 1..3")),
              FailureKind::input);
    EXPECT_EQ(kind_of(std::invalid_argument("unknown solver method 'minres'")), FailureKind::input);
}

TEST(FailureKind, AMissingBackEndIsAUsageError) {
    EXPECT_EQ(kind_of(solvers::NotCompiled("CUDA")), FailureKind::usage);
    EXPECT_EQ(kind_of(solvers::DeviceUnavailable("no CUDA device")), FailureKind::usage);
}

TEST(FailureKind, EverythingElseIsAFailureOfTheComputation) {
    EXPECT_EQ(kind_of(SolveFailure("step 3: max_iterations")), FailureKind::failure);
    EXPECT_EQ(kind_of(DataNotFinite("problem.source is not finite")), FailureKind::failure);
    EXPECT_EQ(kind_of(FailureOnEveryRank("not finite")), FailureKind::failure);
    EXPECT_EQ(kind_of(solvers::PeerFailure(1)), FailureKind::failure);
    EXPECT_EQ(kind_of(solvers::CudaError("cudaMalloc: out of memory")), FailureKind::failure);
    EXPECT_EQ(kind_of(std::runtime_error("cannot write out.h5")), FailureKind::failure);
    EXPECT_EQ(kind_of(std::bad_alloc()), FailureKind::failure);
    EXPECT_EQ(classify(std::make_exception_ptr(42)), FailureKind::failure);
}

TEST(FailureKind, AnAgreedFailureKeepsTheKindTheRanksAgreedOn) {
    for (const FailureKind kind : {FailureKind::input, FailureKind::usage, FailureKind::failure}) {
        EXPECT_EQ(kind_of(AgreedFailure(kind, 1, false, "rank 1's message")), kind);
    }
}

TEST(FailureKind, TheRanksAgreeOnWhatEveryRankDecidesAlike) {
    const auto agreed = [](auto error) { return agreed_on(std::make_exception_ptr(error)); };
    EXPECT_TRUE(agreed(InputError("bad")));
    EXPECT_TRUE(agreed(solvers::MatrixMarketError("a.mtx:1: bad header")));
    EXPECT_TRUE(agreed(std::invalid_argument("bad")));
    EXPECT_TRUE(agreed(solvers::NotCompiled("CUDA")));
    EXPECT_TRUE(agreed(SolveFailure("not converged")));
    EXPECT_TRUE(agreed(solvers::PeerFailure(0)));
    EXPECT_FALSE(agreed(std::runtime_error("cannot write")));
    EXPECT_FALSE(agreed(DataNotFinite("not finite at a node")));
}

}  // namespace
}  // namespace simrun::framework

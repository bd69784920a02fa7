// The host's cores shared by the ranks on it (system/host_threads.hpp): what a run's header says
// of each rank's host threads, and the hint where the launcher bound each rank to one core of a
// host with cores to spare.
#include "simrun/solvers/system/host_threads.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <string>

namespace simrun::solvers {
namespace {

// A rank's share: its threads, the cores it may run on, its host's cores and ranks.
HostShare share(int threads, int rank_cores, int host_cores, int ranks_on_host,
                bool threads_set = false) {
    return {.threads = threads,
            .rank_cores = rank_cores,
            .host_cores = host_cores,
            .ranks_on_host = ranks_on_host,
            .threads_set = threads_set};
}

TEST(HostThreads, EachRankBoundToOneCoreOfAHostWithCoresToSpareIsToldHowToHaveMore) {
    const std::string bound = describe_host_threads(share(1, 1, 32, 2));
    EXPECT_EQ(bound.rfind("1 host thread per rank: ", 0), 0u) << bound;
    EXPECT_NE(bound.find("bound each rank to 1 CPU of the host's 32"), std::string::npos) << bound;
    EXPECT_NE(bound.find("`mpirun --bind-to none` gives each rank 16 threads"), std::string::npos)
        << bound;
    // A core of two hyperthreads: 2 CPUs of 224, where each rank's share is 112.
    const std::string hyper = describe_host_threads(share(2, 2, 224, 2));
    EXPECT_NE(hyper.find("bound each rank to 2 CPUs of the host's 224"), std::string::npos)
        << hyper;
    EXPECT_NE(hyper.find("gives each rank 112 threads"), std::string::npos) << hyper;
}

TEST(HostThreads, RanksWithTheirShareOrNoCoresToSpareGetNoHint) {
    EXPECT_EQ(describe_host_threads(share(16, 16, 32, 2)), "16 host threads per rank");
    // More than half its share: 12 CPUs where 16 would be the share.
    EXPECT_EQ(describe_host_threads(share(12, 12, 32, 2)), "12 host threads per rank");
    // Two ranks on two cores: one each is their share.
    EXPECT_EQ(describe_host_threads(share(1, 1, 2, 2)), "1 host thread per rank");
    // The user chose the threads (OMP_NUM_THREADS).
    EXPECT_EQ(describe_host_threads(share(1, 1, 32, 2, true)), "1 host thread per rank");
    // The cores unknown.
    EXPECT_EQ(describe_host_threads(share(4, 0, 0, 2)), "4 host threads per rank");
}

TEST(HostThreads, OneProcessKeepsItsThreadsAndKnowsItsHost) {
    const auto one = single_process();
    const int before = omp_get_max_threads();
    const HostShare found = share_host_cores(*one);
    EXPECT_EQ(found.threads, before);
    EXPECT_EQ(omp_get_max_threads(), before);
    EXPECT_GT(found.host_cores, 0);
    EXPECT_EQ(found.ranks_on_host, 1);
    EXPECT_EQ(host_share().threads, found.threads);
}

}  // namespace
}  // namespace simrun::solvers

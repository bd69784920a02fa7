#include "simrun/solvers/system/host_threads.hpp"

#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <span>

namespace simrun::solvers {
namespace {

// What a rank says of itself: its host's name, the cores it may run on, and whether its user
// set its threads (OMP_NUM_THREADS).
struct HostCores {
    char host[256] = {};
    cpu_set_t cores{};
    bool threads_set = false;
};

}  // namespace

int share_host_cores(const Communicator& ranks) {
    if (ranks.size() == 1) return omp_get_max_threads();
    HostCores mine;
    mine.threads_set = std::getenv("OMP_NUM_THREADS") != nullptr;
    gethostname(mine.host, sizeof mine.host - 1);
    if (sched_getaffinity(0, sizeof mine.cores, &mine.cores) != 0) {
        CPU_ZERO(&mine.cores);  // unknown: counted as no cores below, so nothing changes
    }
    // Every rank takes part (a rank whose threads are set still tells the others its cores).
    const auto all = ranks.all_gather(std::as_bytes(std::span(&mine, 1)));
    const int cores = CPU_COUNT(&mine.cores);
    if (mine.threads_set || cores == 0) return omp_get_max_threads();
    int sharing = 0;  // the ranks of this host that may run on one of this rank's cores
    for (const auto& bytes : all) {
        HostCores theirs;
        std::memcpy(&theirs, bytes.data(), std::min(bytes.size(), sizeof theirs));
        if (std::strncmp(theirs.host, mine.host, sizeof mine.host) != 0) continue;
        cpu_set_t common;
        CPU_AND(&common, &theirs.cores, &mine.cores);
        if (CPU_COUNT(&common) > 0) ++sharing;
    }
    const int threads = std::max(1, cores / std::max(1, sharing));
    omp_set_num_threads(threads);
    return threads;
}

}  // namespace simrun::solvers

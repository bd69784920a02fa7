#include "simrun/solvers/system/host_threads.hpp"

#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

namespace simrun::solvers {
namespace {

// What a rank says of itself: its host's name, the cores it may run on, and whether its user
// set its threads (OMP_NUM_THREADS).
struct HostCores {
    char host[256] = {};
    cpu_set_t cores{};
    bool threads_set = false;
};

HostShare found;  // the last share_host_cores' (set once, before any parallel work)

}  // namespace

const HostShare& host_share() { return found; }

std::string describe_host_threads(const HostShare& share) {
    const std::string threads = std::to_string(share.threads) + " host thread" +
                                (share.threads == 1 ? "" : "s") + " per rank";
    const int fair = share.host_cores / std::max(1, share.ranks_on_host);
    // Bound to half its share or less (a core is 1 or 2 CPUs, with hyperthreads).
    if (share.threads_set || share.rank_cores <= 0 || 2 * share.rank_cores > fair) {
        return threads;
    }
    const std::string cpus =
        std::to_string(share.rank_cores) + " CPU" + (share.rank_cores == 1 ? "" : "s");
    return threads + ": the launcher bound each rank to " + cpus + " of the host's " +
           std::to_string(share.host_cores) +
           ", so the host's share of the set-up (assembly, analysis) runs on " + cpus +
           "; `mpirun --bind-to none` gives each rank " + std::to_string(fair) + " threads";
}

HostShare share_host_cores(const Communicator& ranks) {
    found = HostShare{};
    found.threads = omp_get_max_threads();
    found.threads_set = std::getenv("OMP_NUM_THREADS") != nullptr;
    found.host_cores = static_cast<int>(std::max(0L, sysconf(_SC_NPROCESSORS_ONLN)));
    if (ranks.size() == 1) return found;
    HostCores mine;
    mine.threads_set = found.threads_set;
    gethostname(mine.host, sizeof mine.host - 1);
    if (sched_getaffinity(0, sizeof mine.cores, &mine.cores) != 0) {
        CPU_ZERO(&mine.cores);  // unknown: counted as no cores below, so nothing changes
    }
    // Every rank takes part (a rank whose threads are set still tells the others its cores).
    const auto all = ranks.all_gather(std::as_bytes(std::span(&mine, 1)));
    const int cores = CPU_COUNT(&mine.cores);
    found.rank_cores = cores;
    int sharing = 0;  // the ranks of this host that may run on one of this rank's cores
    found.ranks_on_host = 0;
    for (const auto& bytes : all) {
        HostCores theirs;
        std::memcpy(&theirs, bytes.data(), std::min(bytes.size(), sizeof theirs));
        if (std::strncmp(theirs.host, mine.host, sizeof mine.host) != 0) continue;
        ++found.ranks_on_host;
        cpu_set_t common;
        CPU_AND(&common, &theirs.cores, &mine.cores);
        if (CPU_COUNT(&common) > 0) ++sharing;
    }
    if (mine.threads_set || cores == 0) return found;
    found.threads = std::max(1, cores / std::max(1, sharing));
    omp_set_num_threads(found.threads);
    return found;
}

}  // namespace simrun::solvers

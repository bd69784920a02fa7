#pragma once
// The CPU cores of a host shared by the ranks that run on it. Each rank's OpenMP threads (the CPU
// back-end, assembly, the host's set-up) would otherwise take every core the rank may run on, so
// K ranks left unbound on one host (mpirun --bind-to none, or bound to a shared socket) start K
// times as many threads as there are cores, and each parallel loop waits for threads the others
// preempt. Ranks bound to cores of their own (mpirun --bind-to core) keep their cores.
#include <string>

#include "simrun/solvers/base/communicator.hpp"

namespace simrun::solvers {

// What share_host_cores found for this rank.
struct HostShare {
    int threads = 1;           // this rank's OpenMP threads
    int rank_cores = 0;        // the cores this rank may run on (0: unknown)
    int host_cores = 0;        // the cores of its host online (0: unknown)
    int ranks_on_host = 1;     // the ranks on its host, itself included
    bool threads_set = false;  // OMP_NUM_THREADS set
};

// Collective (every rank calls it, whatever its environment). Where this rank's
// OMP_NUM_THREADS is unset and several ranks run on its host, sets this rank's OpenMP threads
// (those of the calling thread's parallel regions) to the cores it may run on divided by the
// ranks of its host (by host name) that may run on any of them, itself included, at least one.
// Returns what it found and chose (threads: omp_get_max_threads() where nothing was changed: one
// rank, or OMP_NUM_THREADS set); host_share() gives it again afterwards.
HostShare share_host_cores(const Communicator& ranks);
const HostShare& host_share();

// The header's words for a rank's host threads: "16 host threads per rank"; where the launcher
// bound each rank to half its share of the host's CPUs or less (Open MPI's mpirun binds each to
// one core, 1 or 2 CPUs, for 2 ranks or fewer), what that costs and the option that gives each
// rank its share. (host_share() before share_host_cores: 1 thread, nothing known.)
std::string describe_host_threads(const HostShare& share);

}  // namespace simrun::solvers

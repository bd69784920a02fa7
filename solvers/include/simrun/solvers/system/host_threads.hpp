#pragma once
// The CPU cores of a host shared by the ranks that run on it. Each rank's OpenMP threads (the CPU
// back-end, assembly, the host's set-up) would otherwise take every core the rank may run on, so
// K ranks left unbound on one host (mpirun --bind-to none, or bound to a shared socket) start K
// times as many threads as there are cores, and each parallel loop waits for threads the others
// preempt. Ranks bound to cores of their own (mpirun --bind-to core) keep their cores.
#include "simrun/solvers/base/communicator.hpp"

namespace simrun::solvers {

// Collective (every rank calls it, whatever its environment). Where this rank's
// OMP_NUM_THREADS is unset and several ranks run on its host, sets this rank's OpenMP threads
// (those of the calling thread's parallel regions) to the cores it may run on divided by the
// ranks of its host (by host name) that may run on any of them, itself included, at least one.
// Returns the threads chosen, or omp_get_max_threads() where nothing was changed (one rank, or
// OMP_NUM_THREADS set).
int share_host_cores(const Communicator& ranks);

}  // namespace simrun::solvers

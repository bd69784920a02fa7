// The simrun executable: the framework's command line, linked with every problem module.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "commands/command_line.hpp"

namespace {

// OpenMP threads that spin at every barrier while waiting hold their core: with another busy
// process on the machine (a second simrun, a build) every barrier waits for a preempted thread
// and a 0.3 s solve takes seconds. Sleeping waiters (passive) cost nothing measurable alone and
// keep a shared machine usable. libgomp reads OMP_WAIT_POLICY once, when it is loaded, before
// main runs: so when the user set no policy, simrun sets passive and starts itself again (one
// exec, about a millisecond). A policy the user set is kept.
void default_to_passive_waiting(char** argv) {
    if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
    if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
    execv("/proc/self/exe", argv);  // returns only on failure: go on with the default policy
}

}  // namespace

int main(int argc, char** argv) {
    default_to_passive_waiting(argv);
    const int status = simrun::app::run_command_line(argc, argv);
    // What was printed must have reached its destination (a full disk, /dev/full, a closed
    // pipe): a result that was never written is a failure, whatever the command decided.
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
        std::fprintf(stderr, "simrun: error: cannot write the output: %s\n", std::strerror(errno));
        return status == 0 ? 1 : status;
    }
    return status;
}

#pragma once
// The CUDA context made on a thread of its own while the host does other work (reads and checks
// a run's input), so that the back-end made afterwards (choose_backend, make_backend) finds it
// ready: the driver's start and the context are most of a CUDA back-end's cost to make.
#include <exception>
#include <thread>

#include "simrun/solvers/base/backend.hpp"

namespace simrun::solvers {

// Makes the CUDA runtime's primary context on the GPU that a rank numbered `host_rank` on its
// host takes (host_rank modulo the GPUs, as choose_backend does). Returns false, having made
// none, in a build without CUDA or where no GPU is usable; a CUDA error is not raised here (the
// back-end made afterwards meets it again and reports it). Safe on any thread.
bool open_cuda_context(int host_rank);

// A context being made for a back-end of `choice`: started on construction where the run may
// use CUDA (automatic or cuda, in a build with CUDA), nothing started otherwise (the CPU named,
// a build without CUDA: no thread, no CUDA call). join() waits for it; the destructor joins
// too, so that no thread outlives it. Neither results nor errors change: the back-end is made
// as before, on a context that may already be there.
class BackendPreparation {
public:
    BackendPreparation(BackendChoice choice, int host_rank);
    ~BackendPreparation();
    BackendPreparation(const BackendPreparation&) = delete;
    BackendPreparation& operator=(const BackendPreparation&) = delete;

    // Whether a thread was started.
    bool started() const { return started_; }
    // Waits for the thread (at once after the first call, or where none started) and returns
    // the seconds this call waited. Rethrows what the thread threw (std::bad_alloc, say), once.
    double join();

private:
    std::thread thread_;
    std::exception_ptr failure_;
    bool started_ = false;
};

}  // namespace simrun::solvers

#pragma once
// A fixed set of threads that share the indices of one loop at a time, for the writers' bulk
// work (compressing a field's blocks, writing them to the file) without a thread per call.
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace simrun::framework {

class WorkerPool {
public:
    // `threads` in all, the caller of run() included: threads - 1 are started (none for 0 or 1).
    explicit WorkerPool(std::size_t threads);
    ~WorkerPool();
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    std::size_t size() const { return workers_.size() + 1; }
    // Calls task(i) for every i in [0, count), on the pool's threads and the caller's, and
    // returns when all calls have returned. The first exception a call throws is rethrown here
    // (the indices not started by then are skipped). One run() at a time.
    void run(std::size_t count, const std::function<void(std::size_t)>& task);

private:
    // Takes indices of the current loop until none is left.
    void take_indices(std::unique_lock<std::mutex>& lock);
    void work();
    void stop();

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable started_;   // a loop was started, or the pool closes
    std::condition_variable finished_;  // a thread left the current loop
    const std::function<void(std::size_t)>* task_ = nullptr;
    std::size_t count_ = 0;
    std::size_t next_ = 0;        // the next index to hand out
    std::size_t busy_ = 0;        // threads inside the current loop
    std::size_t generation_ = 0;  // loops started so far
    std::exception_ptr error_;
    bool closing_ = false;
};

}  // namespace simrun::framework

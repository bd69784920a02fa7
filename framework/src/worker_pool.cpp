#include "worker_pool.hpp"

#include <utility>

namespace simrun::framework {

WorkerPool::WorkerPool(std::size_t threads) {
    try {
        for (std::size_t t = 1; t < threads; ++t) workers_.emplace_back([this] { work(); });
    } catch (...) {
        stop();
        throw;
    }
}

WorkerPool::~WorkerPool() { stop(); }

void WorkerPool::stop() {
    {
        const std::lock_guard lock(mutex_);
        closing_ = true;
    }
    started_.notify_all();
    for (auto& worker : workers_) {
        if (worker.joinable()) worker.join();
    }
}

void WorkerPool::take_indices(std::unique_lock<std::mutex>& lock) {
    ++busy_;
    while (next_ < count_ && !error_) {
        const std::size_t index = next_++;
        lock.unlock();
        std::exception_ptr failure;
        try {
            (*task_)(index);
        } catch (...) {
            failure = std::current_exception();
        }
        lock.lock();
        if (failure && !error_) error_ = failure;
    }
    --busy_;
    finished_.notify_all();
}

void WorkerPool::run(std::size_t count, const std::function<void(std::size_t)>& task) {
    std::unique_lock lock(mutex_);
    task_ = &task;
    count_ = count;
    next_ = 0;
    error_ = nullptr;
    ++generation_;
    if (!workers_.empty() && count > 1) started_.notify_all();
    take_indices(lock);
    // Every index is handed out: wait for the calls still running on other threads.
    finished_.wait(lock, [this] { return busy_ == 0; });
    task_ = nullptr;
    count_ = 0;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void WorkerPool::work() {
    std::unique_lock lock(mutex_);
    std::size_t seen = 0;
    for (;;) {
        started_.wait(lock, [&] { return closing_ || generation_ != seen; });
        if (closing_) return;
        seen = generation_;
        if (task_ != nullptr) take_indices(lock);
    }
}

}  // namespace simrun::framework

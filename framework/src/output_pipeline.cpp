#include "output_pipeline.hpp"

#include <utility>

#include "simrun/framework/field.hpp"

namespace simrun::framework {

OutputPipeline::OutputPipeline(std::unique_ptr<VtkSeriesWriter> vtk,
                               std::unique_ptr<Hdf5RunWriter> hdf5)
    : vtk_(std::move(vtk)), hdf5_(std::move(hdf5)), thread_([this] { work(); }) {}

OutputPipeline::~OutputPipeline() { close(); }

void OutputPipeline::submit(OutputJob job) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return queue_.size() < capacity || error_; });
    if (error_) std::rethrow_exception(error_);
    queue_.push_back(std::move(job));
    lock.unlock();
    changed_.notify_all();
}

void OutputPipeline::finish() {
    close();
    if (error_) std::rethrow_exception(error_);
}

void OutputPipeline::close() {
    {
        const std::lock_guard lock(mutex_);
        closing_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void OutputPipeline::work() {
    for (;;) {
        OutputJob job;
        {
            std::unique_lock lock(mutex_);
            changed_.wait(lock, [this] { return !queue_.empty() || closing_; });
            if (queue_.empty()) return;
            job = std::move(queue_.front());
            queue_.pop_front();
            // After a failure the remaining steps are dropped: no step follows a missing one.
            if (error_) continue;
        }
        changed_.notify_all();
        try {
            write(job);
        } catch (...) {
            {
                const std::lock_guard lock(mutex_);
                error_ = std::current_exception();
            }
            changed_.notify_all();
        }
    }
}

void OutputPipeline::write(const OutputJob& job) const {
    const FieldView fields[] = {{"u", job.u}};
    if (vtk_ && job.vtk) vtk_->write_step(job.step, job.time, fields);
    if (hdf5_ && job.hdf5) hdf5_->write_step(job.step, job.time, fields, job.statistics);
}

}  // namespace simrun::framework

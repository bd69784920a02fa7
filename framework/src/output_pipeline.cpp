#include "output_pipeline.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "simrun/framework/field.hpp"

namespace simrun::framework {

OutputPipeline::OutputPipeline(std::unique_ptr<VtkSeriesWriter> vtk,
                               std::unique_ptr<Hdf5RunWriter> hdf5, std::size_t field_size,
                               std::size_t buffer_bytes)
    : vtk_(std::move(vtk)),
      hdf5_(std::move(hdf5)),
      field_size_(field_size),
      max_buffers_(std::max(min_buffers,
                            buffer_bytes / std::max<std::size_t>(1, field_size * sizeof(double)))) {
    if (vtk_) {
        stages_.emplace_back([this](const Job& job) {
            const FieldView fields[] = {{"u", job.u}};
            if (job.vtk) vtk_->write_step(job.step, job.time, fields);
        });
    }
    if (hdf5_) {
        stages_.emplace_back([this](const Job& job) {
            const FieldView fields[] = {{"u", job.u}};
            if (job.hdf5) hdf5_->write_step(job.step, job.time, fields, job.statistics);
        });
    }
    if (stages_.empty()) throw std::invalid_argument("output pipeline without a writer");
    try {
        for (std::size_t i = 0; i < stages_.size(); ++i) {
            stages_[i].thread = std::thread([this, i] { work(i); });
        }
    } catch (...) {
        close();
        throw;
    }
}

OutputPipeline::~OutputPipeline() { close(); }

void OutputPipeline::submit(OutputStep step,
                            const std::function<void(std::span<double>)>& copy_field) {
    std::vector<double> u;
    {
        std::unique_lock lock(mutex_);
        changed_.wait(
            lock, [this] { return !free_buffers_.empty() || buffers_ < max_buffers_ || error_; });
        if (error_) std::rethrow_exception(error_);
        if (free_buffers_.empty()) {
            ++buffers_;  // allocated below, outside the lock
        } else {
            u = std::move(free_buffers_.back());
            free_buffers_.pop_back();
        }
    }
    try {
        u.resize(field_size_);
        copy_field(u);
    } catch (...) {
        // Kept for the next step (empty if its allocation failed).
        const std::lock_guard lock(mutex_);
        free_buffers_.push_back(std::move(u));
        throw;
    }
    {
        const std::lock_guard lock(mutex_);
        stages_.front().queue.push_back({std::move(step), std::move(u)});
    }
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
    for (auto& stage : stages_) {
        if (stage.thread.joinable()) stage.thread.join();
    }
}

bool OutputPipeline::upstream_done(std::size_t index) const {
    return index == 0 ? closing_ : stages_[index - 1].done;
}

void OutputPipeline::work(std::size_t index) {
    Stage& stage = stages_[index];
    std::unique_lock lock(mutex_);
    for (;;) {
        changed_.wait(lock, [&] { return !stage.queue.empty() || upstream_done(index); });
        if (stage.queue.empty()) break;
        Job job = std::move(stage.queue.front());
        stage.queue.pop_front();
        bool written = false;
        if (index >= stopped_stages_) {
            lock.unlock();
            std::exception_ptr failure;
            try {
                stage.write(job);
            } catch (...) {
                failure = std::current_exception();
            }
            lock.lock();
            if (failure) {
                if (!error_) error_ = failure;
                stopped_stages_ = std::max(stopped_stages_, index + 1);
            }
            written = !failure;
        }
        if (written && index + 1 < stages_.size()) {
            stages_[index + 1].queue.push_back(std::move(job));
        } else {
            free_buffers_.push_back(std::move(job.u));
        }
        changed_.notify_all();
    }
    stage.done = true;
    changed_.notify_all();
}

}  // namespace simrun::framework

#include "output_pipeline.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "simrun/framework/discretisation/field.hpp"

namespace simrun::framework {
namespace {

bool is_peer_failure(const std::exception_ptr& failure) {
    try {
        std::rethrow_exception(failure);
    } catch (const solvers::PeerFailure&) {
        return true;
    } catch (...) {
        return false;
    }
}

}  // namespace

OutputPipeline::Buffer::Buffer(std::shared_ptr<const solvers::Backend> backend, std::size_t size)
    : backend_(std::move(backend)),
      data_(static_cast<double*>(backend_->allocate_host(size * sizeof(double)))),
      size_(size) {}

OutputPipeline::Buffer::~Buffer() {
    if (data_ != nullptr) backend_->release_host(data_);
}

OutputPipeline::Buffer::Buffer(Buffer&& other) noexcept
    : backend_(std::move(other.backend_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

OutputPipeline::OutputPipeline(std::unique_ptr<VtkSeriesWriter> vtk,
                               std::unique_ptr<Hdf5RunWriter> hdf5, std::size_t field_size,
                               std::shared_ptr<const solvers::Backend> host_memory,
                               std::size_t buffer_bytes, std::size_t hdf5_field_size)
    : vtk_(std::move(vtk)),
      hdf5_(std::move(hdf5)),
      field_size_(field_size),
      host_memory_(std::move(host_memory)),
      max_buffers_(std::max(min_buffers,
                            buffer_bytes / std::max<std::size_t>(1, field_size * sizeof(double)))) {
    if (!host_memory_) throw std::invalid_argument("output pipeline without host memory");
    if (vtk_) {
        stages_.emplace_back().write = [this](const Job& job) {
            const FieldView fields[] = {{"u", job.values()}};
            if (job.vtk) vtk_->write_step(job.step, job.time, fields);
        };
    }
    if (hdf5_) {
        Stage& stage = stages_.emplace_back();
        const std::size_t values = hdf5_field_size == 0 ? field_size : hdf5_field_size;
        if (values > field_size) throw std::invalid_argument("HDF5 field larger than the field");
        stage.write = [this, values](const Job& job) {
            const FieldView fields[] = {
                {"u", job.values().first(std::min(values, job.values().size()))}};
            if (job.hdf5) hdf5_->stage_step(job.step, job.time, fields, job.statistics);
        };
        stage.commit = [this](const Job& job) {
            if (job.hdf5) hdf5_->commit_staged();
        };
        stage.discard = [this] { hdf5_->discard_staged(); };
    }
    if (stages_.empty()) throw std::invalid_argument("output pipeline without a writer");
    try {
        preparer_ = std::thread([this] { prepare_buffers(min_buffers); });
        for (std::size_t i = 0; i < stages_.size(); ++i) {
            stages_[i].thread = std::thread([this, i] { work(i); });
        }
    } catch (...) {
        close();
        throw;
    }
}

OutputPipeline::~OutputPipeline() { close(); }

// Allocation and first touch of a field's pages (milliseconds for 8 MB, and pinning on CUDA)
// happen here while the loop computes, instead of in the loop's first hand-overs.
void OutputPipeline::prepare_buffers(std::size_t count) {
    std::unique_lock lock(mutex_);
    for (std::size_t i = 0; i < count && !closing_ && !error_; ++i) {
        ++buffers_;
        lock.unlock();
        std::optional<Buffer> buffer;
        std::exception_ptr failure;
        try {
            buffer.emplace(host_memory_, field_size_);
            std::fill(buffer->values().begin(), buffer->values().end(), 0.0);
        } catch (...) {
            failure = std::current_exception();
        }
        lock.lock();
        if (buffer) {
            free_buffers_.push_back(std::move(*buffer));
        } else {
            --buffers_;
            store(failure);
        }
        changed_.notify_all();
    }
    preparing_ = false;
    changed_.notify_all();
}

std::optional<OutputPipeline::Buffer> OutputPipeline::take_buffer() {
    {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] {
            return !free_buffers_.empty() || (!preparing_ && buffers_ < max_buffers_) || error_;
        });
        if (error_) return std::nullopt;
        if (!free_buffers_.empty()) {
            std::optional<Buffer> buffer(std::move(free_buffers_.back()));
            free_buffers_.pop_back();
            return buffer;
        }
        ++buffers_;  // allocated below, outside the lock
    }
    try {
        return std::optional<Buffer>(std::in_place, host_memory_, field_size_);
    } catch (...) {
        const std::lock_guard lock(mutex_);
        --buffers_;
        store(std::current_exception());
        return std::nullopt;
    }
}

void OutputPipeline::submit(OutputStep step,
                            const std::function<void(std::span<double>)>& copy_field) {
    std::optional<Buffer> buffer = take_buffer();
    // The step is queued whatever happens below: every rank's writers are handed the same
    // steps (see the header).
    std::exception_ptr failure;
    try {
        if (buffer) {
            copy_field(buffer->values());
        } else {
            // What copy_field does beside copying (over ranks, an exchange with the
            // neighbouring ranks) must happen on every rank.
            std::vector<double> scratch(field_size_);
            copy_field(scratch);
        }
    } catch (...) {
        failure = std::current_exception();
    }
    {
        const std::lock_guard lock(mutex_);
        if (failure && buffer) {
            free_buffers_.push_back(std::move(*buffer));  // kept for the next step
            buffer.reset();
        }
        const auto job =
            std::make_shared<Job>(std::move(step), submitted_++, std::move(buffer), stages_.size());
        for (auto& stage : stages_) stage.queue.push_back(job);
        if (!failure && error_) failure = own_error_ ? own_error_ : error_;
    }
    changed_.notify_all();
    if (failure) std::rethrow_exception(failure);
}

std::exception_ptr OutputPipeline::wait_for_failure() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] {
        if (own_error_) return true;
        for (const Stage& stage : stages_) {
            if (!stage.queue.empty() || (stage.completed < submitted_ && !stage.stopped)) {
                return false;
            }
        }
        return true;
    });
    return own_error_ ? own_error_ : error_;
}

void OutputPipeline::finish() {
    close();
    // The indexes list every step written (they are rewritten on a schedule, not each step).
    try {
        if (vtk_) vtk_->write_index();
        if (hdf5_) hdf5_->write_index();
    } catch (...) {
        store(std::current_exception());
    }
    if (error_) std::rethrow_exception(error_);
}

void OutputPipeline::close() {
    {
        const std::lock_guard lock(mutex_);
        closing_ = true;
    }
    changed_.notify_all();
    if (preparer_.joinable()) preparer_.join();
    for (auto& stage : stages_) {
        if (stage.thread.joinable()) stage.thread.join();
    }
}

void OutputPipeline::store(const std::exception_ptr& failure) {
    if (!error_) error_ = failure;
    if (!own_error_ && !is_peer_failure(failure)) own_error_ = failure;
}

bool OutputPipeline::attempt(std::unique_lock<std::mutex>& lock, std::size_t index,
                             const std::function<void()>& action) {
    lock.unlock();
    std::exception_ptr failure;
    try {
        action();
    } catch (...) {
        failure = std::current_exception();
    }
    lock.lock();
    if (!failure) return true;
    store(failure);
    stages_[index].stopped = true;
    return false;
}

void OutputPipeline::work(std::size_t index) {
    Stage& stage = stages_[index];
    std::unique_lock lock(mutex_);
    for (;;) {
        changed_.wait(lock, [&] { return !stage.queue.empty() || closing_; });
        if (stage.queue.empty()) break;
        const std::shared_ptr<Job> job = std::move(stage.queue.front());
        stage.queue.pop_front();
        if (!stage.stopped && attempt(lock, index, [&] { stage.write(*job); })) {
            bool complete = !stage.commit;
            if (stage.commit) {
                // The job has every earlier stage's step once the previous stage completed it;
                // a stopped previous stage never will.
                auto previous_has_it = [&] {
                    return index == 0 || stages_[index - 1].completed > job->sequence;
                };
                changed_.wait(lock,
                              [&] { return previous_has_it() || stages_[index - 1].stopped; });
                if (previous_has_it()) {
                    complete = attempt(lock, index, [&] { stage.commit(*job); });
                } else {
                    attempt(lock, index, [&] { stage.discard(); });
                    stage.stopped = true;
                }
            }
            if (complete) stage.completed = job->sequence + 1;
        }
        if (--job->holders == 0 && job->u) free_buffers_.push_back(std::move(*job->u));
        changed_.notify_all();
    }
}

}  // namespace simrun::framework

#pragma once
// Asynchronous output: the run loop hands each output step to the pipeline, which copies the
// field into a recycled host buffer and queues it; one thread per writer (the VTK series and
// the HDF5 run file) writes the steps in order, both writers working on the same step at once,
// so that writing overlaps computing and an output costs the slower writer's time, not the sum.
//
// Cost on the run loop per output step: the copy of the field from the back-end into a buffer
// from Backend::allocate_host (pinned on CUDA: a DMA at the bus's speed; on the CPU a parallel
// copy); nothing else, while the buffers last. The first min_buffers buffers are allocated
// (and their pages touched) by a thread of the pipeline, not by the loop.
//
// Order: the HDF5 writer writes a step's data while the VTK writer writes its .vti, but makes
// it visible (flush, .xmf) only once the .vti is written, so each series is a prefix of the
// steps handed over and the .pvd lists every step the .h5 holds (a restart continues from the
// .h5's last step and drops the .pvd entries after it).
//
// Over ranks each writer meets the other ranks' same writer in collectives at every step, so
// every rank's writer must be handed the same steps and stop at the same one. Both follow from
// decisions every rank makes alike: every submit() queues its step, on every rank (a step
// handed over once the writers have failed, or whose buffer could not be had, goes without its
// field, and a writer still running fails on it, agreed among the ranks as its other failures
// are); a writer stops only at its own failure (agreed) or where the writer before it stopped
// short of the step (which that writer's agreement decided), never on another thread's timing.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "simrun/framework/output/hdf5_run_writer.hpp"
#include "simrun/framework/output/vtk_series_writer.hpp"
#include "simrun/solvers/base/backend.hpp"

namespace simrun::framework {

struct OutputStep {
    std::int64_t step = 0;
    double time = 0.0;
    StepStatistics statistics;
    bool vtk = true;   // write the step to the VTK series (when there is one)
    bool hdf5 = true;  // ... and to the HDF5 file
};

class OutputPipeline {
public:
    // Host memory for the fields handed over and not yet written (kept for reuse until the
    // pipeline ends): 32 fields of 1024^2 doubles, so that a burst of output steps, or a writer
    // slowed by the file system, does not hold the run loop back; bounded for large 3D fields.
    static constexpr std::size_t default_buffer_bytes = std::size_t{256} << 20;
    // One field being written and one being filled, and one to spare, whatever the field size.
    static constexpr std::size_t min_buffers = 3;

    // Starts one writer thread per writer given (a null writer is an output that is off; at
    // least one must be given, else std::invalid_argument) and a thread that allocates the
    // first min_buffers buffers from `host_memory` (allocate_host). field_size: values per
    // field; hdf5_field_size (0: field_size): how many of them, from the first, the HDF5
    // writer takes (a rank's own nodes, where its VTK piece holds one more plane).
    OutputPipeline(std::unique_ptr<VtkSeriesWriter> vtk, std::unique_ptr<Hdf5RunWriter> hdf5,
                   std::size_t field_size, std::shared_ptr<const solvers::Backend> host_memory,
                   std::size_t buffer_bytes = default_buffer_bytes,
                   std::size_t hdf5_field_size = 0);
    // Writes the steps still queued (a run stopped by an error keeps the steps it handed over)
    // and joins the threads; a writer error stored by then is dropped, as the error that ends
    // the run is being reported.
    ~OutputPipeline();
    OutputPipeline(const OutputPipeline&) = delete;
    OutputPipeline& operator=(const OutputPipeline&) = delete;

    // Takes a host buffer of field_size values (one the writers are done with; else a new one
    // while the buffers take at most max(buffer_bytes, min_buffers fields); else waits for
    // one), has copy_field overwrite all its values, and queues the step. Once the writers
    // have failed (or the buffer's allocation fails) the step is queued without its field
    // (copy_field still runs, into a scratch buffer) and their first error is rethrown; an
    // exception from copy_field propagates and the step is queued without its field.
    void submit(OutputStep step, const std::function<void(std::span<double>)>& copy_field);
    // Waits until every step is written and joins the threads; rethrows the writers' first
    // error. Nothing may be submitted afterwards.
    void finish();
    // Waits until a writer fails here (not solvers::PeerFailure: another rank's failure) or
    // every writer has done or dropped every step queued; returns that failure, else the
    // writers' first error (null where none failed). For a rank that the other ranks learnt
    // had failed, before its own writer's error reached it.
    std::exception_ptr wait_for_failure();

private:
    // field_size values from Backend::allocate_host, released with it.
    class Buffer {
    public:
        Buffer(std::shared_ptr<const solvers::Backend> backend, std::size_t size);
        ~Buffer();
        Buffer(Buffer&& other) noexcept;
        Buffer& operator=(Buffer&& other) = delete;
        Buffer(const Buffer&) = delete;
        Buffer& operator=(const Buffer&) = delete;
        std::span<double> values() const { return {data_, size_}; }

    private:
        std::shared_ptr<const solvers::Backend> backend_;
        double* data_;
        std::size_t size_;
    };
    struct Job : OutputStep {
        Job(OutputStep output, std::uint64_t number, std::optional<Buffer> field,
            std::size_t writers)
            : OutputStep(std::move(output)),
              sequence(number),
              u(std::move(field)),
              holders(writers) {}
        // The field handed over; empty (no values) for a step handed over without it.
        std::span<double> values() const { return u ? u->values() : std::span<double>(); }
        std::uint64_t sequence;   // order of submission, from 0
        std::optional<Buffer> u;  // the field on the host, in Grid node order; none: not had
        std::size_t holders;      // stages not yet done with it; at 0 the buffer is free again
    };
    // One writer with its thread and the jobs waiting for it. A two-phase writer (commit set)
    // writes a job, then commits it once the previous stage has completed that job, or
    // discards it if that stage has stopped before it.
    struct Stage {
        std::function<void(const Job&)> write;
        std::function<void(const Job&)> commit;  // null: write() alone completes a job
        std::function<void()> discard;
        std::deque<std::shared_ptr<Job>> queue;
        std::uint64_t completed = 0;  // jobs [0, completed) are written (or skipped) here
        bool stopped = false;  // failed, or the previous stage stopped short: jobs are dropped
        std::thread thread;
    };

    void work(std::size_t index);
    // Runs `action` without the lock; a failure is stored (the first one is rethrown to the
    // loop) and stops stage `index` (the later stages stop where they reach a job it did not
    // complete; the earlier ones go on: the .pvd may list steps the .h5 lacks, not the reverse).
    bool attempt(std::unique_lock<std::mutex>& lock, std::size_t index,
                 const std::function<void()>& action);
    // Keeps a failure (under the lock): the first one, and the first of this rank's own.
    void store(const std::exception_ptr& failure);
    void prepare_buffers(std::size_t count);
    void close();

    std::unique_ptr<VtkSeriesWriter> vtk_;
    std::unique_ptr<Hdf5RunWriter> hdf5_;
    std::size_t field_size_;
    std::shared_ptr<const solvers::Backend> host_memory_;
    std::size_t max_buffers_;
    std::mutex mutex_;
    // A job was queued or completed, a buffer was freed or prepared, or the pipeline closes.
    std::condition_variable changed_;
    std::vector<Stage> stages_;  // in commit order; fixed once the threads run
    std::vector<Buffer> free_buffers_;
    std::size_t buffers_ = 0;  // allocated (or being allocated): free, being filled, or in jobs
    bool preparing_ = true;    // the preparing thread has buffers still to allocate
    std::thread preparer_;
    std::uint64_t submitted_ = 0;
    bool closing_ = false;
    std::exception_ptr error_;
    std::exception_ptr own_error_;  // the first that is not another rank's (PeerFailure)
    // Takes a free buffer, or allocates one while the buffers allow; waits for one otherwise.
    // None where the writers have failed or the allocation fails (that error is stored).
    std::optional<Buffer> take_buffer();
};

}  // namespace simrun::framework

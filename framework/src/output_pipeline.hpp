#pragma once
// Asynchronous output: the run loop hands each output step to the pipeline, which copies the
// field into a recycled host buffer and queues it; one thread per writer (the VTK series, then
// the HDF5 run file) writes the steps in order, so that writing overlaps computing and the two
// writers overlap each other (an output costs the slower writer's time, not the sum).
//
// Order: a step reaches the HDF5 writer once the VTK writer is done with it, so each series is
// a prefix of the steps handed over and the .pvd lists every step the .h5 holds (a restart
// continues from the .h5's last step and drops the .pvd entries after it).
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "simrun/framework/hdf5_run_writer.hpp"
#include "simrun/framework/vtk_series_writer.hpp"

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
    // One field per writer being written and one being filled, whatever the field size.
    static constexpr std::size_t min_buffers = 3;

    // Starts one writer thread per writer given (a null writer is an output that is off; at
    // least one must be given, else std::invalid_argument). field_size: values per field.
    OutputPipeline(std::unique_ptr<VtkSeriesWriter> vtk, std::unique_ptr<Hdf5RunWriter> hdf5,
                   std::size_t field_size, std::size_t buffer_bytes = default_buffer_bytes);
    // Writes the steps still queued (a run stopped by an error keeps the steps it handed over)
    // and joins the threads; a writer error stored by then is dropped, as the error that ends
    // the run is being reported.
    ~OutputPipeline();
    OutputPipeline(const OutputPipeline&) = delete;
    OutputPipeline& operator=(const OutputPipeline&) = delete;

    // Takes a host buffer of field_size values (one the writers are done with; else a new one
    // while the buffers take at most max(buffer_bytes, min_buffers fields); else waits for
    // one), has copy_field overwrite all its values, and queues the step. Rethrows the writers'
    // first error, after which nothing more is queued; an exception from copy_field propagates
    // and queues nothing.
    void submit(OutputStep step, const std::function<void(std::span<double>)>& copy_field);
    // Waits until every step is written and joins the threads; rethrows the writers' first
    // error. Nothing may be submitted afterwards.
    void finish();

private:
    struct Job : OutputStep {
        std::vector<double> u;  // the field on the host, in Grid node order
    };
    // One writer with its thread and the jobs waiting for it; a job it has written moves on to
    // the next stage, and after the last one its buffer is free again.
    struct Stage {
        explicit Stage(std::function<void(const Job&)> writer) : write(std::move(writer)) {}
        std::function<void(const Job&)> write;
        std::deque<Job> queue;
        bool done = false;  // its thread has ended: no job comes from it any more
        std::thread thread;
    };

    void work(std::size_t index);
    bool upstream_done(std::size_t index) const;
    void close();

    std::unique_ptr<VtkSeriesWriter> vtk_;
    std::unique_ptr<Hdf5RunWriter> hdf5_;
    std::size_t field_size_;
    std::size_t max_buffers_;
    std::mutex mutex_;
    // A job was queued or moved on, a buffer was freed, a thread ended, or the pipeline closes.
    std::condition_variable changed_;
    std::vector<Stage> stages_;  // in writing order; fixed once the threads run
    std::vector<std::vector<double>> free_buffers_;
    std::size_t buffers_ = 0;  // allocated: free, being filled, or in a stage
    bool closing_ = false;
    std::exception_ptr error_;
    // Stages [0, stopped_stages_) drop their jobs: they or a later stage failed, and no step may
    // follow a missing one. Later stages go on with the jobs that passed the failed one.
    std::size_t stopped_stages_ = 0;
};

}  // namespace simrun::framework

#pragma once
// Asynchronous output: the run loop hands each output step (a host copy of the field with its
// statistics) to one writer thread, which writes the VTK series and then the HDF5 run file, so
// that writing overlaps computing the following steps.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "simrun/framework/hdf5_run_writer.hpp"
#include "simrun/framework/vtk_series_writer.hpp"

namespace simrun::framework {

struct OutputJob {
    std::int64_t step = 0;
    double time = 0.0;
    std::vector<double> u;  // the field on the host, in Grid node order
    StepStatistics statistics;
    bool vtk = true;   // write the step to the VTK series (when there is one)
    bool hdf5 = true;  // ... and to the HDF5 file
};

class OutputPipeline {
public:
    // Jobs handed over and not yet taken by the writer; submit() waits while this many wait.
    static constexpr std::size_t capacity = 2;

    // Starts the writer thread; a null writer is an output that is off.
    OutputPipeline(std::unique_ptr<VtkSeriesWriter> vtk, std::unique_ptr<Hdf5RunWriter> hdf5);
    // Writes the jobs still queued (a run stopped by an error keeps the steps it handed over)
    // and joins the thread; a writer error stored by then is dropped, as the error that ends
    // the run is being reported.
    ~OutputPipeline();
    OutputPipeline(const OutputPipeline&) = delete;
    OutputPipeline& operator=(const OutputPipeline&) = delete;

    // Queues a job. Rethrows the writer's first error, after which nothing more is written.
    void submit(OutputJob job);
    // Waits until every job is written and joins the thread; rethrows the writer's first
    // error. Nothing may be submitted afterwards.
    void finish();

private:
    void work();
    void write(const OutputJob& job) const;
    void close();

    std::unique_ptr<VtkSeriesWriter> vtk_;
    std::unique_ptr<Hdf5RunWriter> hdf5_;
    std::mutex mutex_;
    std::condition_variable changed_;  // a job was queued or taken, or the pipeline closes
    std::deque<OutputJob> queue_;
    bool closing_ = false;
    std::exception_ptr error_;
    std::thread thread_;  // last: it starts once the members it uses exist
};

}  // namespace simrun::framework

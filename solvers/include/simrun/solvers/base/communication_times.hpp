#pragma once
// What a rank's communication costs it: how often it exchanged halos with its neighbours, took
// part in a global sum and in a gather, the wall seconds it spent there and the bytes it sent.
// Each Communicator keeps its own counts (Communicator::times()); a solve reports the difference
// over it (SolveReport::communication), so a distributed run can say what share of its solver
// time the ranks spent talking. On one process every count stays zero.
#include <chrono>
#include <cstdint>

namespace simrun::solvers {

// One kind of communication.
struct CommunicationCost {
    std::int64_t count = 0;
    double seconds = 0.0;     // wall time this rank spent in it
    double bytes_sent = 0.0;  // by this rank

    CommunicationCost& operator+=(const CommunicationCost& more) {
        count += more.count;
        seconds += more.seconds;
        bytes_sent += more.bytes_sent;
        return *this;
    }
    CommunicationCost operator-(const CommunicationCost& earlier) const {
        return {count - earlier.count, seconds - earlier.seconds, bytes_sent - earlier.bytes_sent};
    }
};

struct CommunicationTimes {
    // Neighbour exchanges of halo rows and planes (the distributed product's and multigrid's).
    // Through the host: from the rows sent reaching the host (the wait for them, which waits
    // for the back-end's earlier work too, counts as work) to the copy of the rows received
    // onto the back-end issued (on a GPU not waited for: a few kilobytes in order with the
    // kernels); work that overlaps the messages (the product's own rows) is not counted. On
    // the GPUs (device_halo.hpp): the host's time issuing the copies, and the time the GPU
    // waited for the neighbours' rows (Backend::collect_device_halo_times adds it).
    CommunicationCost halo;
    // Global sums and minima: dot products, norms, agreements between the ranks.
    CommunicationCost reductions;
    // All-gathers and gathers: set-up, multigrid levels gathered whole on every rank.
    CommunicationCost gathers;

    CommunicationTimes& operator+=(const CommunicationTimes& more) {
        halo += more.halo;
        reductions += more.reductions;
        gathers += more.gathers;
        return *this;
    }
    CommunicationTimes operator-(const CommunicationTimes& earlier) const {
        return {halo - earlier.halo, reductions - earlier.reductions, gathers - earlier.gathers};
    }
    double seconds() const { return halo.seconds + reductions.seconds + gathers.seconds; }
};

// Adds the wall time from its construction to its destruction to `cost`, with `count`
// occurrences and `bytes_sent` bytes (count 0: a further part of an occurrence counted before).
class CommunicationTimer {
public:
    CommunicationTimer(CommunicationCost& cost, double bytes_sent, std::int64_t count = 1)
        : cost_(cost), start_(std::chrono::steady_clock::now()) {
        cost_.count += count;
        cost_.bytes_sent += bytes_sent;
    }
    ~CommunicationTimer() {
        cost_.seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }
    CommunicationTimer(const CommunicationTimer&) = delete;
    CommunicationTimer& operator=(const CommunicationTimer&) = delete;

private:
    CommunicationCost& cost_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace simrun::solvers

#pragma once
// What the ranks of a multigrid hierarchy split over a process grid (box_levels.hpp) send each
// other at every cycle: a level's halo (the points around each rank's part, from the ranks
// that hold them), and a level gathered whole on every rank. Through host memory (pinned on a
// GPU), the halo on the GPUs where the back-end can; on one rank none is made.
#include <cstdint>
#include <memory>
#include <vector>

#include "multigrid/slab_exchange.hpp"
#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"
#include "simrun/solvers/base/device_halo.hpp"
#include "simrun/solvers/boxes/box.hpp"

namespace simrun::solvers::multigrid {

// A vector of a level's window (this rank's part grown by a point inside the level's box, x
// fastest): the window's halo points take the values of the ranks that hold them. Each rank's
// points in another's window (a face, an edge or a corner of its part) are gathered into one
// buffer, sent (on the GPUs straight into the neighbour's memory where the back-end opens a
// device halo with a side per neighbour, device_halo.hpp; else through the host), and
// scattered into the neighbour's window on arrival.
template <typename T>
class BoxHalo {
public:
    // Collective (a device halo is opened with the neighbours): every rank makes its level's
    // halo at the same point. `parts`: every rank's part of `box`, in rank order.
    BoxHalo(std::shared_ptr<const Backend> backend, const GridBox& box,
            const std::vector<Box>& parts);
    ~BoxHalo();
    BoxHalo(const BoxHalo&) = delete;
    BoxHalo& operator=(const BoxHalo&) = delete;

    // Collective with the neighbours: the window's halo points take the neighbours' values,
    // for the back-end's work issued after it. Traffic: the points sent gathered (an index and
    // a value read, a value written each), sent, and the points received scattered (the same);
    // through the host, both staged with one wait for the back-end, counted in the
    // communicator's halo cost from that wait on.
    void exchange(T* window) const;

private:
    struct Side {
        int rank = 0;
        std::int64_t send_offset = 0, send_count = 0;
        std::int64_t receive_offset = 0, receive_count = 0;
    };
    std::shared_ptr<const Backend> backend_;
    std::vector<Side> sides_;
    std::int64_t sent_ = 0, received_ = 0;
    // The window's points sent (side after side) and those received (where they go).
    Array<std::int64_t> send_index_, receive_index_;
    mutable Array<T> send_buffer_, receive_buffer_;
    std::unique_ptr<DeviceHalo> device_;
    mutable std::vector<const void*> device_sends_;
    mutable std::vector<void*> device_receives_;
    T* staging_ = nullptr;  // pinned: sent, then received
};

// A level gathered whole on every rank, from each rank's part of it (in `window`, the part
// grown by a point, or the part itself on the finest level): gather() takes each rank's part
// from its window into `whole` on every rank, window_of() gives a window's values back from
// `whole`. Traffic per gather: the part gathered into its slot (LevelGather's parts, the ranks'
// parts in rank order), the LevelGather, the whole level put in order (an index and a value
// read, a value written per point); per window_of: a window of indices and values read.
template <typename T>
class BoxGather {
public:
    // Collective (LevelGather opens a device halo).
    BoxGather(std::shared_ptr<const Backend> backend, const GridBox& box,
              const std::vector<Box>& parts, const Box& window);
    void gather(const T* window, Array<T>& whole) const;
    void window_of(const Array<T>& whole, T* window) const;
    std::size_t window_points() const { return window_index_.size(); }

private:
    std::shared_ptr<const Backend> backend_;
    std::int64_t own_start_ = 0;
    Array<std::int64_t> own_index_;     // the window's own points, in the part's order
    Array<std::int64_t> whole_index_;   // each point of the whole: where it is in the parts
    Array<std::int64_t> window_index_;  // each point of the window: where it is in the whole
    mutable Array<T> parts_;            // every rank's part, in rank order
    std::unique_ptr<LevelGather<T>> gather_;
};

}  // namespace simrun::solvers::multigrid

#pragma once
// How a multigrid level reaches the next coarser one's vectors: where its restriction writes
// the coarse right side, what hands it down to the next level (its x set to zero), the b and x
// the next level's cycle is given, and where the interpolation reads the coarse correction.
// The cycle (cycle.cpp) asks only this; the layouts are its implementations (coarse_link.cpp).
#include <cstddef>
#include <memory>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/backend.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
struct Level;
struct HandoffPlan;

template <typename T>
class CoarseLink {
public:
    virtual ~CoarseLink() = default;
    // The b and x the next level's cycle takes.
    virtual T* next_b(Level<T>& next) const = 0;
    virtual T* next_x(Level<T>& next) const = 0;
    // Where the restriction writes the transfer's coarse points.
    virtual T* restricted(Level<T>& next) const = 0;
    // After the restriction: the coarse right side where the next level reads it, and the next
    // level's x set to zero.
    virtual void hand_down(Level<T>& next) const = 0;
    // After the next level's cycle: where the interpolation reads the coarse correction.
    virtual const T* take_up(Level<T>& next) const = 0;
    // The coarse points the transfer reaches (its traffic).
    virtual std::size_t coarse_points(const Level<T>& next) const = 0;
};

// The next level's own vectors, the transfer's coarse points from `offset` on in them (one
// process; a window of the next level; the next level gathered whole).
template <typename T>
std::unique_ptr<CoarseLink<T>> offset_link(std::shared_ptr<const Backend> backend,
                                           std::size_t offset);
// The next level split over fewer ranks (partitioned_levels.hpp): the level restricts into a
// window of the coarse points its transfer reaches; hand_down moves the points each rank
// restricted rightly (its own) to the ranks that hold them now, and take_up brings the coarse
// corrections back into the window for the interpolation (Redistribution, through the host:
// the level is small, split anew because its parts got thin).
template <typename T>
std::unique_ptr<CoarseLink<T>> handoff_link(std::shared_ptr<const Backend> backend,
                                            const HandoffPlan& handoff);
// The next level gathered from each rank's window of it (`window_points`): the transfer's
// coarse points in vectors of that window, which the next level's cycle is given.
template <typename T>
std::unique_ptr<CoarseLink<T>> window_link(std::shared_ptr<const Backend> backend,
                                           std::size_t window_points);

}  // namespace simrun::solvers::multigrid

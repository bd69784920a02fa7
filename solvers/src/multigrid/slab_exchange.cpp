#include "multigrid/slab_exchange.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "simrun/solvers/base/vector_ops.hpp"
#include "simrun/solvers/distributed/partition.hpp"

namespace simrun::solvers::multigrid {

namespace {

constexpr Box no_points{{0, 0, 0}, {0, 0, 0}};

// Planes [first, end) of a box of `plane` points a plane (one axis of them: a plane is one run).
Box planes_box(std::int64_t plane, std::int64_t first, std::int64_t end) {
    return end > first ? Box{{0, first, 0}, {plane, end, 1}} : no_points;
}

// Every rank's planes of a level as runs of its points (a rank's planes at its position 0).
VectorLayout plane_layout(const std::vector<PlaneRange>& ranges, std::int64_t plane) {
    VectorLayout layout(ranges.size());
    for (std::size_t q = 0; q < ranges.size(); ++q) {
        if (ranges[q].count() > 0) {
            layout[q].push_back({ranges[q].first * plane, 0, ranges[q].count() * plane});
        }
    }
    return layout;
}

}  // namespace

template <typename T>
SlabHalo<T>::SlabHalo(std::shared_ptr<const Backend> backend, std::int64_t plane,
                      std::int64_t planes, bool before, bool after) {
    // The slab partition as this rank sees it (the 1 x K case): its window's planes, its own
    // and a neighbour's plane on each side where it takes part; a plane is one run.
    const int rank = backend->communicator().rank();
    const std::int64_t first = before ? 1 : 0, end = first + planes;
    const GridBox window{2, {plane, end + (after ? 1 : 0), 1}};
    std::vector<Box> parts(static_cast<std::size_t>(backend->communicator().size()), no_points);
    parts[static_cast<std::size_t>(rank)] = planes_box(plane, first, end);
    if (before) parts[static_cast<std::size_t>(rank - 1)] = planes_box(plane, 0, 1);
    if (after) parts[static_cast<std::size_t>(rank + 1)] = planes_box(plane, end, end + 1);
    const Partition partition(window, std::move(parts), rank);
    halo_ = std::make_unique<HaloExchange<T>>(std::move(backend),
                                              halo_plan(partition, whole_part(window)));
}

template <typename V>
void move_planes(const Communicator& ranks, const std::vector<PlaneRange>& have,
                 const std::vector<PlaneRange>& want, std::int64_t plane, std::span<const V> from,
                 std::span<V> into) {
    const auto rank = static_cast<std::size_t>(ranks.rank());
    const PlaneRange& wanted = want[rank];
    const HaloPlan moves =
        redistribution_plan(ranks.rank(), plane_layout(have, plane), plane_layout(want, plane));
    std::int64_t arriving = 0;
    for (const HaloPlan::Neighbour& n : moves.neighbours) arriving += run_points(n.received);
    if (arriving != wanted.count() * plane) {
        throw std::logic_error("multigrid: rank " + std::to_string(rank) + " wants planes [" +
                               std::to_string(wanted.first) + ", " + std::to_string(wanted.end) +
                               ") of a level, of which the ranks hold " +
                               std::to_string(plane > 0 ? arriving / plane : 0));
    }
    redistribute_on_host(ranks, moves,
                         from.first(static_cast<std::size_t>(have[rank].count() * plane)),
                         into.first(static_cast<std::size_t>(wanted.count() * plane)));
}

template <typename T>
LevelHandoff<T>::LevelHandoff(std::shared_ptr<const Backend> backend,
                              std::vector<PlaneRange> restricted, std::vector<PlaneRange> reached,
                              std::vector<PlaneRange> held, std::int64_t plane) {
    const auto rank = static_cast<std::size_t>(backend->communicator().rank());
    offset_ = (restricted[rank].first - reached[rank].first) * plane;
    window_ = Array<T>(backend, static_cast<std::size_t>(reached[rank].count() * plane));
    // Zero once: the window's planes no rank restricts (beyond this rank's own) stay finite.
    if (window_.size() > 0) fill(window_, T(0));
    const VectorLayout restricted_planes = plane_layout(restricted, plane);
    const VectorLayout held_planes = plane_layout(held, plane);
    down_ = std::make_unique<Redistribution<T>>(backend, restricted_planes, held_planes);
    up_ = std::make_unique<Redistribution<T>>(std::move(backend), held_planes,
                                              plane_layout(reached, plane));
}

template <typename T>
LevelHandoff<T>::~LevelHandoff() = default;

template <typename T>
void LevelHandoff<T>::hand_down(T* into) const {
    down_->run(window_.data() + offset_, into);
}

template <typename T>
void LevelHandoff<T>::take_up(const T* from) const {
    up_->run(from, window_.data());
}

template <typename T>
LevelGather<T>::LevelGather(std::shared_ptr<const Backend> backend,
                            std::vector<std::int64_t> starts)
    : starts_(std::move(starts)) {
    // Each rank's points lie in the whole at their place: gathered in place.
    VectorLayout parts(starts_.size() - 1);
    for (std::size_t q = 0; q + 1 < starts_.size(); ++q) {
        const std::int64_t count = starts_[q + 1] - starts_[q];
        if (count > 0) parts[q].push_back({starts_[q], starts_[q], count});
    }
    const int ranks = static_cast<int>(parts.size());
    gather_ = std::make_unique<Redistribution<T>>(std::move(backend), parts,
                                                  whole_on_every_rank(starts_.back(), ranks));
}

template <typename T>
LevelGather<T>::~LevelGather() = default;

template void move_planes(const Communicator&, const std::vector<PlaneRange>&,
                          const std::vector<PlaneRange>&, std::int64_t, std::span<const double>,
                          std::span<double>);
template void move_planes(const Communicator&, const std::vector<PlaneRange>&,
                          const std::vector<PlaneRange>&, std::int64_t, std::span<const float>,
                          std::span<float>);
template class LevelHandoff<float>;
template class LevelHandoff<double>;
template class SlabHalo<float>;
template class SlabHalo<double>;
template class LevelGather<float>;
template class LevelGather<double>;

}  // namespace simrun::solvers::multigrid

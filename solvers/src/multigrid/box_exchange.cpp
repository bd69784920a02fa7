#include "multigrid/box_exchange.hpp"

#include <utility>

#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/distributed/partition.hpp"

namespace simrun::solvers::multigrid {

template <typename T>
BoxHalo<T>::BoxHalo(std::shared_ptr<const Backend> backend, const GridBox& box,
                    const std::vector<Box>& parts) {
    const Partition partition(box, parts, backend->communicator().rank());
    halo_ = std::make_unique<HaloExchange<T>>(std::move(backend),
                                              halo_plan(partition, partition.window()));
}

template <typename T>
BoxGather<T>::BoxGather(std::shared_ptr<const Backend> backend, const GridBox& box,
                        const std::vector<Box>& parts, const Box& window)
    : window_points_(static_cast<std::size_t>(window.size())) {
    const Communicator& ranks = backend->communicator();
    const auto rank = static_cast<std::size_t>(ranks.rank());
    // Every rank's part as it lies in its window (only this rank's window is known here: the
    // others' parts are placed by their segments, which the gather alone reads).
    VectorLayout in_windows(parts.size());
    for (std::size_t q = 0; q < parts.size(); ++q) {
        in_windows[q] = part_runs(box, parts[q], q == rank ? window : parts[q]);
    }
    const VectorLayout whole = whole_on_every_rank(box.size(), ranks.size());
    // The window from the whole: each rank's from its own copy of it.
    VectorLayout window_points(parts.size());
    window_points[rank] = part_runs(box, window, window);
    all_or_none(ranks, [&] {
        window_of_ = std::make_unique<Redistribution<T>>(backend, whole, window_points);
    });
    gather_ = std::make_unique<Redistribution<T>>(std::move(backend), in_windows, whole);
}

template <typename T>
BoxGather<T>::~BoxGather() = default;

template class BoxHalo<float>;
template class BoxHalo<double>;
template class BoxGather<float>;
template class BoxGather<double>;

}  // namespace simrun::solvers::multigrid

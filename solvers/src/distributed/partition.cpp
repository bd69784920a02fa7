#include "simrun/solvers/distributed/partition.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "simrun/solvers/distributed/part_rows.hpp"

namespace simrun::solvers {

Partition::Partition(GridBox box, std::vector<Box> parts, int rank, std::int64_t halo)
    : box_(box), parts_(std::move(parts)), rank_(rank), halo_(halo) {
    if (rank_ < 0 || rank_ >= ranks()) {
        throw std::invalid_argument("partition: rank " + std::to_string(rank_) + " of " +
                                    std::to_string(ranks()) + " parts");
    }
    const Box all = whole_part(box_);
    for (std::size_t q = 0; q < parts_.size(); ++q) {
        if (!parts_[q].empty() && !all.contains(parts_[q])) {
            throw std::invalid_argument("partition: rank " + std::to_string(q) +
                                        "'s part leaves the " + box_.describe() + " box");
        }
    }
    const Box& own = part();
    const Box own_window = window();
    for (int q = 0; q < ranks(); ++q) {
        if (q == rank_ || own.empty() || part(q).empty()) continue;
        const Box sent = intersection(own, window(q));
        const Box received = intersection(own_window, part(q));
        if (sent.empty() && received.empty()) continue;
        sides_.push_back(
            {q, sent.empty() ? no_points : sent, received.empty() ? no_points : received});
    }
}

Partition Partition::of_ranks(const Communicator& ranks, const GridBox& box, const Box& part,
                              std::int64_t halo) {
    return Partition(box, all_parts(ranks, part), ranks.rank(), halo);
}

Partition Partition::slabs(const GridBox& box, const std::vector<std::int64_t>& firsts, int rank,
                           std::int64_t halo) {
    const auto slow = static_cast<std::size_t>(box.dimension - 1);
    std::vector<Box> parts;
    for (std::size_t q = 0; q + 1 < firsts.size(); ++q) {
        Box part = whole_part(box);
        part.lower[slow] = firsts[q];
        part.upper[slow] = firsts[q + 1];
        parts.push_back(part.empty() ? no_points : part);
    }
    return Partition(box, std::move(parts), rank, halo);
}

Partition Partition::whole(const GridBox& box) { return Partition(box, {whole_part(box)}, 0, 0); }

Box Partition::window(int q) const {
    const Box& p = part(q);
    return p.empty() ? no_points : grown(p, box_, halo_);
}

std::vector<int> Partition::neighbours() const {
    std::vector<int> ranks;
    for (const Side& side : sides_) ranks.push_back(side.rank);
    return ranks;
}

}  // namespace simrun::solvers

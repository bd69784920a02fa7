#pragma once
// A partition of a box of points over the ranks: every rank's part (a box of the whole box's
// points, empty for a rank that holds none, as on a level held by fewer ranks), its window (the
// part grown by `halo` points inside the box), and this rank's sides: for each neighbour, the
// points of this rank's part that lie in the neighbour's window (sent to it) and the points of
// this rank's window that the neighbour's part holds (received from it). Slabs are its
// 1 x ... x K case (whole planes along the box's last axis), one process its 1 x 1 x 1 case.
// Every value is computed locally from the parts; all_parts (part_rows.hpp) gathers them.
#include <cstdint>
#include <vector>

#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/boxes/box.hpp"

namespace simrun::solvers {

// The empty part (of a rank that holds none), as every part and side without points is given.
inline constexpr Box no_points{{0, 0, 0}, {0, 0, 0}};

class Partition {
public:
    // What this rank exchanges with a neighbour (boxes of the whole box's points; both sides of
    // a pair list the same points, x fastest).
    struct Side {
        int rank = 0;
        Box sent;      // this rank's part within the neighbour's window
        Box received;  // this rank's window within the neighbour's part
    };

    // `parts`: every rank's part of `box`, in rank order; `rank`: this rank's index among them.
    // Throws std::invalid_argument where `rank` is not one of them or a part leaves the box.
    Partition(GridBox box, std::vector<Box> parts, int rank, std::int64_t halo = 1);
    // Every rank's part gathered (collective).
    static Partition of_ranks(const Communicator& ranks, const GridBox& box, const Box& part,
                              std::int64_t halo = 1);
    // Slabs: rank q holds the planes [firsts[q], firsts[q + 1]) along the box's last axis
    // (firsts: a value per rank and one more).
    static Partition slabs(const GridBox& box, const std::vector<std::int64_t>& firsts, int rank,
                           std::int64_t halo = 1);
    // One process holding the whole box.
    static Partition whole(const GridBox& box);

    const GridBox& box() const { return box_; }
    int rank() const { return rank_; }
    int ranks() const { return static_cast<int>(parts_.size()); }
    std::int64_t halo() const { return halo_; }
    const std::vector<Box>& parts() const { return parts_; }
    const Box& part(int q) const { return parts_[static_cast<std::size_t>(q)]; }
    const Box& part() const { return part(rank_); }
    // The part grown by halo() points inside the box (empty for an empty part).
    Box window(int q) const;
    Box window() const { return window(rank_); }
    // This rank's neighbours (ranks whose part meets its window or whose window meets its
    // part), in rank order.
    const std::vector<Side>& sides() const { return sides_; }
    std::vector<int> neighbours() const;

private:
    GridBox box_;
    std::vector<Box> parts_;
    int rank_ = 0;
    std::int64_t halo_ = 1;
    std::vector<Side> sides_;
};

}  // namespace simrun::solvers

#pragma once
// How a grid is split over the ranks of a distributed run: a Cartesian decomposition into
// boxes, parts[a] of them along axis a (the process grid), rank r holding the box at
// (r mod p0, r / p0 mod p1, r / (p0 p1)); along each axis the first (points mod parts) boxes
// are one node longer than the rest. The ranks' numbering of the nodes takes the boxes in rank
// order, each box's nodes x fastest: a rank's rows of the operator are a block of the whole
// matrix in that numbering (solvers::DistributedMatrix), its part of a field its box's values.
// A rank assembles its box with the nodes around it (Grid::with_neighbours), so that its rows
// are complete.
//
// Slabs, the process grid 1 x K (1 x 1 x K in 3D), split the slowest axis alone: there the
// ranks' numbering is the grid's own, a rank's part of a field a slice of the whole and its
// halo a plane from each neighbour; multigrid over ranks runs on slabs. Boxes split two or
// three axes: a rank exchanges its faces (and, for the rows that couple diagonally, edges and
// corners) with up to 8 neighbours in 2D and 26 in 3D, but far fewer nodes once the ranks are
// many (at 512^3 on 64 ranks a slab's halo is two planes of 262144 nodes, a 4 x 4 x 4 box's
// six faces of 16384).
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "simrun/framework/discretisation/grid.hpp"

namespace simrun::framework {

// The part of values over a rank's assembled box that its own nodes hold: a view where they
// are a run of them (slabs), else a copy.
template <typename T>
class OwnedValues {
public:
    explicit OwnedValues(std::span<const T> view) : view_(view) {}
    explicit OwnedValues(std::vector<T> copy) : copy_(std::move(copy)), view_(copy_) {}
    OwnedValues(const OwnedValues&) = delete;
    OwnedValues& operator=(const OwnedValues&) = delete;

    std::span<const T> span() const { return view_; }
    std::size_t size() const { return view_.size(); }
    const T* data() const { return view_.data(); }
    const T& operator[](std::size_t i) const { return view_[i]; }
    auto begin() const { return view_.begin(); }
    auto end() const { return view_.end(); }

private:
    std::vector<T> copy_;
    std::span<const T> view_;
};

struct Decomposition {
    std::array<std::int64_t, 3> parts{1, 1, 1};
    Box owned;      // this rank's nodes
    Box assembled;  // with the nodes around them, inside the grid
    int rank = 0;
    int ranks = 1;

    // The whole grid on one rank.
    static Decomposition whole(const Grid& grid);
    // Rank `rank` of the process grid `parts`. Throws std::invalid_argument where an axis has
    // fewer nodes than parts (every rank holds at least one node along each axis), or where
    // parts split the z axis of a 2D grid.
    static Decomposition of(const Grid& grid, int rank, std::array<std::int64_t, 3> parts);
    // Slabs across the slowest axis for `ranks` ranks (1 x K, or 1 x 1 x K).
    static std::array<std::int64_t, 3> slab_parts(const Grid& grid, int ranks);
    // The process grid for `ranks` ranks with the fewest nodes on the faces between the boxes
    // (ties: more parts along the slower axes), every box at least `least` nodes along each
    // axis it splits; nullopt where no factorisation gives that.
    static std::optional<std::array<std::int64_t, 3>> box_parts(const Grid& grid, int ranks,
                                                                std::int64_t least = 3);
    // "2x2", "1x1x4": parts along x, y (and z in 3D, or where split).
    static std::string describe_parts(const Grid& grid, std::array<std::int64_t, 3> parts);

    bool distributed() const { return ranks > 1; }
    // Whether only the slowest axis is split (a rank's nodes are whole planes).
    bool slabs(const Grid& grid) const { return grid.whole_planes(owned); }
    std::int64_t num_points() const { return owned.size(); }

    // Rank q's box, and the ranks' index of its first node.
    Box box_of(const Grid& grid, int q) const;
    std::int64_t first_row(const Grid& grid, int q) const;
    // The rank holding node (i, j, k), and the node's index in the ranks' numbering.
    int rank_of(const Grid& grid, std::int64_t i, std::int64_t j, std::int64_t k) const;
    std::int64_t row_of(const Grid& grid, std::int64_t i, std::int64_t j, std::int64_t k) const;

    // Every rank's piece of a VTK output step, in rank order: its box widened by one node along
    // each axis where another box follows, so that neighbouring pieces share their faces and
    // ParaView draws no gap between them.
    std::vector<Box> output_pieces(const Grid& grid) const;
    // Where node (i, j, k) of a piece lies in the values handed over for it: the owned nodes
    // first, in their box's order, then the piece's other nodes in the piece's order. `owned`
    // lies in `piece` from its first corner on (output_pieces).
    static std::int64_t piece_value_index(const Box& piece, const Box& owned,
                                          std::int64_t i, std::int64_t j, std::int64_t k) {
        if (owned.contains(i, j, k)) return owned.index(i, j, k);
        const std::int64_t di = i - owned.lower[0], dj = j - owned.lower[1],
                           dk = k - owned.lower[2];
        const std::int64_t ox = owned.points(0), oy = owned.points(1), oz = owned.points(2);
        // The owned nodes before (i, j, k) in the piece's order: the layers, then the lines,
        // then the nodes of its line.
        const std::int64_t before =
            std::min(dk, oz) * ox * oy +
            (dk < oz ? std::min(dj, oy) * ox + (dj < oy ? std::min(di, ox) : 0) : 0);
        return owned.size() + piece.index(i, j, k) - before;
    }

    // The part of values over the assembled box that the owned nodes hold.
    template <typename T>
    OwnedValues<T> owned_part(std::span<const T> assembled_values) const {
        const std::int64_t first = assembled.index(owned.lower[0], owned.lower[1], owned.lower[2]);
        if (owned.run_of(assembled)) {
            return OwnedValues<T>(assembled_values.subspan(static_cast<std::size_t>(first),
                                                           static_cast<std::size_t>(num_points())));
        }
        std::vector<T> values(static_cast<std::size_t>(num_points()));
        const auto line = static_cast<std::size_t>(owned.points(0));
        for (std::int64_t k = owned.lower[2]; k < owned.upper[2]; ++k) {
            for (std::int64_t j = owned.lower[1]; j < owned.upper[1]; ++j) {
                const auto from =
                    assembled_values.begin() +
                    static_cast<std::ptrdiff_t>(assembled.index(owned.lower[0], j, k));
                std::copy(from, from + static_cast<std::ptrdiff_t>(line),
                          values.begin() +
                              static_cast<std::ptrdiff_t>(owned.index(owned.lower[0], j, k)));
            }
        }
        return OwnedValues<T>(std::move(values));
    }
    // A field gathered in the ranks' numbering (every rank's values in rank order) in the
    // grid's.
    std::vector<double> to_grid_order(const Grid& grid, std::span<const double> gathered) const;
};

}  // namespace simrun::framework

#pragma once
// How a grid is split over the ranks of a distributed run: a Cartesian decomposition into slabs
// of whole planes across the slowest axis (y in 2D, z in 3D), the process grid 1 x K (x 1 x K).
// Each rank owns consecutive planes, the first (planes mod K) ranks one plane more than the
// rest, so every rank's nodes are contiguous in the grid's numbering: its rows of the operator
// are a block of the whole matrix (solvers::DistributedMatrix), its part of a field is a slice
// of the whole field, and its halo is one plane from each neighbouring rank, received and sent
// as it lies in memory. A rank assembles the planes it owns with their neighbouring planes
// (Grid::with_neighbours), so its rows are complete.
#include <cstdint>
#include <span>
#include <vector>

#include "simrun/framework/discretisation/grid.hpp"
#include "simrun/solvers/base/communicator.hpp"

namespace simrun::framework {

struct SlabDecomposition {
    PlaneRange owned;      // this rank's planes
    PlaneRange assembled;  // with a neighbouring plane on each side that has one
    int rank = 0;
    int ranks = 1;

    // The whole grid on one rank.
    static SlabDecomposition whole(const Grid& grid);
    // Rank `rank` of `ranks`. Throws std::invalid_argument when there are fewer planes than
    // ranks (every rank owns at least one plane).
    static SlabDecomposition of(const Grid& grid, int rank, int ranks);

    // Every rank's piece of a VTK output step, in rank order: its planes and the next rank's
    // first plane, so that neighbouring pieces share a plane and ParaView draws no gap.
    static std::vector<PlaneRange> output_pieces(const Grid& grid, int ranks);

    bool distributed() const { return ranks > 1; }
    // The grid's index of this rank's first node, and its number of nodes.
    std::int64_t first_node(const Grid& grid) const { return grid.first_node(owned); }
    std::int64_t num_points(const Grid& grid) const { return grid.num_points(owned); }
    // Where the owned nodes lie among the assembled ones (a vector over `assembled`).
    std::int64_t owned_offset(const Grid& grid) const {
        return grid.first_node(owned) - grid.first_node(assembled);
    }
    // The owned part of a vector over the assembled planes.
    template <typename T>
    std::span<T> owned_part(const Grid& grid, std::span<T> assembled_values) const {
        return assembled_values.subspan(static_cast<std::size_t>(owned_offset(grid)),
                                        static_cast<std::size_t>(num_points(grid)));
    }
};

}  // namespace simrun::framework

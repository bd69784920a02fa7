#include "simrun/framework/distributed/slab_decomposition.hpp"

#include <stdexcept>
#include <string>

namespace simrun::framework {

SlabDecomposition SlabDecomposition::whole(const Grid& grid) {
    return {grid.all_planes(), grid.all_planes(), 0, 1};
}

SlabDecomposition SlabDecomposition::of(const Grid& grid, int rank, int ranks) {
    const std::int64_t planes = grid.all_planes().count();
    if (ranks < 1 || rank < 0 || rank >= ranks) {
        throw std::invalid_argument("rank " + std::to_string(rank) + " of " +
                                    std::to_string(ranks));
    }
    if (planes < ranks) {
        throw std::invalid_argument("the grid has " + std::to_string(planes) +
                                    " planes across its " + (grid.dimension() == 2 ? "y" : "z") +
                                    " axis for " + std::to_string(ranks) +
                                    " ranks: each rank needs at least one plane; use at most " +
                                    std::to_string(planes) + " ranks or a finer grid");
    }
    const std::int64_t base = planes / ranks, extra = planes % ranks;
    const std::int64_t first = rank * base + std::min<std::int64_t>(rank, extra);
    const PlaneRange owned{first, first + base + (rank < extra ? 1 : 0)};
    return {owned, grid.with_neighbours(owned), rank, ranks};
}

std::vector<PlaneRange> SlabDecomposition::output_pieces(const Grid& grid, int ranks) {
    std::vector<PlaneRange> pieces;
    for (int rank = 0; rank < ranks; ++rank) {
        PlaneRange piece = of(grid, rank, ranks).owned;
        if (rank + 1 < ranks) piece.last += 1;
        pieces.push_back(piece);
    }
    return pieces;
}

}  // namespace simrun::framework

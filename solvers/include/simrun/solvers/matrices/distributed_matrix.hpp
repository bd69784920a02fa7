#pragma once
// A matrix whose rows are split over the ranks of a back-end's communicator in consecutive
// blocks, rank r holding rows first_r .. first_r + n_r - 1 of the whole (the vectors likewise:
// each rank its block's values). A banded matrix split so -- a grid operator over slabs of
// planes -- couples a block's first rows to the last rows of the rank before and its last rows
// to the first rows of the rank after: those rows (the halo) are exchanged at each product.
//
// Each rank gives its block as DIA rows in the block's own numbering (row 0 is row first_r of
// the whole), with the entries whose columns fall before row 0 or after row n_r - 1 kept: those
// are its couplings to the neighbours (split_block). The product then runs the block's own
// couplings while the halo travels, and adds the neighbours' couplings when it has arrived.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/matrices/linear_operator.hpp"

namespace simrun::solvers {

// A block's couplings to the rows of one neighbouring rank, by runs of consecutive rows:
// y[row + i] += values[i] * halo[halo_row + i], where halo holds the `width` rows the block
// reaches (the neighbour before: its last `width` rows; after: its first `width` rows).
template <typename T>
struct NeighbourCouplings {
    struct Run {
        std::int64_t row = 0;
        std::int64_t halo_row = 0;
        std::vector<T> values;
    };
    std::int64_t width = 0;
    std::vector<Run> runs;
};

// A block's DIA rows split into its own couplings (`inner`: the entries that reach outside
// zeroed, so it is an ordinary DIA matrix of the block; diagonals reaching past the whole block
// left out) and those to the neighbours. Diagonals whose outside entries are all zero couple
// nothing.
template <typename T>
struct SplitBlock {
    DiaData<T> inner;
    NeighbourCouplings<T> before, after;
};
template <typename T>
SplitBlock<T> split_block(DiaData<T> block);

// This rank's block of A^T's rows (split as A's), from its block of A's rows (entries beyond
// the block kept) and the rows of its neighbours' blocks that A's band reaches (exchanged):
// row i of A^T is column i of A. Collective. Throws std::invalid_argument, on every rank alike,
// where a block is narrower than the band (the union of the ranks' diagonals).
template <typename T>
DiaData<T> transpose_block(const Communicator& ranks, const DiaData<T>& block);

template <typename T>
class DistributedMatrix final : public LinearOperator<T> {
public:
    // `inner`: the block's own couplings on the back-end (split_block's inner in any format).
    // Collective: every rank of the back-end's communicator constructs its block at the same
    // point; the ranks learn each other's halo widths. Throws std::invalid_argument, on every
    // rank alike, where a block reaches further than its neighbour's rows, or the first or last
    // block reaches outside the matrix.
    DistributedMatrix(std::unique_ptr<LinearOperator<T>> inner, NeighbourCouplings<T> before,
                      NeighbourCouplings<T> after);
    ~DistributedMatrix() override;

    std::size_t size() const override { return inner_->size(); }
    const std::shared_ptr<const Backend>& backend() const override { return inner_->backend(); }
    // y = A x over the ranks (collective). Sends the rows the neighbours reach (on the GPUs
    // where the back-end opens a device halo: written into the neighbour's memory, 8 bytes per
    // halo row; else staged through the host: device to host, a message, host to device), runs
    // the block's own product while they travel, then adds the couplings (3 reads and a write
    // per coupled row).
    void apply(const Array<T>& x, Array<T>& y) const override;
    // The block's own couplings: what a pointwise preconditioner (Jacobi) is built from.
    const LinearOperator<T>& inner() const { return *inner_; }
    // No row view: a fused kernel would compute a block's rows without their halo.

private:
    struct Halo;
    std::unique_ptr<LinearOperator<T>> inner_;
    std::unique_ptr<Halo> halo_;
};

}  // namespace simrun::solvers

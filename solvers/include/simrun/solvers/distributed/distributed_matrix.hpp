#pragma once
// A matrix whose rows are split over the ranks of a back-end's communicator in consecutive
// blocks, rank r holding rows first_r .. first_r + n_r - 1 of the whole (the vectors likewise:
// each rank its block's values). The whole matrix's numbering is the ranks' in rank order: a
// grid split into slabs of planes keeps the grid's numbering; a grid split into boxes numbers
// each box's points in turn. A block's rows couple to its own rows and to some rows other ranks
// hold (the halo): those are exchanged at each product, while the block's own product runs.
//
// Each rank gives its block as its own couplings (`inner`: an ordinary matrix of the block, in
// any format) and its couplings outside the block (`OutsideCouplings`). A banded matrix split
// into slabs gives them from DIA rows that keep the entries falling outside the block
// (split_block): a grid operator's block then couples to the last planes of the rank before
// and the first planes of the rank after; a box couples to the faces, edges and corners of the
// boxes around it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/communicator.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/matrices/linear_operator.hpp"

namespace simrun::solvers {

// A block's couplings to rows outside it, an entry each: y[rows[k]] += values[k] * x[columns[k]],
// the column counted in the whole matrix's numbering from the block's first row (so negative for
// a row of an earlier rank, n or more for a later one's, n the block's rows).
template <typename T>
struct OutsideCouplings {
    std::vector<std::int64_t> rows, columns;
    std::vector<T> values;

    std::size_t size() const { return values.size(); }
    void add(std::int64_t row, std::int64_t column, T value) {
        rows.push_back(row);
        columns.push_back(column);
        values.push_back(value);
    }
};

// A block's rows split into its own couplings (`inner`: an ordinary DIA matrix of the block) and
// those outside it.
template <typename T>
struct SplitBlock {
    DiaData<T> inner;
    OutsideCouplings<T> outside;
};
// From a block's DIA rows with the entries whose columns fall outside the block kept (zero
// entries couple nothing and are dropped; so are diagonals reaching past the whole block).
template <typename T>
SplitBlock<T> split_block(DiaData<T> block);

// This rank's block of A^T's rows (split as A's), from its block of A (collective): A^T's
// inner block is the transpose of A's; its couplings outside are the other ranks' couplings
// into this block, transposed. Throws std::invalid_argument, on every rank alike, where a
// rank's couplings reach outside the matrix or into its own block.
template <typename T>
SplitBlock<T> transpose_block(const Communicator& ranks, const SplitBlock<T>& block);

template <typename T>
class DistributedMatrix final : public LinearOperator<T> {
public:
    // `inner`: the block's own couplings on the back-end (split_block's inner in any format).
    // Collective: every rank of the back-end's communicator constructs its block at the same
    // point; the ranks learn which of their rows each other rank reads. Throws
    // std::invalid_argument, on every rank alike, where a rank's couplings reach outside the
    // matrix or into its own block.
    DistributedMatrix(std::unique_ptr<LinearOperator<T>> inner, OutsideCouplings<T> outside);
    ~DistributedMatrix() override;

    std::size_t size() const override { return inner_->size(); }
    const std::shared_ptr<const Backend>& backend() const override { return inner_->backend(); }
    // y = A x over the ranks (collective). Sends each rank the rows of x it reads (gathered
    // into one buffer where they are not consecutive: a read and a write each; on the GPUs,
    // where the back-end opens a device halo with the neighbours, written into the
    // neighbour's memory; else staged through the host: device to host, a message, host to
    // device), runs
    // the block's own product while they travel, then adds the couplings outside (per coupled
    // row its index, per entry its value, its halo slot and the halo value read, and y read
    // and written).
    void apply(const Array<T>& x, Array<T>& y) const override;
    // The block's own couplings: what a pointwise preconditioner (Jacobi) is built from.
    const LinearOperator<T>& inner() const { return *inner_; }
    // The other ranks this block's rows read, in rank order (its neighbours).
    std::vector<int> neighbours() const;
    // No row view: a fused kernel would compute a block's rows without their halo.

private:
    struct Halo;
    std::unique_ptr<LinearOperator<T>> inner_;
    std::unique_ptr<Halo> halo_;
};

}  // namespace simrun::solvers

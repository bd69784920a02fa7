#pragma once
// Incomplete LU factorisation with zero fill, ILU(0) (Saad, Iterative Methods for Sparse Linear
// Systems, 2nd ed., section 10.3): A ~ L U with L unit lower and U upper triangular, both on the
// pattern of A (its diagonal added where a row lacks it). The preconditioner for nonsymmetric
// and indefinite systems where the diagonal alone says too little (Jacobi), or is zero.
//
// Applied as two triangular solves, each a sweep over levels: a row's level is one more than
// the highest level among the rows it depends on, so the rows of one level are independent and
// are solved at once. That is a multicolour SOR sweep (weight 1, the levels as colours) on the
// triangular matrix: the same kernel and the same one-block path on the GPU
// (KernelTable::sor_sweeps).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/matrices/csr_data.hpp"
#include "simrun/solvers/preconditioners/multicolour.hpp"
#include "simrun/solvers/preconditioners/preconditioner.hpp"

namespace simrun::solvers {

template <typename T>
struct IncompleteLu {
    CsrData<T> lower;  // L's entries below the diagonal (its unit diagonal is not stored)
    CsrData<T> upper;  // U, its diagonal included in every row
    // Pivots too small to divide by (|u_ii| <= sqrt(eps) max_j |a_ij|: a zero diagonal the
    // elimination did not fill) are replaced by that bound with u_ii's sign, as a diagonal
    // shift of that row; how many, and the first such row (-1: none).
    std::int32_t replaced_pivots = 0;
    std::int32_t first_replaced = -1;
};

// ILU(0) of a square matrix, computed in double. Throws std::invalid_argument naming the row
// whose entries are all zero (nothing can stand in for its pivot) or not finite.
template <typename T>
IncompleteLu<T> incomplete_lu0(const CsrData<T>& a);

// The rows of a lower (forward) or upper (backward) triangular matrix grouped by level for
// its solve: level 0 depends on no other row, level k on rows of levels below k only.
template <typename T>
Colouring forward_levels(const CsrData<T>& lower);
template <typename T>
Colouring backward_levels(const CsrData<T>& upper);

// z = (L U)^-1 r: L y = r level by level, then U z = y. Traffic per application: L and U once
// each (the nonzeros of A and its diagonal) and 4n vector values; on the GPU one launch per
// triangular solve up to sor_block_rows rows, a launch per level above.
template <typename T>
class IluPreconditioner final : public Preconditioner<T> {
public:
    IluPreconditioner(std::shared_ptr<const Backend> backend, const CsrData<T>& a);
    std::string name() const override { return "ilu0"; }
    void apply(const Array<T>& r, Array<T>& z) const override;
    // "L in 59 levels, U in 59; 2 pivots shifted (the first in row 17)".
    std::string describe() const override;

private:
    IluPreconditioner(std::shared_ptr<const Backend> backend, const IncompleteLu<T>& factors);

    MulticolourSweeper<T> lower_;
    MulticolourSweeper<T> upper_;
    std::int32_t replaced_pivots_;
    std::int32_t first_replaced_;
    mutable Array<T> between_;  // y = L^-1 r
    mutable RecordedForOperands recorded_;
};

}  // namespace simrun::solvers

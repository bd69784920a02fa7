#pragma once
// Multicolour ordering for parallel Gauss-Seidel: rows of one colour are not coupled (a_ij = 0
// and a_ji = 0), so a colour is updated at once. Greedy colouring in natural order; on the
// 5- and 7-point grid stencils this gives the red-black (two-colour) ordering.
#include <cstdint>
#include <memory>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/matrix_views.hpp"
#include "simrun/solvers/matrices/csr_data.hpp"

namespace simrun::solvers {

struct Colouring {
    std::vector<std::int32_t> rows;     // every row once, colour by colour
    std::vector<std::int32_t> offsets;  // colour c: rows[offsets[c] .. offsets[c+1])
    int num_colours() const { return static_cast<int>(offsets.size()) - 1; }
};

// Greedy colouring of the symmetrised pattern of a (square) matrix.
template <typename T>
Colouring greedy_colouring(const CsrData<T>& a);

// Forward and backward multicolour SOR sweeps on a back-end. The first constructor colours A
// and throws std::invalid_argument naming the row when a diagonal entry is zero.
template <typename T>
class MulticolourSweeper {
public:
    MulticolourSweeper(std::shared_ptr<const Backend> backend, const CsrData<T>& a);
    // Sweeps in a given order: `order` groups the rows so that no row of a group reads another
    // of it (the colours, or a triangular matrix's levels); inverse_diagonal has a value per
    // row.
    MulticolourSweeper(std::shared_ptr<const Backend> backend, const CsrData<T>& a,
                       const Colouring& order, const std::vector<T>& inverse_diagonal);
    // One SOR sweep over the colours in order (forward) or reverse order (backward).
    void forward(const Array<T>& b, Array<T>& x, T omega) const;
    void backward(const Array<T>& b, Array<T>& x, T omega) const;
    // The same on the vectors' values (of the matrix's size and back-end), and both, forward
    // first (SSOR), in one call (one launch for a small system on the GPU).
    void forward(const T* b, T* x, T omega) const;
    void backward(const T* b, T* x, T omega) const;
    void symmetric(const T* b, T* x, T omega) const;
    const std::shared_ptr<const Backend>& backend() const { return backend_; }
    // The sweeps with weight omega as a fused kernel takes them.
    MulticolourSweepsView<T> view(T omega) const;
    int num_colours() const { return static_cast<int>(offsets_.size()) - 1; }

private:
    struct OffDiagonalInOrder {};  // the matrix given holds A's off-diagonal entries in order
    MulticolourSweeper(std::shared_ptr<const Backend> backend, const CsrData<T>& a,
                       const CsrData<T>& in_order, const Colouring& order,
                       const std::vector<T>& inverse_diagonal, OffDiagonalInOrder);
    void sweeps(bool forward, bool backward, const T* b, T* x, T omega) const;

    std::shared_ptr<const Backend> backend_;
    std::int32_t n_;
    Array<T> inverse_diagonal_;
    // A's rows in the sweeps' order (MulticolourSweepsView): position r holds row rows_[r], its
    // off-diagonal entries at [row_ptr_[r], row_ptr_[r + 1]) of col_ and values_.
    Array<std::int32_t> rows_;
    Array<std::int32_t> row_ptr_;
    Array<std::int32_t> col_;
    Array<T> values_;
    Array<T> diagonal_;  // the matrix's own diagonal entries by row (zero where it stores none)
    std::vector<std::int32_t> offsets_;   // colour c: positions [offsets_[c], offsets_[c + 1])
    Array<std::int32_t> device_offsets_;  // the same on the back-end
};

}  // namespace simrun::solvers

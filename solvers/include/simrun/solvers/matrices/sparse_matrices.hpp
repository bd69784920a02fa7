#pragma once
// Sparse matrices stored on a back-end, one class per format, each a LinearOperator computing
// y = A x with its format's kernel. Built from host data (csr_data.hpp and friends), which they
// copy; they keep no host copy. DiaMatrix lives in dia_matrix.hpp.
#include <memory>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/matrix_views.hpp"
#include "simrun/solvers/matrices/coo_data.hpp"
#include "simrun/solvers/matrices/csr_data.hpp"
#include "simrun/solvers/matrices/dense_data.hpp"
#include "simrun/solvers/matrices/ell_data.hpp"
#include "simrun/solvers/matrices/linear_operator.hpp"

namespace simrun::solvers {

// CSR; on CUDA the SpMV bins rows by length (thread, warp or block per row).
template <typename T>
class CsrMatrix final : public StoredMatrix<T> {
public:
    // Throws std::invalid_argument when the matrix is not square or its arrays are inconsistent.
    CsrMatrix(std::shared_ptr<const Backend> backend, const CsrData<T>& data);
    void apply(const Array<T>& x, Array<T>& y) const override;
    // Only when every row is short (thread-per-row bin): longer rows need the binned SpMV.
    std::optional<RowMatrixView<T>> row_view() const override;
    CsrView<T> view() const;

private:
    Array<std::int32_t> row_ptr_, col_, binned_rows_;
    Array<T> values_;
    std::int32_t bin_offsets_[4] = {0, 0, 0, 0};
};

// ELLPACK-R (seed 000).
template <typename T>
class EllMatrix final : public StoredMatrix<T> {
public:
    EllMatrix(std::shared_ptr<const Backend> backend, const EllData<T>& data);
    void apply(const Array<T>& x, Array<T>& y) const override;
    std::optional<RowMatrixView<T>> row_view() const override { return view(); }
    EllView<T> view() const;

private:
    std::int32_t width_;
    Array<std::int32_t> col_, row_length_;
    Array<T> values_;
};

// COO (the interchange format; its SpMV is there for the seeds' format comparison).
template <typename T>
class CooMatrix final : public StoredMatrix<T> {
public:
    // The triplets are sorted by row (and column) and duplicates summed first.
    CooMatrix(std::shared_ptr<const Backend> backend, const CooData<T>& data);
    void apply(const Array<T>& x, Array<T>& y) const override;

private:
    std::int64_t nnz_;
    Array<std::int32_t> row_, col_;
    Array<T> values_;
    mutable Array<unsigned char> workspace_;
};

// Dense, for small matrices.
template <typename T>
class DenseMatrix final : public StoredMatrix<T> {
public:
    DenseMatrix(std::shared_ptr<const Backend> backend, const DenseData<T>& data);
    void apply(const Array<T>& x, Array<T>& y) const override;

private:
    Array<T> values_;
};

}  // namespace simrun::solvers

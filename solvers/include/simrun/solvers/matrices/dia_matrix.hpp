#pragma once
// DiaMatrix<T>: a square DIA matrix stored on a back-end (seed 004's format for structured
// grids: one contiguous array per diagonal, so the i-th thread reads the i-th entry of each).
//
// A matrix with constant coefficients (a grid stencil: each diagonal holds one value wherever
// it is not zero, the main diagonal one nonzero value in every row, at most 8 diagonals) can
// be stored as that stencil: one value per diagonal and one byte per row saying which diagonals
// the row has (the boundary rows lack some). Identity rows (a single 1 on the main diagonal, as
// a grid's Dirichlet nodes have) may stand beside any main-diagonal value where the stencil has
// at most 7 diagonals: their byte says so. The SpMV then reads 1 byte per row instead of
// D values: the 5-point Laplacian's CG moves 81 bytes per row instead of 120.
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/matrix_views.hpp"
#include "simrun/solvers/matrices/dia_data.hpp"
#include "simrun/solvers/matrices/linear_operator.hpp"

namespace simrun::solvers {

// How the values are kept: one array per diagonal (general), as a stencil (the matrix must
// have constant coefficients), or as row classes (a byte per row naming its kind of row, and a
// table of each kind's values: the matrix must have at most 256 distinct rows, as a constant-
// coefficient multigrid level has).
enum class DiaStorage { general, stencil, classes };

template <typename T>
class DiaMatrix final : public StoredMatrix<T> {
public:
    // Copies host data to the back-end. Throws std::invalid_argument when values.size() is not
    // offsets.size() * n, offsets are not sorted and distinct, an offset is out of range, there
    // are more than max_dia_diagonals, stencil storage is asked of a matrix without constant
    // coefficients (saying where), or row-class storage of one with more than 256 kinds of row.
    DiaMatrix(std::shared_ptr<const Backend> backend, const DiaData<T>& data,
              DiaStorage storage = DiaStorage::general);
    // Row-class storage from classes already on the back-end: a byte per row naming its class
    // (`row_classes`, n of them, taken; each below the number of classes, which is not
    // checked), class c's entry of diagonal d at c * offsets.size() + d of `class_values` (an
    // entry whose column lies outside the matrix must be zero). Throws std::invalid_argument as
    // the constructor above does on the offsets, or where the sizes do not match or rows have
    // no class.
    DiaMatrix(std::shared_ptr<const Backend> backend, std::int64_t n, std::vector<int> offsets,
              Array<std::uint8_t> row_classes, const std::vector<T>& class_values);
    // The same matrix in T, rounded (or widened) on the back-end, in the same storage: no host
    // copy (a float multigrid level made from a double solve's operator).
    template <typename U>
    requires(!std::is_same_v<U, T>) explicit DiaMatrix(const DiaMatrix<U>& other);

    void apply(const Array<T>& x, Array<T>& y) const override;
    std::optional<RowMatrixView<T>> row_view() const override { return view(); }

    const std::vector<int>& offsets() const { return host_offsets_; }
    // The main diagonal (zero where no offset-0 diagonal is stored), on the back-end.
    Array<T> diagonal() const;
    DiaView<T> view() const;
    // The matrix back in host DIA form, copied from the back-end (stencil storage expanded; slots
    // outside the matrix zero), for the steps that need it after the host copy is gone.
    DiaData<T> host_data() const;
    DiaStorage storage() const { return storage_; }
    // The number of row classes (row-class storage; 0 in the others).
    std::size_t row_class_count() const {
        return storage_ == DiaStorage::classes && !host_offsets_.empty()
                   ? class_values_.size() / host_offsets_.size()
                   : 0;
    }
    // Whether the values are kept as a stencil.
    bool is_stencil() const { return storage_ == DiaStorage::stencil; }

private:
    template <typename>
    friend class DiaMatrix;

    std::vector<int> host_offsets_;
    DiaStorage storage_ = DiaStorage::general;
    Array<T> values_;  // general storage
    // Stencil storage: one value per diagonal (passed in the view) and one mask per row.
    std::vector<T> host_constants_;
    Array<std::uint8_t> row_masks_;
    // Row-class storage: each row's class, each class's values (class * diagonals + d).
    Array<std::uint8_t> row_classes_;
    Array<T> class_values_;
};

}  // namespace simrun::solvers

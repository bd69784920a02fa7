#pragma once
// LinearOperator<T>: anything that computes y = A x on a back-end (matrices in any format,
// later matrix-free stencils and multigrid cycles).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "simrun/solvers/base/array.hpp"
#include "simrun/solvers/base/matrix_views.hpp"

namespace simrun::solvers {

template <typename T>
class LinearOperator {
public:
    virtual ~LinearOperator() = default;
    // Number of rows (= columns: operators here are square).
    virtual std::size_t size() const = 0;
    virtual const std::shared_ptr<const Backend>& backend() const = 0;
    // y = A x. x and y live on backend() and have size() values; throws DimensionMismatch.
    virtual void apply(const Array<T>& x, Array<T>& y) const = 0;
    // The stored rows, when fused kernels can compute them one by one (a row per thread) as
    // fast as apply() does; std::nullopt otherwise (matrix-free operators, COO, dense, CSR
    // with long rows).
    virtual std::optional<RowMatrixView<T>> row_view() const { return std::nullopt; }
};

// A matrix stored on a back-end: what every format shares (the back-end and the square size).
template <typename T>
class StoredMatrix : public LinearOperator<T> {
public:
    std::size_t size() const override { return static_cast<std::size_t>(rows_); }
    const std::shared_ptr<const Backend>& backend() const override { return backend_; }

protected:
    // The row count as the kernels' 32-bit index type.
    std::int32_t rows() const { return static_cast<std::int32_t>(rows_); }

    StoredMatrix(std::shared_ptr<const Backend> backend, std::int64_t rows)
        : backend_(std::move(backend)), rows_(rows) {}

    std::shared_ptr<const Backend> backend_;
    std::int64_t rows_;
};

}  // namespace simrun::solvers

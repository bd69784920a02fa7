#pragma once
// LinearOperator<T>: anything that computes y = A x on a back-end (matrices in any format,
// later matrix-free stencils and multigrid cycles).
#include <cstddef>

#include "simrun/solvers/array.hpp"

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
};

}  // namespace simrun::solvers

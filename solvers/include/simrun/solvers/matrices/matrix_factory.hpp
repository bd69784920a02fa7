#pragma once
// Builds the back-end operator of a matrix in a chosen format from its host CSR form.
#include <memory>

#include "simrun/solvers/matrices/csr_data.hpp"
#include "simrun/solvers/matrices/format.hpp"
#include "simrun/solvers/matrices/linear_operator.hpp"

namespace simrun::solvers {

// Throws std::invalid_argument when the matrix does not fit the format (e.g. too many
// diagonals for DIA, too large for dense).
template <typename T>
std::unique_ptr<LinearOperator<T>> make_operator(std::shared_ptr<const Backend> backend,
                                                 const CsrData<T>& matrix, Format format);

}  // namespace simrun::solvers

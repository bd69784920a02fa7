#pragma once
// Products of sparse matrices in host memory, the Galerkin coarse operators of multigrid among
// them.
#include "simrun/solvers/matrices/csr_data.hpp"

namespace simrun::solvers {

// C = A B (rows of C with sorted, distinct columns; entries that cancel to zero are kept).
// Throws DimensionMismatch when A's columns are not B's rows, std::invalid_argument when C
// would exceed the 32-bit index limit.
template <typename T>
CsrData<T> multiply(const CsrData<T>& a, const CsrData<T>& b);

// R A P with R = P^T: the Galerkin operator of A on the range of P.
template <typename T>
CsrData<T> galerkin_product(const CsrData<T>& a, const CsrData<T>& p);

}  // namespace simrun::solvers

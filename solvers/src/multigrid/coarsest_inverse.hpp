#pragma once
// The coarsest level's direct solve: its inverse, formed once, applied as one dense product.
#include "simrun/solvers/matrices/csr_data.hpp"
#include "simrun/solvers/matrices/dense_data.hpp"

namespace simrun::solvers::multigrid {

struct CoarsestInverse {
    DenseData<double> inverse;
    // The matrix was singular (a pivot vanished, as for a pure Neumann problem, whose constants
    // are its null space): the inverse is that of A + s 1 1^T, which solves A x = b for b
    // orthogonal to the constants and returns the x orthogonal to them.
    bool singular = false;
};

// LU factors with partial pivoting on A's band, in double, on A scaled to a unit diagonal (the
// test for a vanishing pivot does not depend on the rows' scales), then the inverse's columns.
// Throws MultigridSetupError when A is singular beyond a one-dimensional null space of constants.
CoarsestInverse invert_coarsest(const CsrData<double>& a);

}  // namespace simrun::solvers::multigrid

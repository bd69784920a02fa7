#pragma once
// The MPI communicator under a Communicator, for code that hands it to another MPI library (the
// run file's collective HDF5 writes). Only in a build with MPI: this header includes mpi.h,
// which communicator.hpp keeps out of every other header.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "simrun/solvers/base/communicator.hpp"

namespace simrun::solvers {

// The communicator of an MPI run's ranks (or of a duplicate of them); MPI_COMM_SELF for one
// process.
MPI_Comm mpi_comm_of(const Communicator& ranks);

}  // namespace simrun::solvers

// Stands in for mpi_communicator.cpp in a build without MPI: every start is one process.
#include "simrun/solvers/base/communicator.hpp"

namespace simrun::solvers {

std::shared_ptr<const Communicator> launched_processes(int&, char**&) { return single_process(); }

bool mpi_compiled() { return false; }

std::string mpi_library_version() { return {}; }

}  // namespace simrun::solvers

// The MPI side of DistributedSession, compiled to real MPI calls only in a build with
// MINI_GPT_MPI (mpi_world.cpp); session.cpp calls it only when mpi_available().
#pragma once

#include <memory>

#include "distributed/communicator.h"

namespace mg::mpi_world {

// MPI_Init_thread (funneled: only the main thread calls MPI, OpenMP's workers never do)
// and a communicator over MPI_COMM_WORLD whose collectives give up after timeout_s.
std::unique_ptr<Communicator> start(double timeout_s);
void finish();                        // MPI_Finalize
[[noreturn]] void abort_all(int status);  // MPI_Abort(MPI_COMM_WORLD, status)

}  // namespace mg::mpi_world

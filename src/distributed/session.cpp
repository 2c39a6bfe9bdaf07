// Choosing the job's communicator at start-up: MPI when the build has it and an MPI
// launcher started the process, a single process otherwise, so that plain `mini-gpt
// train` never touches MPI and behaves exactly as in a build without it.
#include <cstdlib>
#include <string>

#include "distributed/communicator.h"
#include "distributed/mpi_world.h"
#include "core/error.h"

namespace mg {
namespace {
DistributedSession* g_session = nullptr;
}

bool mpi_available() {
#if MINI_GPT_MPI
  return true;
#else
  return false;
#endif
}

// OpenMPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMIx launchers (srun --mpi=pmix, prterun)
// set PMIX_RANK. Without either, MPI_Init would make a singleton job of one process.
bool started_by_mpi_launcher() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

DistributedSession::DistributedSession(double timeout_s) {
  // Without MPI, `mpirun -np N` would start N unrelated runs writing one run directory.
  const char* launched_size = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (!mpi_available() && launched_size != nullptr && std::atoi(launched_size) > 1)
    throw InputError(std::string("started as one of ") + launched_size + " MPI ranks, but this mini-gpt was built " +
                     "without MPI (CMake option MINI_GPT_MPI=OFF); rebuild with libopenmpi-dev installed, or run " +
                     "it without mpirun");
  if (mpi_available() && started_by_mpi_launcher()) {
    communicator_ = mpi_world::start(timeout_s);
    uses_mpi_ = true;
  } else {
    communicator_ = std::make_unique<SingleProcess>();
  }
  g_session = this;
}

DistributedSession::~DistributedSession() {
  g_session = nullptr;
  communicator_.reset();
  if (uses_mpi_) mpi_world::finish();
}

int DistributedSession::abort_job(int status) {
  if (uses_mpi_) mpi_world::abort_all(status);
  return status;
}

Communicator& world_communicator() {
  static SingleProcess single;
  return g_session ? g_session->communicator() : single;
}

}  // namespace mg

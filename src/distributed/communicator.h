// The other processes of a data-parallel job, as the training loop sees them: this
// process's rank among them, sums over all of them, and copies from one to all. Two
// implementations behind one interface, so train/train.cpp reads the same either way:
// MPI's world (mpi_world.cpp, in a build with MINI_GPT_MPI, when the process was
// started by an MPI launcher such as mpirun) and a single process, where every
// collective is the identity.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace mg {

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;        // 0 .. size() - 1; rank 0 alone writes files and prints
  virtual int size() const = 0;        // processes in the job
  virtual int local_size() const = 0;  // processes of the job on this machine, sharing its cores

  // values[0, n) <- their sum over every rank, in place. Every rank receives the same
  // bits (OpenMPI reduces each element once and copies the result), so ranks that apply
  // the same update to the same weights stay identical.
  virtual void allreduce_sum(float* values, int64_t n) = 0;
  virtual void allreduce_sum(double* values, int64_t n) = 0;

  // Every rank's values[0, n) (or text) become root's.
  virtual void broadcast(float* values, int64_t n, int root) = 0;
  virtual void broadcast(std::string& text, int root) = 0;

  virtual void barrier() = 0;
};

// One process, no launcher: sums over one rank and copies from oneself change nothing.
class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_size() const override { return 1; }
  void allreduce_sum(float*, int64_t) override {}
  void allreduce_sum(double*, int64_t) override {}
  void broadcast(float*, int64_t, int) override {}
  void broadcast(std::string&, int) override {}
  void barrier() override {}
};

// True when this build can train over MPI (CMake option MINI_GPT_MPI).
bool mpi_available();

// True when an MPI launcher started this process (mpirun's or PMIx's environment).
bool started_by_mpi_launcher();

// The job, for the lifetime of main(): MPI is initialised when the build has it and a
// launcher started the process, and finalised at the end; otherwise a single process.
// A collective that has not completed after `timeout_s` seconds (a rank stopped, or its
// machine gone without a word) throws Error instead of waiting for ever.
class DistributedSession {
 public:
  // IoError when the launcher started us but MPI fails to initialise.
  explicit DistributedSession(double timeout_s);
  ~DistributedSession();  // MPI_Finalize: every rank must reach it (abort_job otherwise)
  DistributedSession(const DistributedSession&) = delete;
  DistributedSession& operator=(const DistributedSession&) = delete;

  Communicator& communicator() { return *communicator_; }

  // Ends every process of the job with `status` (MPI_Abort) and does not return when
  // MPI is in use: after an error on one rank the others may be waiting for it inside a
  // collective, and a plain exit would leave them there. A single process gets `status` back.
  int abort_job(int status);

 private:
  std::unique_ptr<Communicator> communicator_;
  bool uses_mpi_ = false;
};

// The communicator of the live DistributedSession; a SingleProcess one when none exists
// (library callers and tests that never start a session).
Communicator& world_communicator();

}  // namespace mg

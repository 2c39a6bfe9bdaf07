// MPI_COMM_WORLD behind the Communicator interface. Every collective is started
// non-blocking and then polled against a deadline: a peer that died is normally
// reported at once (mpirun kills the job, or the transport fails and MPI_ERRORS_RETURN
// hands us the error), but a peer that stopped or whose machine vanished would leave a
// blocking MPI_Allreduce waiting for ever. Errors become mg::Error, one line naming the
// call (the cli adds the rank); the caller then ends the job with abort_all.
#include "distributed/mpi_world.h"

#if MINI_GPT_MPI

#include <mpi.h>
#include <sched.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstdio>

#include "core/error.h"

namespace mg::mpi_world {
namespace {

using Clock = std::chrono::steady_clock;

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(double timeout_s) : timeout_s_(timeout_s) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local;  // the ranks that share this machine's memory, hence its cores
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
          "MPI_Comm_split_type");
    MPI_Comm_size(local, &local_size_);
    MPI_Comm_free(&local);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_size() const override { return local_size_; }

  void allreduce_sum(float* values, int64_t n) override {
    MPI_Request request;
    check(MPI_Iallreduce(MPI_IN_PLACE, values, count(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request),
          "MPI_Iallreduce");
    wait(request, "allreduce");
  }
  void allreduce_sum(double* values, int64_t n) override {
    MPI_Request request;
    check(MPI_Iallreduce(MPI_IN_PLACE, values, count(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request),
          "MPI_Iallreduce");
    wait(request, "allreduce");
  }
  void broadcast(float* values, int64_t n, int root) override {
    MPI_Request request;
    check(MPI_Ibcast(values, count(n), MPI_FLOAT, root, MPI_COMM_WORLD, &request), "MPI_Ibcast");
    wait(request, "broadcast");
  }
  void broadcast(std::string& text, int root) override {
    long long length = static_cast<long long>(text.size());  // first the length, then the bytes
    MPI_Request request;
    check(MPI_Ibcast(&length, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD, &request), "MPI_Ibcast");
    wait(request, "broadcast");
    text.resize(static_cast<size_t>(length));
    check(MPI_Ibcast(text.data(), count(length), MPI_CHAR, root, MPI_COMM_WORLD, &request), "MPI_Ibcast");
    wait(request, "broadcast");
  }
  void barrier() override {
    MPI_Request request;
    check(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier");
    wait(request, "barrier");
  }

 private:
  static int count(int64_t n) {
    MG_CHECK(n >= 0 && n <= INT_MAX, "an MPI message holds at most INT_MAX elements");
    return static_cast<int>(n);
  }

  void check(int code, const char* call) const {
    if (code == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw Error(std::string(call) + " failed: " + std::string(text, static_cast<size_t>(length)) +
                " (a rank has probably died or lost its network); the job stops");
  }

  // Polls until the collective completes (MPI_Test also drives its progress), yielding
  // the core between polls for the other processes of an oversubscribed machine.
  void wait(MPI_Request& request, const char* what) const {
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s_);
    for (;;) {
      int done = 0;
      check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) return;
      if (Clock::now() > deadline) {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%g", timeout_s_);
        throw Error(std::string("waited ") + seconds + " s in an MPI " + what + " for the other ranks (MINI_GPT_MPI_TIMEOUT): a rank has stopped, " +
                    "died or lost its network; the job stops");
      }
      sched_yield();
    }
  }

  double timeout_s_;
  int rank_ = 0, size_ = 1, local_size_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> start(double timeout_s) {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw IoError("MPI_Init_thread failed: this process was started by an MPI launcher but cannot join its job");
  // Errors come back as codes, which check() turns into a one-line mg::Error, rather
  // than aborting inside the MPI library with its own report.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return std::make_unique<MpiCommunicator>(timeout_s);
}

void finish() { MPI_Finalize(); }

void abort_all(int status) {
  MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);  // MPI_Abort does not return; this is for the compiler's sake
}

}  // namespace mg::mpi_world

#else  // a build without MPI: DistributedSession never calls these

#include <cstdlib>

#include "core/error.h"

namespace mg::mpi_world {
std::unique_ptr<Communicator> start(double) { MG_CHECK(false, "this build has no MPI (MINI_GPT_MPI is OFF)"); }
void finish() {}
void abort_all(int status) { std::_Exit(status); }
}  // namespace mg::mpi_world

#endif

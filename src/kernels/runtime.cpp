#include "kernels/runtime.h"

#include <omp.h>

#include <algorithm>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/parallel.h"
#include "kernels/profile.h"
#include "core/error.h"
#include "core/limits.h"

extern "C" void openblas_set_num_threads(int);

namespace mg {
namespace {

GemmBackend g_backend = default_gemm_backend();
int g_threads = 0;
// OpenMP's own default, read before anything sets a count: OMP_NUM_THREADS when the
// environment sets it (the test suite does, to run single-threaded tests side by side),
// else one thread per core this process may run on; at most kMaxThreads (OMP_NUM_THREADS=300
// runs 256, as --threads 300 is refused).
const int g_default_threads = std::min(omp_get_max_threads(), static_cast<int>(kMaxThreads));

// libgomp ends the process when it cannot create a thread ("libgomp: Thread creation
// failed", exit 1, no error line of ours, from whatever parallel loop comes first: after a
// run folder was made). So a team larger than any before is started here, where a failure
// is still an error: N - 1 threads (the caller is the first) are created and held together,
// as libgomp holds its team, with the same default attributes (the stack size
// RLIMIT_STACK gives); then they are released and libgomp's team is started in their place.
int g_team_started = 1;

void start_team(int n) {
  if (n <= g_team_started) return;
  std::mutex mutex;
  std::condition_variable released;
  bool go = false;
  std::vector<std::thread> held;
  std::string failure;
  try {
    for (int i = 1; i < n; ++i)
      held.emplace_back([&] {
        std::unique_lock<std::mutex> lock(mutex);
        released.wait(lock, [&] { return go; });
      });
  } catch (const std::system_error& e) {
    failure = e.code().message();
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    go = true;
  }
  released.notify_all();
  for (std::thread& t : held) t.join();
  if (!failure.empty())
    throw IoError("cannot start " + std::to_string(n) + " threads (" + std::to_string(held.size() + 1) +
                  " started): " + failure + "; --threads sets fewer");
#pragma omp parallel num_threads(n)
  { }
  g_team_started = n;
}

}  // namespace

GemmBackend default_gemm_backend() { return GemmBackend::onednn; }

void set_gemm_backend(GemmBackend backend) { g_backend = backend; }
GemmBackend gemm_backend() { return g_backend; }

std::string_view backend_name(GemmBackend backend) {
  switch (backend) {
    case GemmBackend::reference: return "reference";
    case GemmBackend::openblas: return "openblas";
    case GemmBackend::onednn: return "onednn";
  }
  return "?";
}

GemmBackend parse_gemm_backend(std::string_view name) {
  for (GemmBackend b : {GemmBackend::openblas, GemmBackend::onednn, GemmBackend::reference})
    if (backend_name(b) == name) return b;
  throw InputError("unknown backend \"" + std::string(name) + "\" (choose openblas, onednn or reference)");
}

int hardware_threads() { return omp_get_num_procs(); }

int default_num_threads() { return std::max(g_default_threads, 1); }

int set_num_threads(int threads) {
  if (threads < 0) throw InputError("thread count must be >= 0, found " + std::to_string(threads));
  int n = threads == 0 ? default_num_threads() : threads;
  start_team(n);
  omp_set_num_threads(n);
  // OpenBLAS reserves a 128 MB buffer per thread when told its count, and spins forever if
  // the address space cannot hold them (`ulimit -v`); threads past the cores never help a
  // GEMM, so it gets at most one per core.
  openblas_set_num_threads(std::min(n, std::max(hardware_threads(), 1)));
  g_threads = n;
  return n;
}

int free_cores() {
  // /proc/loadavg's fourth field is "runnable/total" scheduling entities at this instant,
  // the reader among the runnable.
  std::ifstream loadavg("/proc/loadavg");
  double one, five, fifteen;
  int runnable = 0;
  char slash;
  const int cores = std::max(hardware_threads(), 1);
  if (!(loadavg >> one >> five >> fifteen >> runnable >> slash) || runnable < 1) return cores;
  return std::clamp(cores - (runnable - 1), 1, cores);
}

int num_threads() { return g_threads == 0 ? omp_get_max_threads() : g_threads; }

void gemm(const GemmArgs& args) {
  ProfileScope scope(OpFamily::gemm);
  const double flops = 2.0 * static_cast<double>(args.M) * static_cast<double>(args.N) *
                       static_cast<double>(args.K) * static_cast<double>(args.batch);
  profile_add_gemm_flops(flops);
  std::optional<OneThreadScope> small;
  if (flops < kParallelFlops) small.emplace();
  switch (g_backend) {
    case GemmBackend::reference: return gemm_reference(args);
    case GemmBackend::openblas: return gemm_openblas(args);  // every product in tiles fixed by the shape
    case GemmBackend::onednn:  // a long K in chunks fixed by the shape (gemm.h, gemm_split)
      return args.K > kGemmKChunk ? gemm_split(args, gemm_onednn_one_thread) : gemm_onednn(args);
  }
}

}  // namespace mg

// The one "enough work to parallelise" threshold of the kernels' OpenMP loops: below it a
// loop runs on the calling thread, since entering a region costs more than the work. On
// the default model (B=32, T=64, D=64, H=2) every training-step loop is at least 4x over
// it, so it decides only for small inputs (the decoder's rows, the tests' shapes).
#pragma once

#include <cstdint>
#include <functional>

namespace mg {

inline constexpr int64_t kParallelWork = 1 << 15;  // elements
// The same for a product (a GEMM, attention's QK^T and PV), in floating-point operations:
// every product of a training step on the default model is at least twice it, while one
// forward over a 64-symbol text (inspect-heads, sample's prompt) stays under it.
inline constexpr double kParallelFlops = 1 << 23;

// Within its scope, OpenMP regions (oneDNN's and OpenBLAS's too) run on the calling
// thread alone: for a call below the thresholds above, where a team costs more than it
// saves, and far more on a busy machine, where a team waits at every barrier for its
// member that shares a core with another process.
class OneThreadScope {
 public:
  OneThreadScope();
  ~OneThreadScope();
  OneThreadScope(const OneThreadScope&) = delete;
  OneThreadScope& operator=(const OneThreadScope&) = delete;

 private:
  int saved_;
};

// Runs body(worker, team) on up to `workers` threads at once (one OpenMP team of `team`
// threads, worker 0..team-1: the runtime may grant fewer than asked), for a schedule of
// phases that meet at workers_barrier(); one worker runs on the calling thread with no
// region entered. Kernels called inside run on their worker's thread alone.
void run_workers(int workers, const std::function<void(int worker, int team)>& body);
// Called by every worker of run_workers between two phases: returns once all have reached it.
void workers_barrier();

}  // namespace mg

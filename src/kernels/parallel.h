// The one "enough work to parallelise" threshold of the kernels' OpenMP loops: below it a
// loop runs on the calling thread, since entering a region costs more than the work. On
// the default model (B=32, T=64, D=64, H=2) every training-step loop is at least 4x over
// it, so it decides only for small inputs (the decoder's rows, the tests' shapes).
#pragma once

#include <cstdint>
#include <functional>

namespace mg {

inline constexpr int64_t kParallelWork = 1 << 15;  // elements

// Runs body(worker, team) on up to `workers` threads at once (one OpenMP team of `team`
// threads, worker 0..team-1: the runtime may grant fewer than asked), for a schedule of
// phases that meet at workers_barrier(); one worker runs on the calling thread with no
// region entered. Kernels called inside run on their worker's thread alone.
void run_workers(int workers, const std::function<void(int worker, int team)>& body);
// Called by every worker of run_workers between two phases: returns once all have reached it.
void workers_barrier();

}  // namespace mg

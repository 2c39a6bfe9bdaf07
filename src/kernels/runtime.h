// Process-wide kernel settings: which GEMM backend runs, and how many threads the
// kernels may use. OpenBLAS (OpenMP build), oneDNN and our own element-wise loops all
// share libgomp's one pool, so a single thread count governs them all.
#pragma once

#include <string>
#include <string_view>

namespace mg {

enum class GemmBackend { reference, openblas, onednn };

// The backend used when the user names none: the fastest on the model's shapes, as
// measured by the kernel benchmark (docs/performance.md, "Backends").
GemmBackend default_gemm_backend();

void set_gemm_backend(GemmBackend backend);
GemmBackend gemm_backend();
std::string_view backend_name(GemmBackend backend);
GemmBackend parse_gemm_backend(std::string_view name);  // InputError naming the choices

// Threads for every kernel; 0 means the default (default_num_threads). Returns the count
// now in force. IoError when the system cannot start that many threads (`ulimit`), before
// libgomp would end the process for it.
int set_num_threads(int threads);
// OMP_NUM_THREADS when the environment sets it, else one per core this process may use;
// at most kMaxThreads (core/limits.h).
int default_num_threads();
int num_threads();
int hardware_threads();
// Cores not running another task at this instant (at least 1; all of them when the
// kernel does not say): what a short command can use without waiting on a busy one.
int free_cores();

// How long a thread of libgomp's pool spins at a barrier before it sleeps, when the user
// set neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT (libgomp's own default, 300,000 spins,
// is milliseconds: on a busy machine the spinning holds a core that the team's preempted
// member needs, and training ran at a fifth of its speed beside one busy process).
// Measured in docs/performance.md ("Busy machines"). libgomp reads it once, as it loads,
// through getenv: the executable answers that call itself (cli/openmp_spin.cpp).
inline constexpr const char* kGompSpinCount = "3000";

}  // namespace mg

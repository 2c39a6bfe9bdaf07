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
// now in force.
int set_num_threads(int threads);
// OMP_NUM_THREADS when the environment sets it, else one per core this process may use.
int default_num_threads();
int num_threads();
int hardware_threads();

}  // namespace mg

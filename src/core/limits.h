// Limits shared by layers that do not see each other.
#pragma once

#include <cstdint>

namespace mg {

// Threads for the kernels: train.threads and --threads at most this (0 means all cores),
// and OMP_NUM_THREADS above it is cut to it (docs/cli.md, "Compute options").
inline constexpr int64_t kMaxThreads = 256;

}  // namespace mg

// The environment a test of thread-count independence runs in (the kernels layer). ctest
// runs those tests once per OpenBLAS core and once per CPU variant of mini-gpt's kernels,
// each in a process of its own with the environment set (tests/CMakeLists.txt, "Every core
// and every variant"):
//   OPENBLAS_CORETYPE  the core whose kernels OpenBLAS runs, read once as it loads; OpenBLAS
//                      0.3.21 runs a core it is told to without checking the CPU, and takes
//                      a name it has no core for (SapphireRapids; Cooperlake, which its
//                      lookup misses) for its own pick by the CPU's flags;
//   MINI_GPT_KERNELS   mini-gpt's variant (kernels/cpu_variant.h), which `mini-gpt` reads as
//                      it starts and use_test_environment() sets for a test's own process.
#pragma once

#include <strings.h>

#include <cstdlib>
#include <string>

#include "core/error.h"
#include "kernels/cpu_variant.h"
#include "kernels/gemm.h"

namespace mg::test {

// Whether this CPU has the flags OpenBLAS's kernels for `core` need (as scripts/bench_common.py's
// OPENBLAS_CORE_FLAGS and OpenBLAS's own choice by flags: driver/others/dynamic.c). A core
// not named here is taken to need nothing past x86-64.
inline bool cpu_runs_openblas_core(const std::string& core) {
  __builtin_cpu_init();
  auto is = [&](const char* name) { return strcasecmp(core.c_str(), name) == 0; };
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vl");
  const bool bf16 = avx512 && __builtin_cpu_supports("avx512bf16");
  if (is("Sandybridge")) return __builtin_cpu_supports("avx");
  if (is("Haswell") || is("Zen")) return avx2;
  if (is("SkylakeX")) return avx512;
  if (is("Cooperlake")) return bf16;
  if (is("SapphireRapids")) return bf16 && __builtin_cpu_supports("amx-bf16");
  return true;
}

// Sets the CPU variant MINI_GPT_KERNELS names (unset or empty: the best this CPU runs), and
// returns why this process cannot test the environment it was given, "" when it can: a
// variant or an OpenBLAS core this CPU cannot run. Call it before any OpenBLAS product: one
// on a core the CPU cannot run ends in an illegal instruction. (A core this OpenBLAS does
// not have is no reason: the test runs on the core OpenBLAS picked instead,
// openblas_core().)
inline std::string use_test_environment() {
  const char* kernels = std::getenv("MINI_GPT_KERNELS");
  if (kernels != nullptr && *kernels != '\0') {
    try {
      set_cpu_variant(parse_cpu_variant(kernels));
    } catch (const InputError& e) {
      return std::string("MINI_GPT_KERNELS=") + kernels + ": " + e.what();
    }
  }
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  if (core != nullptr && *core != '\0' && !cpu_runs_openblas_core(core))
    return std::string("OPENBLAS_CORETYPE=") + core + ": this CPU lacks the flags of that core's kernels";
  return "";
}

// The environment in a test's failure message: the variant and the OpenBLAS core that ran.
inline std::string test_environment() {
  return std::string("kernels ") + std::string(cpu_variant_name(cpu_variant())) + ", OpenBLAS core " + openblas_core();
}

}  // namespace mg::test

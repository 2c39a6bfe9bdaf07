// CPU variant detection and the kernel table (cpu_variant.h, cpu_kernels.h).
#include "kernels/cpu_variant.h"

#include <string>

#include "kernels/cpu_kernels.h"
#include "core/error.h"

namespace mg {
namespace {

// What -march=x86-64-v3 and -v4 let the compiler use. GCC's libgcc knows the levels by
// name (and checks that the OS saves the AVX registers); clang's builtin knows only the
// features.
bool cpu_runs(CpuVariant variant) {
  __builtin_cpu_init();  // needed when called before libgcc's own constructor has run
  switch (variant) {
    case CpuVariant::baseline: return true;
#if defined(__clang__)
    case CpuVariant::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
             __builtin_cpu_supports("bmi2");
    case CpuVariant::avx512:
      return cpu_runs(CpuVariant::avx2) && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl");
#else
    case CpuVariant::avx2: return __builtin_cpu_supports("x86-64-v3");
    case CpuVariant::avx512: return __builtin_cpu_supports("x86-64-v4");
#endif
  }
  return false;
}

template <CpuVariant V>
constexpr CpuKernelTable table_of() {
  CpuKernelTable table;
  table.variant = V;
#define MG_KERNEL_ENTRY(family, name, result, parameters, arguments) table.name = &CpuKernels<V>::name;
  MG_CPU_KERNELS(MG_KERNEL_ENTRY)
#undef MG_KERNEL_ENTRY
  return table;
}

constexpr CpuKernelTable kTables[] = {table_of<CpuVariant::baseline>(), table_of<CpuVariant::avx2>(),
                                      table_of<CpuVariant::avx512>()};

}  // namespace

CpuVariant best_cpu_variant();

namespace {

// The table in use, chosen on first use (not by a static initialiser, which could run
// after another file's initialiser already called a kernel).
const CpuKernelTable*& active_table() {
  static const CpuKernelTable* table = &kTables[static_cast<int>(best_cpu_variant())];
  return table;
}

}  // namespace

CpuVariant best_cpu_variant() {
  if (cpu_runs(CpuVariant::avx512)) return CpuVariant::avx512;
  if (cpu_runs(CpuVariant::avx2)) return CpuVariant::avx2;
  return CpuVariant::baseline;
}

std::vector<CpuVariant> supported_cpu_variants() {
  std::vector<CpuVariant> variants;
  for (CpuVariant v : {CpuVariant::baseline, CpuVariant::avx2, CpuVariant::avx512})
    if (cpu_runs(v)) variants.push_back(v);
  return variants;
}

CpuVariant cpu_variant() { return active_table()->variant; }

void set_cpu_variant(CpuVariant variant) {
  if (!cpu_runs(variant))
    throw InputError("this CPU cannot run the " + std::string(cpu_variant_name(variant)) + " kernels (best: " +
                     std::string(cpu_variant_name(best_cpu_variant())) + ")");
  active_table() = &kTables[static_cast<int>(variant)];
}

std::string_view cpu_variant_name(CpuVariant variant) {
  switch (variant) {
    case CpuVariant::baseline: return "baseline";
    case CpuVariant::avx2: return "avx2";
    case CpuVariant::avx512: return "avx512";
  }
  return "?";
}

CpuVariant parse_cpu_variant(std::string_view name) {
  for (CpuVariant v : {CpuVariant::baseline, CpuVariant::avx2, CpuVariant::avx512})
    if (cpu_variant_name(v) == name) return v;
  throw InputError("unknown CPU variant \"" + std::string(name) + "\" (choose baseline, avx2 or avx512)");
}

const CpuKernelTable& cpu_kernels() { return *active_table(); }

}  // namespace mg

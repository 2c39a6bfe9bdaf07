// The float vector of the CPU variant a kernels/cpu/ file is compiled for: one SSE2, AVX2 or
// AVX-512 register (4, 8 or 16 lanes), as GCC's vector extension, so a kernel written once
// in these types is one vector loop on every variant, with no intrinsics and no loop the
// compiler may leave scalar. Everything here has internal linkage and is always inlined:
// the three variants' copies must never meet in the linker (see kernels/cpu_kernels.h).
#pragma once

#include <cstdint>
#include <cstring>

namespace mg {
namespace {

#if defined(__AVX512F__)
constexpr int64_t kLanes = 16;
#elif defined(__AVX2__)
constexpr int64_t kLanes = 8;
#else
constexpr int64_t kLanes = 4;
#endif

using FloatVec = float __attribute__((vector_size(4 * kLanes)));
using IntVec = int32_t __attribute__((vector_size(4 * kLanes)));

[[gnu::always_inline]] inline FloatVec splat(float v) { return FloatVec{} + v; }

[[gnu::always_inline]] inline FloatVec load(const float* p) {
  FloatVec v;
  std::memcpy(&v, p, sizeof v);  // an unaligned vector load
  return v;
}
[[gnu::always_inline]] inline void store(float* p, FloatVec v) { std::memcpy(p, &v, sizeof v); }

// The first `count` (< kLanes) floats of p, the other lanes `fill`; and its inverse. Lane
// by lane through a small buffer (never a memcpy call), so keep them out of inner loops.
[[gnu::always_inline]] inline FloatVec load_partial(const float* p, int64_t count, float fill) {
  float lanes[kLanes];
  for (int64_t j = 0; j < kLanes; ++j) lanes[j] = j < count ? p[j] : fill;
  return load(lanes);
}
[[gnu::always_inline]] inline void store_partial(float* p, FloatVec v, int64_t count) {
  float lanes[kLanes];
  store(lanes, v);
  for (int64_t j = 0; j < kLanes; ++j)
    if (j < count) p[j] = lanes[j];
}

// The kLanes floats of a row [n] from v on: a plain load, or past its end `fill`.
[[gnu::always_inline]] inline FloatVec load_row(const float* row, int64_t v, int64_t n, float fill) {
  return v + kLanes <= n ? load(row + v) : load_partial(row + v, n - v, fill);
}

// Lane j holds first + j.
[[gnu::always_inline]] inline IntVec lane_index(int64_t first) {
  static constexpr int32_t kIota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  IntVec iota;
  std::memcpy(&iota, kIota, sizeof iota);
  return iota + static_cast<int32_t>(first);
}

[[gnu::always_inline]] inline FloatVec max(FloatVec a, FloatVec b) { return a > b ? a : b; }

// Across the lanes as a tree: each step adds the upper half of the lanes still in play onto
// the lower, in registers: log2(kLanes) dependent steps, in a fixed order for a variant.
template <class Op>
[[gnu::always_inline]] inline float reduce_lanes(FloatVec v, Op op) {
#if defined(__AVX512F__)
  v = op(v, __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15));
  v = op(v, __builtin_shufflevector(v, v, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7));
  v = op(v, __builtin_shufflevector(v, v, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3));
  v = op(v, __builtin_shufflevector(v, v, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1));
#elif defined(__AVX2__)
  v = op(v, __builtin_shufflevector(v, v, 4, 5, 6, 7, 4, 5, 6, 7));
  v = op(v, __builtin_shufflevector(v, v, 2, 3, 2, 3, 2, 3, 2, 3));
  v = op(v, __builtin_shufflevector(v, v, 1, 1, 1, 1, 1, 1, 1, 1));
#else
  v = op(v, __builtin_shufflevector(v, v, 2, 3, 2, 3));
  v = op(v, __builtin_shufflevector(v, v, 1, 1, 1, 1));
#endif
  return v[0];
}
[[gnu::always_inline]] inline float sum_lanes(FloatVec v) {
  return reduce_lanes(v, [](FloatVec a, FloatVec b) { return a + b; });
}
[[gnu::always_inline]] inline float max_lanes(FloatVec v) {
  return reduce_lanes(v, [](FloatVec a, FloatVec b) { return max(a, b); });
}

}  // namespace
}  // namespace mg

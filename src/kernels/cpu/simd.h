// The float vector of the CPU variant a kernels/cpu/ file is compiled for: one SSE2, AVX2 or
// AVX-512 register (4, 8 or 16 lanes), as GCC's vector extension, so a kernel written once
// in these types is one vector loop on every variant, with no intrinsics and no loop the
// compiler may leave scalar. Everything here has internal linkage and is always inlined:
// the three variants' copies must never meet in the linker (see kernels/cpu_kernels.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

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

// Every lane v. Written as the lanes' list, not as `FloatVec{} + v`: that is an addition to
// +0.0, which the compiler may not drop (it turns -0.0 into +0.0), so each splat in a tile's
// inner loop became a scalar add and a register broadcast instead of one broadcast load.
template <std::size_t... Lane>
[[gnu::always_inline]] inline FloatVec splat_lanes(float v, std::index_sequence<Lane...>) {
  return FloatVec{((void)Lane, v)...};
}
[[gnu::always_inline]] inline FloatVec splat(float v) {
  return splat_lanes(v, std::make_index_sequence<static_cast<std::size_t>(kLanes)>{});
}

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
// Its inverse: the kLanes floats of x into row [n] from v on, or only those before its end.
[[gnu::always_inline]] inline void store_row(float* row, int64_t v, int64_t n, FloatVec x) {
  if (v + kLanes <= n) store(row + v, x);
  else store_partial(row + v, x, n - v);
}

// Lane j holds first + j.
[[gnu::always_inline]] inline IntVec lane_index(int64_t first) {
  static constexpr int32_t kIota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  IntVec iota;
  std::memcpy(&iota, kIota, sizeof iota);
  return iota + static_cast<int32_t>(first);
}

[[gnu::always_inline]] inline FloatVec max(FloatVec a, FloatVec b) { return a > b ? a : b; }

// Lanes 2i and 2i+1 exchanged (RoPE's pairs).
[[gnu::always_inline]] inline FloatVec swap_pairs(FloatVec v) {
#if defined(__AVX512F__)
  return __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
#elif defined(__AVX2__)
  return __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6);
#else
  return __builtin_shufflevector(v, v, 1, 0, 3, 2);
#endif
}

// A kLanes x kLanes block transposed in registers: v[i] lane j becomes v[j] lane i. Stage S
// (kLanes/2, ..., 2, 1) pairs row i with row i + S and interleaves their blocks of S lanes:
// the even blocks of both into row i, the odd ones into row i + S. After log2(kLanes) stages
// every lane has crossed to its place (the classic butterfly of unpack instructions).
constexpr int interleave_lane(int j, int S, bool odd_blocks) {
  const int block = j / S, within = j % S, pair = block / 2 * 2 + (odd_blocks ? 1 : 0);
  return (block % 2 == 0 ? 0 : static_cast<int>(kLanes)) + pair * S + within;
}
template <int S, bool Odd, int... J>
[[gnu::always_inline]] inline FloatVec interleave_blocks(FloatVec a, FloatVec c, std::integer_sequence<int, J...>) {
  return __builtin_shufflevector(a, c, interleave_lane(J, S, Odd)...);
}
template <int S>
[[gnu::always_inline]] inline void transpose_stage(FloatVec* v) {
  using Lanes = std::make_integer_sequence<int, static_cast<int>(kLanes)>;
  for (int i = 0; i < kLanes; ++i) {
    if (i & S) continue;
    const FloatVec a = v[i], c = v[i + S];
    v[i] = interleave_blocks<S, false>(a, c, Lanes{});
    v[i + S] = interleave_blocks<S, true>(a, c, Lanes{});
  }
  if constexpr (S > 1) transpose_stage<S / 2>(v);
}
[[gnu::always_inline]] inline void transpose_block(FloatVec* v) { transpose_stage<static_cast<int>(kLanes) / 2>(v); }

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

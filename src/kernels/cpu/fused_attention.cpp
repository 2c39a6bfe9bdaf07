// The fused causal attention of kernels/fused_attention.h, one head at a time. Per head (b, h):
//
//   forward                                   shapes (T positions, d head width)
//   1. gather q, k, v from the rows, RoPE q, k    Q, K, V [T,d]; Kt = K^T [d,T]
//   2. S = scale Q K^T, causal blocks only        [T,T]
//   3. W = causal_softmax(S), row by row          [T,T]   -> weights, when a reader asks
//   4. O = W V                                    [T,d]   -> merged rows
//
//   backward (dO = the head's slice of dmerged)
//   1. gather Q, K (rotated), V, dO
//   2. W: the reader's weights, or forward steps 2-3 again (head_weights)   [T,T]
//      then Vt = V^T [d,T] in Kt's place
//   3. dW = dO V^T                                [T,T]
//   4. dS = scale W (dW - <W, dW>), row by row    [T,T]   (softmax's backward)
//   5. dQ = dS K, dK = dS^T Q, dV = W^T dO        [T,d]
//   6. dq, dk rotated back (R(-angle)), all three into the rows of dqkv
//
// Training keeps no weights between the passes: the backward makes each head's W again from
// Q and K in its scratch, with the very code the forward ran on the same Q and K, so the same
// bits. That costs one T x T x d product and T softmax rows per head, and spares B H T^2
// floats per layer written by the forward and read back by the backward (1 MiB a layer at
// the default shape; docs/performance.md, "Recomputed in the backward").
//
// The products run on row blocks of kBlock queries: block [r0, r0+kBlock) sees keys below
// r0+kBlock only, so the blocks above the diagonal, where the mask makes every weight 0,
// are never computed (and, for dK and dV, the queries before the block never read). Each
// product is one register tile (tile_product): rows of its left operand broadcast against
// vectors of a row of its right one, the sums kept in registers across the shared axis.
// A head's copies live in the thread's scratch, padded to whole vectors; W goes straight to
// the saved weights, and rows of whole vectors (V, O, dO, dV) are used where they lie.
#include "kernels/cpu/variant.h"
#include "kernels/cpu/simd.h"
#include "kernels/softmax_row.h"

#include <omp.h>

namespace mg {
namespace {

constexpr int64_t kBlock = 16;  // queries (and keys) per block of the causal products
constexpr int64_t kMaxVectors = kLanes == 16 ? 4 : 2;    // vectors of sums per row of a tile
constexpr int64_t kAccumulators = kLanes == 16 ? 24 : 12;  // of 32 or 16 vector registers

int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

// R rows of NV vectors: y[r, v] = alpha * sum_{i < in} x[r * x_row + i * x_col] a[i * lda + v].
template <int NV, int R>
[[gnu::always_inline]] inline void tile(float* y, int64_t ldy, const float* x, int64_t x_row, int64_t x_col,
                                        const float* a, int64_t lda, int64_t in, float alpha) {
  FloatVec acc[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = splat(0.0f);
  for (int64_t i = 0; i < in; ++i) {
    FloatVec av[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) av[v] = load(a + i * lda + v * kLanes);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const FloatVec xv = splat(x[r * x_row + i * x_col]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] += xv * av[v];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) store(y + r * ldy + v * kLanes, acc[r][v] * alpha);
}

// Rows in tiles of R, then the rest as one smaller tile.
template <int NV, int R>
void tile_rows(float* y, int64_t ldy, const float* x, int64_t x_row, int64_t x_col, int64_t rows, const float* a,
               int64_t lda, int64_t in, float alpha) {
  int64_t r = 0;
  for (; r + R <= rows; r += R) tile<NV, R>(y + r * ldy, ldy, x + r * x_row, x_row, x_col, a, lda, in, alpha);
  if constexpr (R > 1)
    if (r < rows) tile_rows<NV, R - 1>(y + r * ldy, ldy, x + r * x_row, x_row, x_col, rows - r, a, lda, in, alpha);
}

template <int NV>
constexpr int kTileRows = kAccumulators / NV > 8 ? 8 : kAccumulators / NV;

// y[rows, cols] = alpha * X A for X [rows, in] (element (r, i) at x[r * x_row + i * x_col],
// so a transposed X is only strides) and A [in, cols] with rows lda apart. cols is a whole
// number of vectors, and A's rows and y's have that many floats to read and write.
void tile_product(float* y, int64_t ldy, const float* x, int64_t x_row, int64_t x_col, int64_t rows, const float* a,
                  int64_t lda, int64_t in, int64_t cols, float alpha) {
  for (int64_t c = 0; c < cols; c += kMaxVectors * kLanes) {
    const int64_t vectors = (cols - c) / kLanes < kMaxVectors ? (cols - c) / kLanes : kMaxVectors;
    switch (vectors) {
      case 1: tile_rows<1, kTileRows<1>>(y + c, ldy, x, x_row, x_col, rows, a + c, lda, in, alpha); break;
      case 2: tile_rows<2, kTileRows<2>>(y + c, ldy, x, x_row, x_col, rows, a + c, lda, in, alpha); break;
#if defined(__AVX512F__)
      case 3: tile_rows<3, kTileRows<3>>(y + c, ldy, x, x_row, x_col, rows, a + c, lda, in, alpha); break;
      case 4: tile_rows<4, kTileRows<4>>(y + c, ldy, x, x_row, x_col, rows, a + c, lda, in, alpha); break;
#endif
      default: break;
    }
  }
}

// A head's working set in one thread's scratch; every row padded to whole vectors.
struct HeadScratch {
  int64_t T, d, Tp, dp;  // Tp, dp: T and d rounded up to kBlock and kLanes
  float* q;              // [T, dp]  rotated
  float* k;              // [T, dp]  rotated
  float* v;              // [T, dp]
  float* kt_or_vt;       // [d, Tp]  K^T in the forward, V^T in the backward
  float* scores;         // [T, Tp]  S then W (forward), dW then dS (backward)
  float* w;              // [T, Tp]  the backward's W, made again (head_weights)
  // One [T, dp] part under two names, as a scratch serves one pass at a time:
  float* out;            // [T, dp]  forward: O = W V, unless written to merged in place
  float* dout;           // [T, dp]  backward: dO, the head's slice of dmerged, unless read in place
  float* dq;             // [T, dp]
  float* dk;             // [T, dp]
  float* dv;             // [T, dp]

  HeadScratch(float* base, int64_t T_, int64_t d_) : T(T_), d(d_), Tp(round_up(T_, kBlock)), dp(round_up(d_, kLanes)) {
    const int64_t vectors = T * dp;  // one [T, dp] part
    q = base, k = q + vectors, v = k + vectors, out = dout = v + vectors;
    dq = dout + vectors, dk = dq + vectors, dv = dk + vectors;
    kt_or_vt = dv + vectors;
    scores = kt_or_vt + d * Tp;
    w = scores + T * Tp;
  }
  static int64_t floats(int64_t T, int64_t d) {
    return 7 * T * round_up(d, kLanes) + (d + 2 * T) * round_up(T, kBlock);
  }
};

// How copy_row writes, named at each call: copy_row(..., {.inverse = true, .accumulate = a}).
struct RowCopy {
  bool inverse = false;     // rotate by R^-1 (the backward's R(-angle)), not R
  bool accumulate = false;  // add to dst, not overwrite it
  bool padded = false;      // dst is a padded scratch row: whole vectors, zeros past d
};

// dst[0..d) (+)= R src[0..d) in vector lanes: R the rotation of the pair tables c2, s2 [d]
// (rope.h's cos_pairs, sin_pairs at the row's position), R^-1 when how.inverse, the
// identity when c2 is null. Only d floats of src are read; a padded destination gets whole
// vectors, zeros past d, any other only its d floats.
[[gnu::always_inline]] inline void copy_row(float* dst, const float* src, const float* c2, const float* s2,
                                            int64_t d, RowCopy how) {
  for (int64_t j = 0; j < d; j += kLanes) {
    const FloatVec x = load_row(src, j, d, 0.0f);
    FloatVec y = x;
    if (c2 != nullptr) {
      const FloatVec c = load_row(c2, j, d, 0.0f), sn = load_row(s2, j, d, 0.0f);
      y = how.inverse ? x * c - swap_pairs(x) * sn : x * c + swap_pairs(x) * sn;
    }
    if (how.accumulate) y += load_row(dst, j, d, 0.0f);
    if (how.padded) store(dst + j, y);
    else store_row(dst, j, d, y);
  }
}

// A head's rows are 3D floats apart in qkv, and in the backward they were written long
// before (in memory, not cache): the hardware's prefetch does not keep up with the stride,
// and the gather waited on each row. So the q, k and v of the row kPrefetchRows ahead
// are asked for while this one is copied (v too, for the backward's transpose of it):
// attention's share of a training step fell from 17.1 % to 15.9 % (medians of 5 alternating
// runs, 2 threads, AVX-512).
constexpr int64_t kPrefetchRows = 4;
[[gnu::always_inline]] inline void prefetch_head_row(const float* row, int64_t D, int64_t d) {
  for (int64_t part = 0; part < 3; ++part)
    for (int64_t j = 0; j < d; j += 16) __builtin_prefetch(row + part * D + j);  // 16 floats: a cache line
}

// Q, K (rotated at their positions) and, unless the products read it in place, V of head
// (b, h) from the rows [B,T,3D] into rows padded with zeros.
void gather_head(HeadScratch& s, const float* qkv, const float* c2, const float* s2, int64_t b, int64_t h,
                 int64_t D, bool copy_v) {
  const int64_t T = s.T, d = s.d;
  for (int64_t t = 0; t < T; ++t) {
    const float* row = qkv + (b * T + t) * 3 * D + h * d;  // q at +0, k at +D, v at +2D
    if (t + kPrefetchRows < T) prefetch_head_row(row + kPrefetchRows * 3 * D, D, d);
    const float* c = c2 ? c2 + t * d : nullptr;
    const float* sn = s2 ? s2 + t * d : nullptr;
    copy_row(s.q + t * s.dp, row, c, sn, d, {.padded = true});
    copy_row(s.k + t * s.dp, row + D, c, sn, d, {.padded = true});
    if (copy_v) copy_row(s.v + t * s.dp, row + 2 * D, nullptr, nullptr, d, {.padded = true});
  }
}

// s.kt_or_vt [d, Tp] = the transpose of src [T, d] (rows ld apart, read in whole vectors:
// padded scratch rows, or rows of whole vectors in place), in kLanes x kLanes blocks,
// positions past T as zeros.
void transpose_head(HeadScratch& s, const float* src, int64_t ld) {
  const int64_t T = s.T, d = s.d;
  for (int64_t t0 = 0; t0 < s.Tp; t0 += kLanes) {
    for (int64_t j0 = 0; j0 < d; j0 += kLanes) {
      FloatVec block[kLanes];
      for (int64_t i = 0; i < kLanes; ++i) block[i] = t0 + i < T ? load(src + (t0 + i) * ld + j0) : splat(0.0f);
      transpose_block(block);
      for (int64_t j = 0; j < kLanes && j0 + j < d; ++j) store(s.kt_or_vt + (j0 + j) * s.Tp + t0, block[j]);
    }
  }
}

// W[r0:end) for the block of queries [r0, end): S[r0:end, 0:end) = scale Q K^T (the keys
// the block sees, rounded up to whole vectors) into s.scores rows (Tp apart), then W's rows,
// keys 0..r and exact zeros after up to ldw, into w (rows ldw apart; w may be s.scores).
// Both the forward and the backward's recomputation make W here, so they agree bit for bit.
void head_weights(HeadScratch& s, float* scores, float* w, int64_t ldw, int64_t r0, int64_t end, float scale) {
  tile_product(scores + r0 * s.Tp, s.Tp, s.q + r0 * s.dp, s.dp, 1, end - r0, s.kt_or_vt, s.Tp, s.d,
               round_up(end, kLanes), scale);
  for (int64_t r = r0; r < end; ++r) softmax_row(w + r * ldw, scores + r * s.Tp, r + 1, ldw);
}

// When a head's row is whole vectors (d a multiple of kLanes, as for d = 32), the products
// read V and dO and write O and (unless adding) dV right in the rows, strides and all: a
// copy of each less per head. Otherwise they go through the padded scratch rows. W goes to
// the reader's weights when asked for, else it stays in the scratch over S.
void head_forward(HeadScratch& s, float* merged, float* weights, const float* qkv, const float* cos_pairs,
                  const float* sin_pairs, float scale, int64_t b, int64_t h, int64_t H) {
  const int64_t T = s.T, d = s.d, D = H * d;
  const bool in_place = d == s.dp;
  gather_head(s, qkv, cos_pairs, sin_pairs, b, h, D, !in_place);
  transpose_head(s, s.k, s.dp);
  const float* v = in_place ? qkv + b * T * 3 * D + 2 * D + h * d : s.v;  // [T,d], rows ldv apart
  const int64_t ldv = in_place ? 3 * D : s.dp;
  float* o = in_place ? merged + b * T * D + h * d : s.out;  // [T,d], rows ldo apart
  const int64_t ldo = in_place ? D : s.dp;
  float* w = weights ? weights + (b * H + h) * T * T : s.scores;  // [T,T] of [B,H,T,T], or the scratch's [T,Tp]
  const int64_t ldw = weights ? T : s.Tp;
  for (int64_t r0 = 0; r0 < T; r0 += kBlock) {
    const int64_t rows = T - r0 < kBlock ? T - r0 : kBlock, end = r0 + rows;
    head_weights(s, s.scores, w, ldw, r0, end, scale);
    // O[r0:end) = W[r0:end, 0:end) V[0:end): a masked weight is 0, so end keys suffice.
    tile_product(o + r0 * ldo, ldo, w + r0 * ldw, ldw, 1, rows, v, ldv, end, s.dp, 1.0f);
    if (!in_place)
      for (int64_t r = r0; r < end; ++r)
        copy_row(merged + (b * T + r) * D + h * d, s.out + r * s.dp, nullptr, nullptr, d, {});
  }
}

void head_backward(HeadScratch& s, float* dqkv, const float* dmerged, const float* qkv, const float* weights,
                   const float* cos_pairs, const float* sin_pairs, float scale, int64_t b, int64_t h, int64_t H,
                   bool accumulate) {
  const int64_t T = s.T, d = s.d, D = H * d;
  const bool in_place = d == s.dp;
  gather_head(s, qkv, cos_pairs, sin_pairs, b, h, D, !in_place);
  const float* w = weights ? weights + (b * H + h) * T * T : s.w;  // W [T,T], rows ldw apart
  const int64_t ldw = weights ? T : s.Tp;
  if (!weights) {  // the forward's steps 2-3 again, on the same Q and K: the same W
    transpose_head(s, s.k, s.dp);
    for (int64_t r0 = 0; r0 < T; r0 += kBlock)
      head_weights(s, s.w, s.w, s.Tp, r0, T - r0 < kBlock ? T : r0 + kBlock, scale);
  }
  if (in_place) transpose_head(s, qkv + b * T * 3 * D + 2 * D + h * d, 3 * D);
  else transpose_head(s, s.v, s.dp);
  const float* dout = in_place ? dmerged + b * T * D + h * d : s.dout;  // dO [T,d], rows lddo apart
  const int64_t lddo = in_place ? D : s.dp;
  if (!in_place)
    for (int64_t t = 0; t < T; ++t)
      copy_row(s.dout + t * s.dp, dmerged + (b * T + t) * D + h * d, nullptr, nullptr, d, {.padded = true});
  for (int64_t r0 = 0; r0 < T; r0 += kBlock) {
    const int64_t rows = T - r0 < kBlock ? T - r0 : kBlock, end = r0 + rows;
    // dW[r0:end, 0:end) = dO V^T, then dS in its place (zeros past each row's keys).
    tile_product(s.scores + r0 * s.Tp, s.Tp, dout + r0 * lddo, lddo, 1, rows, s.kt_or_vt, s.Tp, d,
                 round_up(end, kLanes), 1.0f);
    for (int64_t r = r0; r < end; ++r) {
      float* row = s.scores + r * s.Tp;
      softmax_backward_row(row, row, w + r * ldw, r + 1, T, scale, false);
    }
    // dQ[r0:end) = dS[r0:end, 0:end) K[0:end).
    tile_product(s.dq + r0 * s.dp, s.dp, s.scores + r0 * s.Tp, s.Tp, 1, rows, s.k, s.dp, end, s.dp, 1.0f);
  }
  const bool dv_in_place = in_place && !accumulate;
  float* dv = dv_in_place ? dqkv + b * T * 3 * D + 2 * D + h * d : s.dv;  // dV [T,d], rows lddv apart
  const int64_t lddv = dv_in_place ? 3 * D : s.dp;
  for (int64_t j0 = 0; j0 < T; j0 += kBlock) {
    const int64_t rows = T - j0 < kBlock ? T - j0 : kBlock;
    // Keys [j0, j0+rows) are seen by queries j0.. only: dK = dS^T Q and dV = W^T dO over those.
    tile_product(s.dk + j0 * s.dp, s.dp, s.scores + j0 * s.Tp + j0, 1, s.Tp, rows, s.q + j0 * s.dp, s.dp, T - j0,
                 s.dp, 1.0f);
    tile_product(dv + j0 * lddv, lddv, w + j0 * ldw + j0, 1, ldw, rows, dout + j0 * lddo, lddo, T - j0, s.dp, 1.0f);
  }
  // dq, dk rotated back by R(-angle): the rows hold q and k before RoPE.
  for (int64_t t = 0; t < T; ++t) {
    float* row = dqkv + (b * T + t) * 3 * D + h * d;
    const float* c = cos_pairs ? cos_pairs + t * d : nullptr;
    const float* sn = sin_pairs ? sin_pairs + t * d : nullptr;
    copy_row(row, s.dq + t * s.dp, c, sn, d, {.inverse = true, .accumulate = accumulate});
    copy_row(row + D, s.dk + t * s.dp, c, sn, d, {.inverse = true, .accumulate = accumulate});
    if (!dv_in_place) copy_row(row + 2 * D, s.dv + t * s.dp, nullptr, nullptr, d, {.accumulate = accumulate});
  }
}

}  // namespace

template <>
int64_t Kernels::attention_scratch_floats(int64_t T, int64_t d) {
  return HeadScratch::floats(T, d);
}

// Heads are independent: one per iteration, each thread on its own scratch.
template <>
void Kernels::attention_heads_forward(float* merged, float* weights, const float* qkv, const float* cos_pairs,
                                      const float* sin_pairs, float scale, int64_t B, int64_t T, int64_t H, int64_t d,
                                      float* scratch, int threads) {
  const int64_t per_thread = HeadScratch::floats(T, d);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t bh = 0; bh < B * H; ++bh) {
    HeadScratch s(scratch + omp_get_thread_num() * per_thread, T, d);
    head_forward(s, merged, weights, qkv, cos_pairs, sin_pairs, scale, bh / H, bh % H, H);
  }
}

template <>
void Kernels::attention_heads_backward(float* dqkv, const float* dmerged, const float* qkv, const float* weights,
                                       const float* cos_pairs, const float* sin_pairs, float scale, int64_t B,
                                       int64_t T, int64_t H, int64_t d, bool accumulate, float* scratch,
                                       int threads) {
  const int64_t per_thread = HeadScratch::floats(T, d);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t bh = 0; bh < B * H; ++bh) {
    HeadScratch s(scratch + omp_get_thread_num() * per_thread, T, d);
    head_backward(s, dqkv, dmerged, qkv, weights, cos_pairs, sin_pairs, scale, bh / H, bh % H, H, accumulate);
  }
}

}  // namespace mg

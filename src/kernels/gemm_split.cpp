// gemm_split (kernels/gemm.h): a product in tiles fixed by its shape, each on one thread,
// so that its sums run in the same order on any thread count. llm.c's deterministic
// reductions are the model: fixed chunks, their partial sums in a buffer, added in chunk
// order.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/parallel.h"

namespace mg {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// tile(i) for i < tiles, on up to `team` threads, each tile's product on its thread alone.
// One worker runs on the calling thread with no region entered, as one OpenMP thread (a
// product that `one_thread` hands to a library then starts no team of its own).
template <class Tile>
void run_tiles(int64_t tiles, int team, const Tile& tile) {
  const int workers = static_cast<int>(std::min<int64_t>(team, tiles));
  if (workers <= 1) {
    OneThreadScope one_thread;
    for (int64_t i = 0; i < tiles; ++i) tile(i);
    return;
  }
#pragma omp parallel for num_threads(workers) schedule(static)
  for (int64_t i = 0; i < tiles; ++i) tile(i);
}

// batch 1: K in chunks, C's rows in blocks; tile (chunk c, row block r) writes partial c's
// rows [rows of block r, N]. Tiles are numbered chunk by chunk, so a static schedule gives
// each thread a run of whole chunks: a contiguous stretch of A's and B's K rows.
void split_k(const GemmArgs& g, void (*one_thread)(const GemmArgs&), int team) {
  const int64_t M = g.M, N = g.N, K = g.K;
  const int64_t chunks = ceil_div(K, kGemmKChunk), row_blocks = ceil_div(M, kGemmRowBlock);
  thread_local std::vector<float> partial_storage;  // [chunks, M, N], kept between calls
  partial_storage.resize(static_cast<size_t>(chunks * M * N));
  float* const partial = partial_storage.data();  // the caller's: workers write through it
  run_tiles(chunks * row_blocks, team, [&](int64_t t) {
    const int64_t c = t / row_blocks, r = t % row_blocks;
    const int64_t k0 = c * kGemmKChunk, r0 = r * kGemmRowBlock;
    GemmArgs p;
    p.trans_a = g.trans_a;
    p.trans_b = g.trans_b;
    p.M = std::min(kGemmRowBlock, M - r0);
    p.N = N;
    p.K = std::min(kGemmKChunk, K - k0);
    p.A = g.trans_a ? g.A + k0 * g.lda + r0 : g.A + r0 * g.lda + k0;  // op(A)[r0.., k0..]
    p.lda = g.lda;
    p.B = g.trans_b ? g.B + k0 : g.B + k0 * g.ldb;  // op(B)[k0.., 0..]
    p.ldb = g.ldb;
    p.C = partial + c * M * N + r0 * N;  // [rows, N]
    p.ldc = N;
    one_thread(p);
  });
  // C = (alpha * (P0 + P1 + ... in chunk order) + beta * C + bias + addend) * multiplier,
  // row by row; the chunks are added into P0's row, a vector loop across it.
#pragma omp parallel for num_threads(team) if (team > 1 && chunks * M * N > kParallelWork)
  for (int64_t i = 0; i < M; ++i) {
    float* sum = partial + i * N;  // [N]
    for (int64_t c = 1; c < chunks; ++c) {
      const float* part = partial + c * M * N + i * N;
#pragma omp simd
      for (int64_t j = 0; j < N; ++j) sum[j] += part[j];
    }
    float* out = g.C + i * g.ldc;
    for (int64_t j = 0; j < N; ++j) {
      float value = g.alpha * sum[j];
      if (g.beta != 0.0f) value += g.beta * out[j];
      if (g.bias) value += g.bias[j];
      if (g.addend) value += g.addend[i * g.ldc + j];
      if (g.multiplier) value *= g.multiplier[i * g.ldc + j];
      out[j] = value;
    }
  }
}

// batch 1, K <= kGemmKChunk: C's rows in blocks, each block's product (alpha, beta and the
// epilogue included) written in place by one tile.
void split_rows(const GemmArgs& g, void (*one_thread)(const GemmArgs&), int team) {
  run_tiles(ceil_div(g.M, kGemmRowBlock), team, [&](int64_t r) {
    const int64_t r0 = r * kGemmRowBlock;
    GemmArgs p = g;
    p.M = std::min(kGemmRowBlock, g.M - r0);
    p.A = g.trans_a ? g.A + r0 : g.A + r0 * g.lda;  // op(A)[r0.., 0..]
    p.C = g.C + r0 * g.ldc;
    if (g.addend) p.addend = g.addend + r0 * g.ldc;
    if (g.multiplier) p.multiplier = g.multiplier + r0 * g.ldc;
    one_thread(p);
  });
}

// batch > 1: one entry per tile, its K whole. Entries whose C blocks overlap run one after
// another, in entry order.
void split_entries(const GemmArgs& g, void (*one_thread)(const GemmArgs&), int team) {
  const bool disjoint_c = g.stride_c >= (g.M - 1) * g.ldc + g.N;
  run_tiles(g.batch, disjoint_c ? team : 1, [&](int64_t b) {
    GemmArgs entry = g;
    entry.batch = 1;
    entry.A = g.A + b * g.stride_a;
    entry.B = g.B + b * g.stride_b;
    entry.C = g.C + b * g.stride_c;
    entry.stride_a = entry.stride_b = entry.stride_c = 0;
    one_thread(entry);
  });
}

}  // namespace

void gemm_split(const GemmArgs& g, void (*one_thread)(const GemmArgs&)) {
  check_gemm_epilogue(g);
  if (g.M == 0 || g.N == 0 || g.batch == 0) return;
  // Inside another region (a worker of run_workers) the tiles run on this thread.
  const int team = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (g.batch > 1) return split_entries(g, one_thread, team);
  if (g.K > kGemmKChunk) return split_k(g, one_thread, team);
  split_rows(g, one_thread, team);
}

}  // namespace mg

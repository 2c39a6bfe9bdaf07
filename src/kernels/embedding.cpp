// Embedding lookup and its scatter-add backward. The backward parallelises over column
// blocks, not over ids: every element of dtable then receives its contributions in id
// order whatever the thread count, so repeated ids add up to the same bits every run.
#include "kernels/embedding.h"
#include "kernels/parallel.h"
#include "kernels/profile.h"

#include <algorithm>
#include <cstring>

namespace mg {
namespace {

constexpr int64_t kColumnBlock = 16;  // 64 bytes: one cache line per row per task

}  // namespace

void embedding_forward(float* out, const float* table, const int32_t* ids, int64_t n, int64_t D) {
  ProfileScope scope(OpFamily::embedding);
#pragma omp parallel for if (n * D > kParallelWork)
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(out + i * D, table + static_cast<int64_t>(ids[i]) * D, sizeof(float) * D);
}

void embedding_backward(float* dtable, const float* dout, const int32_t* ids, int64_t n, int64_t D) {
  ProfileScope scope(OpFamily::embedding);
  const int64_t blocks = (D + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for if (n * D > kParallelWork)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t begin = blk * kColumnBlock, end = std::min(D, begin + kColumnBlock);
    for (int64_t i = 0; i < n; ++i) {
      float* row = dtable + static_cast<int64_t>(ids[i]) * D;  // [D]
      const float* g = dout + i * D;                           // [D]
      for (int64_t j = begin; j < end; ++j) row[j] += g[j];
    }
  }
}

}  // namespace mg

// Window sampling: one uniform start per batch row, then two copies out of the split.
#include "data/batch_sampler.h"

#include <algorithm>
#include <utility>

#include "tensor/error.h"

namespace mg {

namespace {

// The vocabulary size the ids need: one more than the largest.
int64_t id_bound(std::span<const int32_t> ids) {
  int32_t largest = 0;
  for (int32_t id : ids) largest = std::max(largest, id);
  return int64_t(largest) + 1;
}

}  // namespace

BatchSampler::BatchSampler(std::span<const int32_t> split, int64_t block_size, int64_t batch_size, uint64_t seed)
    : BatchSampler(TokenIds::from_ids(split, id_bound(split)), block_size, batch_size, seed) {}

BatchSampler::BatchSampler(TokenIds split, int64_t block_size, int64_t batch_size, uint64_t seed)
    : split_(std::move(split)), block_size_(block_size), batch_size_(batch_size), rng_(seed) {
  MG_CHECK(block_size > 0 && batch_size > 0, "batch sampler needs positive block_size and batch_size");
  if (split_.size() < block_size + 1)
    throw InputError("a split of " + std::to_string(split_.size()) + " symbols is shorter than block_size + 1 = " +
                     std::to_string(block_size + 1));
}

void BatchSampler::next(std::span<int32_t> inputs, std::span<int32_t> targets) {
  const int64_t B = batch_size_, T = block_size_;
  MG_CHECK(static_cast<int64_t>(inputs.size()) == B * T && static_cast<int64_t>(targets.size()) == B * T,
           "batch buffers must hold batch_size * block_size = " + std::to_string(B * T) + " ids");
  // Starts 0 .. n - T - 1 inclusive: n - T of them, each leaving room for T + 1 ids.
  const auto starts = static_cast<uint64_t>(split_.size() - T);
  for (int64_t b = 0; b < B; ++b) {
    const auto start = static_cast<int64_t>(rng_.uniform_int(starts));  // window [start, start + T]
    split_.copy_to(start, inputs.subspan(static_cast<size_t>(b * T), static_cast<size_t>(T)));
    split_.copy_to(start + 1, targets.subspan(static_cast<size_t>(b * T), static_cast<size_t>(T)));
  }
}

}  // namespace mg

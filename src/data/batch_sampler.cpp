// Window sampling: one uniform start per batch row (anywhere, or among the story starts
// listed once at construction), then two copies out of the split.
#include "data/batch_sampler.h"

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace mg {

namespace {

// The vocabulary size the ids need: one more than the largest.
int64_t id_bound(std::span<const int32_t> ids) {
  int32_t largest = 0;
  for (int32_t id : ids) largest = std::max(largest, id);
  return int64_t(largest) + 1;
}

}  // namespace

BatchSampler::BatchSampler(std::span<const int32_t> split, int64_t block_size, int64_t batch_size, uint64_t seed,
                           RowStart row_start)
    : BatchSampler(TokenIds::from_ids(split, id_bound(split)), block_size, batch_size, seed, row_start) {}

BatchSampler::BatchSampler(TokenIds split, int64_t block_size, int64_t batch_size, uint64_t seed,
                           RowStart row_start)
    : split_(std::move(split)), block_size_(block_size), batch_size_(batch_size), story_rows_(0), rng_(seed) {
  MG_CHECK(block_size > 0 && batch_size > 0, "batch sampler needs positive block_size and batch_size");
  MG_CHECK(row_start.anywhere_rows >= 0, "batch sampler needs anywhere_rows >= 0");
  if (split_.size() < block_size + 1)
    throw InputError("a split of " + std::to_string(split_.size()) + " symbols is shorter than block_size + 1 = " +
                     std::to_string(block_size + 1));
  if (row_start.after_id < 0) return;
  story_rows_ = batch_size - std::min(batch_size, row_start.anywhere_rows);
  // Starts p in [1, n - T - 1] right after a separator. Position 0 is left out: a split
  // (the validation tail) may begin mid-story, and nothing before it says otherwise.
  const int64_t last = split_.size() - block_size - 1;
  for (int64_t p = 1; p <= last; ++p)
    if (split_[p - 1] == row_start.after_id) starts_.push_back(p);
  if (starts_.empty())
    throw InputError("no story start in a split of " + std::to_string(split_.size()) +
                     " symbols: data.row_start \"story\" needs a separator followed by block_size + 1 = " +
                     std::to_string(block_size + 1) + " symbols");
  const auto& first_ids = row_start.early_first_ids;
  for (int64_t p : starts_)
    if (std::find(first_ids.begin(), first_ids.end(), split_[p]) != first_ids.end()) early_starts_.push_back(p);
  if (!first_ids.empty() && early_starts_.empty())
    throw InputError("no story of the split starts with one of the " + std::to_string(first_ids.size()) +
                     " early story starts (data.early_story_starts)");
}

void BatchSampler::set_early_stories(bool on) { early_ = on && !early_starts_.empty(); }

void BatchSampler::set_anywhere_rows(int64_t rows) {
  MG_CHECK(rows >= 0, "batch sampler needs anywhere_rows >= 0");
  if (!starts_.empty()) story_rows_ = batch_size_ - std::min(batch_size_, rows);
}

int64_t BatchSampler::row_count() const {
  return starts_.empty() ? split_.size() - block_size_ : static_cast<int64_t>(starts_.size());
}

void BatchSampler::next(std::span<int32_t> inputs, std::span<int32_t> targets) {
  const int64_t B = batch_size_, T = block_size_;
  MG_CHECK(static_cast<int64_t>(inputs.size()) == B * T && static_cast<int64_t>(targets.size()) == B * T,
           "batch buffers must hold batch_size * block_size = " + std::to_string(B * T) + " ids");
  // Anywhere: starts 0 .. n - T - 1 inclusive, n - T of them, each leaving room for T + 1
  // ids. After a separator: one of starts_, or of early_starts_ in the early phase (the
  // first story_rows_ rows of a batch).
  const auto windows = static_cast<uint64_t>(split_.size() - T);
  const std::vector<int64_t>& stories = early_ ? early_starts_ : starts_;
  for (int64_t b = 0; b < B; ++b) {
    const bool story = b < story_rows_;
    const auto drawn = static_cast<int64_t>(rng_.uniform_int(story ? stories.size() : windows));
    const int64_t start = story ? stories[static_cast<size_t>(drawn)] : drawn;  // window [start, start + T]
    split_.copy_to(start, inputs.subspan(static_cast<size_t>(b * T), static_cast<size_t>(T)));
    split_.copy_to(start + 1, targets.subspan(static_cast<size_t>(b * T), static_cast<size_t>(T)));
  }
}

}  // namespace mg

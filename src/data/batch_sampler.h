// Random training windows over one split of ids. Each batch row is a window of
// block_size + 1 consecutive ids: the first block_size are the inputs, the last
// block_size the targets, so targets[b, t] = inputs[b, t + 1] within the window and every
// target is the symbol that followed. A window starts uniformly either anywhere in
// [0, n - block_size - 1] (RowStart::anywhere, the default) or at one of the positions
// right after a separator id, a story's start (RowStart::after, `data.row_start: "story"`):
// then no row begins mid-story, and a row's floor is exact (data/README.md). A story
// sampler may also draw a fixed number of each batch's rows anywhere (`data.random_row_fraction`),
// so the model learns to read windows that begin mid-story too, and may, for a while, draw its
// story rows only among the stories that start with given ids (`data.early_story_starts`:
// one kind of story first, a curriculum).
// The sampler owns its Rng, whose state a checkpoint saves, so a resumed run draws the
// very windows the uninterrupted run would have drawn.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "data/token_ids.h"
#include "core/random.h"

namespace mg {

// Where a row may start.
struct RowStart {
  int32_t after_id = -1;  // -1: anywhere; else only right after an occurrence of this id
  // With after_id >= 0: the last `anywhere_rows` rows of every batch start anywhere
  // (capped at batch_size).
  int64_t anywhere_rows = 0;
  // With after_id >= 0: the ids a story's first symbol is among in the early phase
  // (set_early_stories); empty: no early phase.
  std::vector<int32_t> early_first_ids;
  static RowStart anywhere() { return {}; }
  static RowStart after(int32_t separator_id, int64_t anywhere_rows = 0) { return {separator_id, anywhere_rows, {}}; }
  bool operator==(const RowStart&) const = default;
};

class BatchSampler {
 public:
  // Shares SPLIT's storage (a corpus split: no copy). InputError when SPLIT is shorter
  // than block_size + 1, or, with RowStart::after, when no separator is followed by
  // block_size + 1 ids of the split; batch_size and block_size must be positive.
  BatchSampler(TokenIds split, int64_t block_size, int64_t batch_size, uint64_t seed,
               RowStart row_start = RowStart::anywhere());

  // Copies SPLIT (so it may be a temporary) into compact storage; ids must be >= 0.
  BatchSampler(std::span<const int32_t> split, int64_t block_size, int64_t batch_size, uint64_t seed,
               RowStart row_start = RowStart::anywhere());

  // Fills inputs [B,T] and targets [B,T] (row-major, B = batch_size, T = block_size).
  void next(std::span<int32_t> inputs, std::span<int32_t> targets);

  // The Rng state string (core/random.h) and back; restore throws InputError when
  // STATE is malformed.
  std::string state() const { return rng_.state_string(); }
  void restore(const std::string& state) { rng_.set_state_string(state); }

  // With RowStart::after: from the next batch on, its last ROWS rows (capped at batch_size)
  // start anywhere (a curriculum: train/train.cpp switches the mix on at a step).
  void set_anywhere_rows(int64_t rows);

  // With RowStart::after and early_first_ids: while ON, story rows start only at stories
  // whose first id is one of early_first_ids (train/train.cpp's TrainingStep turns it off at
  // data.early_stories_to_step). Off by default; a no-op without early_first_ids.
  void set_early_stories(bool on);

  int64_t batch_size() const { return batch_size_; }
  int64_t block_size() const { return block_size_; }
  // How many different story rows can be drawn (with RowStart::anywhere, windows).
  int64_t row_count() const;

 private:
  TokenIds split_;              // [n]
  int64_t block_size_;          // T
  int64_t batch_size_;          // B
  std::vector<int64_t> starts_;  // with RowStart::after: the allowed starts, ascending
  std::vector<int64_t> early_starts_;  // those of starts_ whose first id is in early_first_ids
  bool early_ = false;                 // draw story rows from early_starts_
  int64_t story_rows_;           // rows of a batch drawn from starts_ (the rest anywhere)
  Rng rng_;
};

}  // namespace mg

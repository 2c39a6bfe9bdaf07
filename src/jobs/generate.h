// Text generation: a Generator keeps the context's keys and values (KV cache, in an
// nn/decoder.h Decoder) so each new symbol costs one position, and choose_symbol turns
// logits into the next symbol (greedy, temperature, top-k, top-p).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nn/decoder.h"
#include "nn/gpt.h"
#include "tensor/random.h"

namespace mg {

struct SamplingSettings {
  double temperature = 1.0;  // 0: greedy arg-max (a tie goes to the lowest id)
  int64_t top_k = 0;         // keep the k most likely symbols; 0 keeps all
  double top_p = 1.0;        // keep the smallest set whose probability reaches p
};

// Checks the ranges (InputError naming the option): temperature >= 0, top_k >= 0, 0 < top_p <= 1.
void validate_sampling(const SamplingSettings& settings);

// Picks the next id from logits [V]. Draws exactly one uniform number from rng unless greedy.
int32_t choose_symbol(std::span<const float> logits, const SamplingSettings& settings, Rng& rng);

// The model's next-symbol logits for a growing text. Up to block_size symbols the cache
// makes each step one position; past it, each step is the model on the last block_size
// symbols at positions 0..block_size-1, recomputed (exactly what a full forward over
// that window gives: every hidden state depends on where the window starts).
// Without the cache every step is the model's own full forward over the window (Gpt::forward),
// the slow path kept for comparison. Memory stays constant however long the text.
class Generator {
 public:
  // The cached path works on a snapshot of the model's weights taken here.
  Generator(Gpt& model, bool use_cache = true);

  // Starts a text: prompt must hold at least one id; only its last block_size count.
  void start(std::span<const int32_t> prompt);
  // Logits [V] for the symbol after the text so far.
  std::span<const float> logits() const { return current_; }
  void append(int32_t id);

 private:
  void recompute_window();  // the window from position 0, refilling the cache
  Gpt& model_;
  bool use_cache_;
  Decoder decoder_;
  std::vector<int32_t> window_;  // the last block_size ids (capacity block_size + 1, never reallocated)
  std::vector<float> logits_;    // [V] without the cache
  std::span<const float> current_;  // [V] the logits now in force (decoder's or logits_)
};

}  // namespace mg

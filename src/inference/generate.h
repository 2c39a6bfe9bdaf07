// Text generation: a Generator keeps the context's keys and values (KV cache, in an
// nn/decoder.h Decoder) so each new symbol within block_size costs one position, and
// continues past block_size by a rebuilt window or a context shift; choose_symbol turns
// logits into the next symbol (greedy, temperature, top-k, top-p).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "nn/decoder.h"
#include "nn/gpt.h"
#include "core/random.h"

namespace mg {

struct SamplingSettings {
  double temperature = 1.0;  // 0: greedy arg-max (a tie goes to the lowest id)
  int64_t top_k = 0;         // keep the k most likely symbols; 0 keeps all
  double top_p = 1.0;        // keep the smallest set whose probability reaches p
};

// Checks the ranges (InputError naming the option): temperature >= 0, top_k >= 0, 0 < top_p <= 1.
void validate_sampling(const SamplingSettings& settings);

// The distribution the next symbol is drawn from, written once for `sample` (choose_symbol)
// and for inspect-heads --next-symbol and the server (interp/next_symbol.h): every id by
// descending logit (a tie: the lower id), softmax(logits / temperature) in double over the
// top_k first (all when 0), then top_p's nucleus, the shortest prefix whose probability
// reaches top_p. Temperature 0 puts all of it on the arg-max.
struct SamplingDistribution {
  std::vector<int32_t> order;       // [V], most likely first
  std::vector<double> probability;  // [top_k kept]: the softmax over them, in order's ranks
  int64_t kept = 0;                 // the ranks inside the nucleus (all top_k kept without top_p)
  double mass = 1.0;                // probability's sum over those ranks: exactly 1 without top_p
  // The probability of the id at RANK, renormalised over the nucleus; 0 outside it.
  double probability_at(int64_t rank) const {
    return rank < kept ? probability[static_cast<size_t>(rank)] / mass : 0.0;
  }
};

// Fills OUT (its storage reused) from LOGITS [V]; Error when a logit is not finite.
void sampling_distribution(std::span<const float> logits, const SamplingSettings& settings, SamplingDistribution& out);

// Picks the next id from logits [V]: a draw from sampling_distribution. Draws exactly one
// uniform number from rng unless greedy.
int32_t choose_symbol(std::span<const float> logits, const SamplingSettings& settings, Rng& rng);

// How a text longer than block_size is continued.
enum class GenerationMode {
  // Each step past block_size is the model on the last block_size symbols at positions
  // 0..block_size-1, exactly what a full forward over that window gives (every hidden
  // state depends on where the window starts): the window is rebuilt, all its rows at
  // once through each layer's matrix products, and only its last row reaches the head.
  window,
  // When the cache is full, its oldest half is dropped and the kept keys are turned back
  // to their new positions (Decoder::drop_oldest; RoPE only): one position per symbol
  // however long the text, but not the window's logits (see Decoder::drop_oldest).
  context_shift,
  // Every step is the model's own full forward over the window (Gpt::forward), the slow
  // path kept for comparison.
  no_cache,
};

std::string_view generation_mode_name(GenerationMode mode);  // "window", "context-shift", "no-cache"

// The model's next-symbol logits for a growing text. Up to block_size symbols the cache
// makes each step one position; past it, as the mode says. Memory stays constant however
// long the text.
class Generator {
 public:
  // The cached modes work on a snapshot of the model's weights taken here. context_shift
  // on a model with learned positions throws InputError.
  explicit Generator(const Gpt& model, GenerationMode mode = GenerationMode::window);

  GenerationMode mode() const { return mode_; }
  // Starts a text: prompt must hold at least one id; only its last block_size count.
  void start(std::span<const int32_t> prompt);
  // Logits [V] for the symbol after the text so far.
  std::span<const float> logits() const { return current_; }
  void append(int32_t id);

 private:
  void recompute_window();  // the window from position 0, refilling the cache
  const Gpt& model_;
  GenerationMode mode_;
  Decoder decoder_;
  std::vector<int32_t> window_;  // the last block_size ids (capacity block_size + 1, never reallocated)
  std::vector<float> logits_;    // [V] without the cache
  std::span<const float> current_;  // [V] the logits now in force (decoder's or logits_)
};

}  // namespace mg

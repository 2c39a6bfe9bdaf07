// inspect-heads --next-symbol (and the server's /api/next): the next-symbol distribution at
// one position of a text, as `sample` draws from it (inference/generate.h's
// sampling_distribution: temperature, top-k, top-p), with some heads ablated (zeroed) if
// asked, and the logit difference between an answer and its competitor, so that an
// ablation's effect on both can be read beside the intact model's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/vocab.h"
#include "inference/generate.h"
#include "nn/gpt.h"

namespace mg {

struct NextSymbolQuery {
  std::optional<int64_t> position;             // default: the last
  SamplingSettings sampling;                   // what `sample` draws with
  std::vector<std::string> ablate;             // "L.H" heads zeroed
  std::optional<std::string> answer, against;  // default: the model's choice, the best other symbol
};

struct NextSymbolEntry {
  int32_t id = 0;
  std::string symbol;
  double probability = 0.0, logit = 0.0;
};

struct NextSymbols {
  std::vector<std::string> tokens;
  int64_t position = 0;
  SamplingSettings sampling;
  std::vector<std::string> ablate;
  std::vector<NextSymbolEntry> top;  // the 10 most likely, most likely first (a tie: the lower id)
  NextSymbolEntry answer, against;   // their logits (probability unused)
};

// ArgumentError (naming the job's argument): the text empty, longer than block_size or with
// a symbol outside the vocabulary; the position out of range; a temperature below 0, top_k
// below 0, top_p outside (0, 1]; an ablation that is no head of the model; answer equal to
// against.
NextSymbols next_symbols(const Gpt& model, const Vocab& vocab, std::u32string_view text, const NextSymbolQuery& query);

}  // namespace mg

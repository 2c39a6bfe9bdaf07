// The next-symbol distribution at one position of a text, as the live page shows it beside
// the heads: softmax(logits / temperature) over the top_k most likely symbols (what
// `sample` draws from), with some heads ablated (zeroed) if asked, and the logit
// difference between an answer and its competitor, so that an ablation's effect on both
// can be read beside the intact model's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/vocab.h"
#include "nn/gpt.h"

namespace mg::serve {

struct NextSymbolQuery {
  std::optional<int64_t> position;  // default: the last
  double temperature = 1.0;         // 0: all on the arg-max
  int64_t top_k = 0;                // 0: every symbol
  std::vector<std::string> ablate;  // "L.H" heads zeroed
  std::optional<std::string> answer, against;  // default: the model's choice, the best other symbol
};

struct NextSymbolEntry {
  int32_t id = 0;
  double probability = 0.0, logit = 0.0;
};

struct NextSymbols {
  std::vector<std::string> tokens;
  int64_t position = 0;
  double temperature = 1.0;
  int64_t top_k = 0;
  std::vector<std::string> ablate;
  std::vector<NextSymbolEntry> top;  // the 10 most likely, most likely first (a tie: the lower id)
  int32_t answer = 0, against = 0;
  double answer_logit = 0.0, against_logit = 0.0;
};

// InputError (naming the query's option): the text empty, longer than block_size or with a
// symbol outside the vocabulary; the position out of range; a temperature below 0 or not
// finite; top_k below 0; an ablation that is no head of the model; answer equal to against.
NextSymbols next_symbols(const Gpt& model, const Vocab& vocab, std::u32string_view text, const NextSymbolQuery& query);

// {"tokens", "position", "temperature", "top_k", "ablate", "top": [{"id", "symbol",
// "probability", "logit"}], "answer": {"id", "symbol", "logit"}, "against": {...},
// "difference"}, numbers to 9 significant digits.
nlohmann::ordered_json next_symbols_json(const NextSymbols& n, const Vocab& vocab);

}  // namespace mg::serve

// Choosing the answer and its competitor (interp/logit_choice.h).
#include "interp/logit_choice.h"

#include "core/error.h"
#include "data/utf8.h"

namespace mg {

int32_t symbol_id(const Vocab& vocab, const std::string& option, const std::string& utf8) {
  const std::u32string text = decode_utf8(utf8, option);
  if (text.size() != 1)
    throw ArgumentError(option, " \"" + utf8 + "\" is " + std::to_string(text.size()) + " symbols: give exactly one");
  const std::optional<int32_t> id = vocab.find(text[0]);
  if (!id) throw ArgumentError(option, " \"" + utf8 + "\" is not in the model's vocabulary");
  return *id;
}

int32_t best_symbol(const float* logits, int64_t V, int32_t exclude) {
  int32_t best = -1;
  for (int32_t v = 0; v < V; ++v)
    if (v != exclude && (best < 0 || logits[v] > logits[best])) best = v;
  // Only a vocabulary of one symbol, that symbol excluded, leaves none: no competitor.
  if (best < 0)
    throw InputError("the model's vocabulary has " + std::to_string(V) +
                     " symbol: there is no other symbol to measure the answer's logit against");
  return best;
}

int64_t symbol_rank(const float* logits, int64_t V, int32_t id) {
  int64_t above = 0;
  for (int64_t v = 0; v < V; ++v) above += logits[v] > logits[id];
  return above + 1;
}

LogitPair choose_pair(const float* logits, int64_t V, std::optional<int32_t> answer, std::optional<int32_t> against) {
  LogitPair pair;
  pair.answer = answer ? *answer : best_symbol(logits, V);
  pair.against = against ? *against : best_symbol(logits, V, pair.answer);
  if (pair.answer == pair.against) throw ArgumentError("against", " names the answer itself: give another symbol");
  return pair;
}

}  // namespace mg

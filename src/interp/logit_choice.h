// The symbols a circuit question is about: the answer, and the competitor its logit is
// measured against (attribution, the logit lens, patching). Given on the command line as
// one symbol each, or chosen from the model's own logits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "data/vocab.h"

namespace mg {

// The id of UTF8, which must be exactly one symbol of the vocabulary; ArgumentError naming
// OPTION otherwise (OPTION "ab" is 2 symbols, give one).
int32_t symbol_id(const Vocab& vocab, const std::string& option, const std::string& utf8);

// The largest of LOGITS [V] other than EXCLUDE (-1: none); the lowest id on a tie, as the
// probe's arg-max scores it. InputError when no symbol is left (a one-symbol vocabulary
// has no competitor).
int32_t best_symbol(const float* logits, int64_t V, int32_t exclude = -1);

// 1 + how many symbols have a strictly larger logit than ID's: 1 is the model's choice.
int64_t symbol_rank(const float* logits, int64_t V, int32_t id);

// The answer and its competitor at one position: ANSWER when given, else the model's
// choice; AGAINST when given, else the best other symbol. InputError when they are equal.
struct LogitPair {
  int32_t answer = 0, against = 0;
};
LogitPair choose_pair(const float* logits, int64_t V, std::optional<int32_t> answer, std::optional<int32_t> against);

}  // namespace mg

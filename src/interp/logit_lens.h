// The logit lens (inspect-heads --logit-lens): the residual stream at one position read
// as if the model ended there. After the embedding and after each block, the stream row
// goes through ln_f (a full LayerNorm with that row's own mean and sigma, as nostalgebraist's
// logit lens and TransformerLens's accumulated_resid(apply_ln=True) with recomputed scales
// do) and the vocabulary head; the top symbols and the answer's rank say where in the
// depth the answer appears. The last stage is the model's own output. B is 1: one text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/vocab.h"
#include "interp/trace.h"  // LogitPush
#include "nn/gpt.h"

namespace mg {

struct LensStage {
  std::string name;  // "embed", then "L0" .. "L{n_layer-1}" (the stream leaving that block)
  std::vector<LogitPush> top;  // the `top` largest logits, largest first
  double answer_logit = 0.0;
  int64_t answer_rank = 0;  // 1: the stage's first choice
};

struct LogitLens {
  std::vector<std::string> tokens;
  int64_t position = 0;
  int32_t answer = 0;
  std::string answer_symbol;
  std::vector<LensStage> stages;  // n_layer + 1
  int64_t first_stage = -1;       // the first stage whose first choice is the answer; -1: none
};

// ANSWER: default the model's own choice at P. InputError: the text (WHAT names it),
// the position out of range.
LogitLens logit_lens(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what,
                     std::optional<int64_t> position, std::optional<int32_t> answer, int64_t top);

}  // namespace mg

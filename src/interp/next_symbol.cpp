// The next-symbol distribution with temperature, top-k, top-p and ablated heads
// (interp/next_symbol.h).
#include "interp/next_symbol.h"

#include <algorithm>

#include "autograd/var.h"
#include "core/error.h"
#include "data/utf8.h"
#include "interp/ablation.h"
#include "interp/logit_choice.h"
#include "interp/patterns.h"
#include "nn/hooks.h"

namespace mg {

NextSymbols next_symbols(const Gpt& model, const Vocab& vocab, std::u32string_view text, const NextSymbolQuery& query) {
  validate_sampling(query.sampling);
  const std::vector<int32_t> ids = encode_for_model(model, vocab, text, "text");
  const int64_t T = static_cast<int64_t>(ids.size()), V = vocab.size();
  const int64_t P = query.position.value_or(T - 1);
  check_index("position", P, T, "the text has " + std::to_string(T) + " symbols");
  const std::vector<HeadAblation> ablations = parse_ablations(query.ablate, model.config(), nullptr);

  NextSymbols out;
  out.position = P;
  out.sampling = query.sampling;
  out.ablate = query.ablate;
  for (char32_t c : text) out.tokens.push_back(encode_utf8(c));
  NoGradGuard no_grad;
  ForwardHooks hooks = ablation_hooks(ablations);
  const Tensor logits = model.forward(ids, 1, T, {.hooks = ablations.empty() ? nullptr : &hooks}).value();  // [1,T,V]
  const float* row = logits.data() + P * V;

  // The distribution `sample` draws from at P (the same function computes both).
  SamplingDistribution distribution;
  sampling_distribution(std::span<const float>(row, static_cast<size_t>(V)), query.sampling, distribution);
  for (int64_t k = 0; k < std::min<int64_t>(10, V); ++k) {
    const int32_t id = distribution.order[static_cast<size_t>(k)];
    out.top.push_back({id, vocab.symbol(id), distribution.probability_at(k), row[id]});
  }
  std::optional<int32_t> answer, against;
  if (query.answer) answer = symbol_id(vocab, "answer", *query.answer);
  if (query.against) against = symbol_id(vocab, "against", *query.against);
  const LogitPair pair = choose_pair(row, V, answer, against);
  out.answer = {pair.answer, vocab.symbol(pair.answer), 0.0, row[pair.answer]};
  out.against = {pair.against, vocab.symbol(pair.against), 0.0, row[pair.against]};
  return out;
}

}  // namespace mg

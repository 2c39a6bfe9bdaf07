// The next-symbol distribution with temperature, top-k and ablated heads (serve/next_symbol.h).
#include "serve/next_symbol.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "autograd/var.h"
#include "core/error.h"
#include "data/utf8.h"
#include "inference/generate.h"
#include "interp/ablation.h"
#include "interp/logit_choice.h"
#include "interp/patterns.h"
#include "nn/hooks.h"
#include "report/text.h"

namespace mg::serve {

NextSymbols next_symbols(const Gpt& model, const Vocab& vocab, std::u32string_view text, const NextSymbolQuery& query) {
  SamplingSettings sampling;
  sampling.temperature = query.temperature;
  sampling.top_k = query.top_k;
  if (!std::isfinite(query.temperature)) throw ArgumentError("temperature", " must be a finite number");
  validate_sampling(sampling);
  const std::vector<int32_t> ids = encode_for_model(model, vocab, text, "text");
  const int64_t T = static_cast<int64_t>(ids.size()), V = vocab.size();
  const int64_t P = query.position.value_or(T - 1);
  check_index("position", P, T, "the text has " + std::to_string(T) + " symbols");
  const std::vector<HeadAblation> ablations = parse_ablations(query.ablate, model.config(), nullptr);

  NextSymbols out;
  out.position = P;
  out.temperature = query.temperature;
  out.top_k = query.top_k;
  out.ablate = query.ablate;
  for (char32_t c : text) out.tokens.push_back(encode_utf8(c));
  NoGradGuard no_grad;
  ForwardHooks hooks = ablation_hooks(ablations);
  const Tensor logits = model.forward(ids, 1, T, {.hooks = ablations.empty() ? nullptr : &hooks}).value();  // [1,T,V]
  const float* row = logits.data() + P * V;

  // softmax(logits / temperature) over the top_k largest (all when 0); temperature 0 puts
  // all the probability on the arg-max (a tie: the lowest id, as sampling's greedy choice).
  std::vector<int32_t> order(static_cast<size_t>(V));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return row[a] > row[b]; });
  const int64_t kept = query.top_k > 0 ? std::min<int64_t>(query.top_k, V) : V;
  std::vector<double> probability(static_cast<size_t>(V), 0.0);
  if (query.temperature == 0.0) {
    probability[static_cast<size_t>(order[0])] = 1.0;
  } else {
    const double top = row[order[0]];
    double sum = 0.0;
    for (int64_t k = 0; k < kept; ++k) {
      const int32_t id = order[static_cast<size_t>(k)];
      probability[static_cast<size_t>(id)] = std::exp((row[id] - top) / query.temperature);
      sum += probability[static_cast<size_t>(id)];
    }
    for (double& p : probability) p /= sum;
  }
  for (int64_t k = 0; k < std::min<int64_t>(10, V); ++k) {
    const int32_t id = order[static_cast<size_t>(k)];
    out.top.push_back({id, probability[static_cast<size_t>(id)], row[id]});
  }
  std::optional<int32_t> answer, against;
  if (query.answer) answer = symbol_id(vocab, "answer", *query.answer);
  if (query.against) against = symbol_id(vocab, "against", *query.against);
  const LogitPair pair = choose_pair(row, V, answer, against);
  out.answer = pair.answer;
  out.against = pair.against;
  out.answer_logit = row[pair.answer];
  out.against_logit = row[pair.against];
  return out;
}

nlohmann::ordered_json next_symbols_json(const NextSymbols& n, const Vocab& vocab) {
  using json = nlohmann::ordered_json;
  json top = json::array();
  for (const NextSymbolEntry& e : n.top)
    top.push_back({{"id", e.id}, {"symbol", vocab.symbol(e.id)}, {"probability", round9(e.probability)},
                   {"logit", round9(e.logit)}});
  return {{"tokens", n.tokens},
          {"position", n.position},
          {"temperature", n.temperature},
          {"top_k", n.top_k},
          {"ablate", n.ablate},
          {"top", std::move(top)},
          {"answer", {{"id", n.answer}, {"symbol", vocab.symbol(n.answer)}, {"logit", round9(n.answer_logit)}}},
          {"against", {{"id", n.against}, {"symbol", vocab.symbol(n.against)}, {"logit", round9(n.against_logit)}}},
          {"difference", round9(n.answer_logit - n.against_logit)}};
}

}  // namespace mg::serve

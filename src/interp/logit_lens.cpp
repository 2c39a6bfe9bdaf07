// The logit lens from one recorded forward (interp/logit_lens.h): the stream rows at the
// points hook_resid_pre(0) and hook_resid_post(l), each through ln_f and the head in double.
#include "interp/logit_lens.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "interp/logit_choice.h"
#include "interp/patterns.h"
#include "nn/reference.h"

namespace mg {
namespace {

// logits [V] = head.weight [V,D] @ LayerNorm(x; ln_f), x one stream row [D].
std::vector<float> read_out(const Gpt& model, const float* x) {
  const ModelConfig& c = model.config();
  const int64_t D = c.n_embd, V = c.vocab_size;
  const Tensor& gamma = model.weights().ln_f_weight.value();
  const Tensor& beta = model.weights().ln_f_bias.value();
  const Tensor& unembed = model.weights().head.value();
  const std::vector<double> y = layer_norm_row(x, D, gamma.data(), beta.data(), c.norm_eps);
  std::vector<float> logits(static_cast<size_t>(V));
  for (int64_t v = 0; v < V; ++v) {
    double sum = 0.0;
    for (int64_t j = 0; j < D; ++j) sum += unembed[v * D + j] * y[j];
    logits[v] = static_cast<float>(sum);
  }
  return logits;
}

}  // namespace

LogitLens logit_lens(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what,
                     std::optional<int64_t> position, std::optional<int32_t> answer, int64_t top) {
  const ModelConfig& c = model.config();
  const std::vector<int32_t> ids = encode_for_model(model, vocab, text, what);
  const int64_t T = static_cast<int64_t>(ids.size()), D = c.n_embd, V = c.vocab_size;
  LogitLens r;
  for (int32_t id : ids) r.tokens.push_back(vocab.symbol(id));
  r.position = position.value_or(T - 1);
  check_index("position", r.position, T, "the text has " + std::to_string(T) + " symbols");
  NoGradGuard no_grad;
  ForwardHooks hooks;
  hooks.record(hook::resid_pre(0));
  for (int64_t l = 0; l < c.n_layer; ++l) hooks.record(hook::resid_post(l));
  const Tensor logits = model.forward(ids, 1, T, {.hooks = &hooks}).value();  // [1,T,V]
  r.answer = answer ? *answer : best_symbol(logits.data() + r.position * V, V);
  r.answer_symbol = vocab.symbol(r.answer);
  for (int64_t stage = 0; stage <= c.n_layer; ++stage) {
    const std::string point = stage == 0 ? hook::resid_pre(0) : hook::resid_post(stage - 1);
    const std::vector<float> out = read_out(model, hooks[point].data() + r.position * D);
    for (float logit : out) require_finite(logit, "a logit of the lens");
    LensStage s;
    s.name = stage == 0 ? "embed" : "L" + std::to_string(stage - 1);
    std::vector<int32_t> order(static_cast<size_t>(V));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return out[a] > out[b]; });
    for (int64_t i = 0; i < std::min(top, V); ++i) s.top.push_back({order[i], vocab.symbol(order[i]), out[order[i]]});
    s.answer_logit = out[r.answer];
    s.answer_rank = symbol_rank(out.data(), V, r.answer);
    if (r.first_stage < 0 && s.answer_rank == 1) r.first_stage = stage;
    r.stages.push_back(std::move(s));
  }
  return r;
}

}  // namespace mg

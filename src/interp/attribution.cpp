// Direct logit attribution from one recorded forward (interp/attribution.h): the parts
// are read at the forward's named points (nn/hooks.h), each centred and divided by ln_f's
// recorded scale, then dotted with gamma * W_U's answer (and competitor) row, in double.
#include "interp/attribution.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "interp/logit_choice.h"
#include "interp/patterns.h"

namespace mg {
namespace {

// sum_j u_j (c_j - mean(c)) / sigma for the part c [D]: the part through the frozen ln_f.
double through_ln_f(const std::vector<double>& c, const std::vector<double>& u, double sigma) {
  double mean = 0.0, dot = 0.0;
  for (double v : c) mean += v;
  mean /= static_cast<double>(c.size());
  for (size_t j = 0; j < c.size(); ++j) dot += (c[j] - mean) * u[j];
  return dot / sigma;
}

std::vector<double> row(const float* x, int64_t D) { return std::vector<double>(x, x + D); }

}  // namespace

void record_stream_parts(ForwardHooks& hooks, const ModelConfig& config, int64_t layers) {
  hooks.record(hook::embed);
  if (config.position == PositionType::learned) hooks.record(hook::pos_embed);
  for (int64_t l = 0; l < layers; ++l) {
    hooks.record(hook::z(l));
    hooks.record(hook::mlp_out(l));
  }
}

std::vector<double> head_output_row(const Tensor& wo, const float* z, int64_t h, int64_t t, int64_t T_all, int64_t d) {
  const int64_t D = wo.dim(0), H = D / d;
  MG_CHECK(h >= 0 && h < H && t >= 0 && t < T_all, "head_output_row: head or position out of range");
  std::vector<double> out(static_cast<size_t>(D), 0.0);
  const float* zh = z + (h * T_all + t) * d;
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < d; ++j) out[i] += static_cast<double>(wo[i * D + h * d + j]) * zh[j];
  return out;
}

Attribution attribute_logits(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what,
                             const AttributionQuery& query) {
  return attribute_logits(model, vocab, encode_for_model(model, vocab, text, what), query);
}

Attribution attribute_logits(const Gpt& model, const Vocab& vocab, const std::vector<int32_t>& ids,
                             const AttributionQuery& query) {
  const ModelConfig& c = model.config();
  const int64_t T = static_cast<int64_t>(ids.size()), D = c.n_embd, H = c.n_head, d = c.head_width(),
                V = c.vocab_size, L = c.n_layer;
  Attribution r;
  for (int32_t id : ids) r.tokens.push_back(vocab.symbol(id));
  r.position = query.position.value_or(T - 1);
  check_index("position", r.position, T, "the text has " + std::to_string(T) + " symbols");
  const int64_t P = r.position;

  NoGradGuard no_grad;
  ForwardHooks hooks;
  record_stream_parts(hooks, c, L);
  hooks.record(hook::ln_final_scale);
  const Tensor logits = model.forward(ids, 1, T, {.hooks = &hooks}).value();  // [1,T,V]
  const float* at_p = logits.data() + P * V;
  const LogitPair pair = choose_pair(at_p, V, query.answer, query.against);
  r.answer = pair.answer;
  r.against = pair.against;
  r.answer_symbol = vocab.symbol(r.answer);
  r.against_symbol = vocab.symbol(r.against);
  r.logit = at_p[r.answer];
  r.against_logit = at_p[r.against];
  require_finite(r.logit - r.against_logit, "the logit difference attributed");
  r.scale = hooks[hook::ln_final_scale].data()[P];

  // u = gamma * W_U[answer], and gamma * (W_U[answer] - W_U[against]) for the difference.
  const ModelWeights& weights = model.weights();
  const Tensor& gamma = weights.ln_f_weight.value();
  const Tensor& beta = weights.ln_f_bias.value();
  const Tensor& unembed = weights.head.value();  // [V,D]
  std::vector<double> u(static_cast<size_t>(D)), u_diff(static_cast<size_t>(D));
  double bias_logit = 0.0, bias_difference = 0.0;
  for (int64_t j = 0; j < D; ++j) {
    const double wa = unembed[r.answer * D + j], wb = unembed[r.against * D + j];
    u[j] = gamma[j] * wa;
    u_diff[j] = gamma[j] * (wa - wb);
    bias_logit += beta[j] * wa;
    bias_difference += beta[j] * (wa - wb);
  }
  auto add_part = [&](std::string name, int64_t layer, int64_t head, const std::vector<double>& part) {
    r.parts.push_back({std::move(name), layer, head, through_ln_f(part, u, r.scale), through_ln_f(part, u_diff, r.scale)});
  };

  add_part("embed", -1, -1, row(hooks[hook::embed].data() + P * D, D));
  if (c.position == PositionType::learned) add_part("pos_embed", -1, -1, row(hooks[hook::pos_embed].data() + P * D, D));
  for (int64_t l = 0; l < L; ++l) {
    const Tensor& wo = weights.blocks[static_cast<size_t>(l)].out_proj.value();  // [D,D]
    const float* z = hooks[hook::z(l)].data();  // [1,H,T,d]
    for (int64_t h = 0; h < H; ++h)
      add_part("L" + std::to_string(l) + ".H" + std::to_string(h), l, h, head_output_row(wo, z, h, P, T, d));
    add_part("L" + std::to_string(l) + ".mlp", l, -1, row(hooks[hook::mlp_out(l)].data() + P * D, D));
  }
  r.parts.push_back({parameter_names(c).ln_f_bias, -1, -1, bias_logit, bias_difference});
  for (const AttributionPart& part : r.parts) {
    r.parts_logit += part.logit;
    r.parts_difference += part.difference;
  }
  require_finite(r.parts_logit + r.parts_difference, "the sum of the attribution's parts");
  return r;
}

ProbeAttribution attribute_probe(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes) {
  ProbeAttribution out;
  const int64_t block = model.config().block_size;
  const ProbeKinds kinds = probe_kinds(probes);
  std::vector<int64_t> kind_at(kinds.names.size(), -1);  // index into out.kinds, once an item of the kind counts
  for (size_t i = 0; i < probes.size(); ++i) {
    const ProbeItem& item = probes[i];
    std::optional<std::vector<int32_t>> ids = vocab.find_all(item.prompt);
    const std::optional<int32_t> answer = vocab.find(item.answer);
    if (!ids || ids->empty() || !answer) {
      ++out.skipped;
      continue;
    }
    if (static_cast<int64_t>(ids->size()) > block) ids->erase(ids->begin(), ids->end() - block);
    const Attribution a = attribute_logits(model, vocab, *ids, {std::nullopt, answer, std::nullopt});
    if (out.part_names.empty())
      for (const AttributionPart& p : a.parts) {
        out.part_names.push_back(p.name);
        out.part_heads.emplace_back(p.layer, p.head);
      }
    int64_t& at = kind_at[kinds.of_item[i]];
    if (at < 0) {
      at = static_cast<int64_t>(out.kinds.size());
      out.kinds.push_back({item.kind, 0, 0.0, std::vector<double>(a.parts.size(), 0.0)});
    }
    KindAttribution* kind = &out.kinds[static_cast<size_t>(at)];
    ++kind->items;
    kind->difference += a.logit - a.against_logit;
    for (size_t i = 0; i < a.parts.size(); ++i) kind->parts[i] += a.parts[i].difference;
    out.largest_gap = std::max(out.largest_gap, std::abs(a.parts_difference - (a.logit - a.against_logit)));
  }
  for (KindAttribution& k : out.kinds) {
    k.difference /= static_cast<double>(k.items);
    for (double& p : k.parts) p /= static_cast<double>(k.items);
  }
  return out;
}

void add_direct_logits(const ProbeAttribution& attribution, RoleReport& report) {
  int64_t items = 0;
  for (const KindAttribution& k : attribution.kinds) items += k.items;
  for (HeadRoleScores& h : report.heads) {
    const auto at = std::find(attribution.part_heads.begin(), attribution.part_heads.end(), std::pair{h.layer, h.head});
    if (at == attribution.part_heads.end() || items == 0) continue;
    const size_t part = static_cast<size_t>(at - attribution.part_heads.begin());
    double sum = 0.0;
    h.direct_logit_by_kind.clear();
    for (const KindAttribution& k : attribution.kinds) {
      h.direct_logit_by_kind.emplace_back(k.kind, k.parts[part]);
      sum += k.parts[part] * static_cast<double>(k.items);
    }
    h.direct_logit = sum / static_cast<double>(items);
  }
}

}  // namespace mg

// inspect-heads' computation: one forward that captures every layer's projected_weights
// [1,H,T,T], then, for the importance of each selected head, the text's loss with that
// head's output zeroed (an edit of blocks.L.attn.hook_z, nn/hooks.h).
#include "interp/patterns.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "core/error.h"

namespace mg {
namespace {

// Mean next-symbol cross-entropy over the text: inputs ids[0..T-2], targets ids[1..T-1].
// The model is causal, so these logits equal those of the full T-position forward.
double text_loss(const Gpt& model, const std::vector<int32_t>& ids, const ForwardOptions& options) {
  const int64_t n = static_cast<int64_t>(ids.size()) - 1;
  std::vector<int32_t> inputs(ids.begin(), ids.end() - 1), targets(ids.begin() + 1, ids.end());
  const double loss = static_cast<double>(model.loss(inputs, targets, 1, n, options).value()[0]);
  require_finite(loss, options.hooks ? "the text's loss with a head zeroed" : "the loss on the text");
  return loss;
}

// At most 32 texts per forward, and at most 64 MB of their patterns: a long block_size
// runs fewer texts at once.
constexpr size_t kTextsPerForward = 32;
constexpr size_t kPatternBatchBytes = size_t{64} << 20;

}  // namespace

size_t pattern_bytes(const Gpt& model, int64_t T) {
  return static_cast<size_t>(model.config().n_layer * model.config().n_head * T * T) * sizeof(float);
}

std::vector<std::vector<float>> head_patterns(const Gpt& model, const std::vector<int32_t>& ids) {
  NoGradGuard no_grad;
  const int64_t T = static_cast<int64_t>(ids.size()), H = model.config().n_head;
  ForwardHooks hooks;
  for (int64_t l = 0; l < model.config().n_layer; ++l) hooks.record(hook::pattern(l));
  model.forward(ids, 1, T, {.hooks = &hooks});
  std::vector<std::vector<float>> out;
  for (int64_t l = 0; l < model.config().n_layer; ++l) {
    const Tensor& w = hooks[hook::pattern(l)];  // [1,H,T,T]
    for (int64_t h = 0; h < H; ++h) out.emplace_back(w.data() + h * T * T, w.data() + (h + 1) * T * T);
  }
  return out;
}

std::vector<std::vector<std::vector<float>>> head_patterns_of_texts(const Gpt& model,
                                                                    std::span<const std::vector<int32_t>> texts) {
  NoGradGuard no_grad;
  const int64_t L = model.config().n_layer, H = model.config().n_head;
  std::vector<std::vector<std::vector<float>>> out(texts.size());
  std::map<size_t, std::vector<size_t>> texts_of_length;  // length -> indices into TEXTS, in order
  for (size_t i = 0; i < texts.size(); ++i) {
    MG_CHECK(!texts[i].empty() && static_cast<int64_t>(texts[i].size()) <= model.config().block_size,
             "head_patterns_of_texts: a text empty or longer than block_size");
    texts_of_length[texts[i].size()].push_back(i);
  }
  std::vector<int32_t> batch;
  for (const auto& [length, indices] : texts_of_length) {
    const int64_t T = static_cast<int64_t>(length);
    const size_t per_forward = std::clamp<size_t>(kPatternBatchBytes / pattern_bytes(model, T), 1, kTextsPerForward);
    for (size_t first = 0; first < indices.size(); first += per_forward) {
      const size_t count = std::min(per_forward, indices.size() - first);
      batch.clear();
      for (size_t j = first; j < first + count; ++j) batch.insert(batch.end(), texts[indices[j]].begin(), texts[indices[j]].end());
      ForwardHooks hooks;
      for (int64_t l = 0; l < L; ++l) hooks.record(hook::pattern(l));
      model.forward(batch, static_cast<int64_t>(count), T, {.hooks = &hooks});
      for (size_t j = 0; j < count; ++j) {
        std::vector<std::vector<float>>& patterns = out[indices[first + j]];
        for (int64_t l = 0; l < L; ++l) {
          const Tensor& w = hooks[hook::pattern(l)];  // [B,H,T,T]
          for (int64_t h = 0; h < H; ++h) {
            const float* head = w.data() + (static_cast<int64_t>(j) * H + h) * T * T;
            patterns.emplace_back(head, head + T * T);
          }
        }
      }
    }
  }
  return out;
}

HeadSummary summarize_weights(const std::vector<float>& w, int64_t T) {
  MG_CHECK(static_cast<int64_t>(w.size()) == T * T && T >= 1, "summarize_weights: not a [T,T] matrix");
  HeadSummary s;
  double entropy = 0.0;
  std::vector<double> by_offset(static_cast<size_t>(T), 0.0);  // [T] index -o: weight on offset o = s - t
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t k = 0; k <= t; ++k) {
      const double p = w[static_cast<size_t>(t * T + k)];
      if (p > 0.0) entropy -= p * std::log(p);
      by_offset[static_cast<size_t>(t - k)] += p;
    }
  }
  s.mean_entropy = entropy / static_cast<double>(T);
  int64_t best = 0;  // scanned from offset 0 backwards, so a tie keeps the offset nearest 0
  for (int64_t back = 1; back < T; ++back)
    if (by_offset[static_cast<size_t>(back)] > by_offset[static_cast<size_t>(best)]) best = back;
  s.top_offset = -best;
  s.top_offset_share = by_offset[static_cast<size_t>(best)] / static_cast<double>(T);
  if (T > 1) {
    double first = 0.0;
    for (int64_t t = 1; t < T; ++t) first += w[static_cast<size_t>(t * T)];
    s.first_share = first / static_cast<double>(T - 1);
  }
  return s;
}

void check_index(const std::string& option, int64_t value, int64_t count, const std::string& of_what) {
  if (value < 0 || value >= count)
    throw ArgumentError(option, " " + std::to_string(value) + " is out of range: " + of_what + ", valid 0.." +
                                    std::to_string(count - 1));
}

std::vector<int32_t> encode_for_model(const Gpt& model, const Vocab& vocab, std::u32string_view text,
                                      const std::string& what) {
  const int64_t block_size = model.config().block_size;
  if (text.empty()) throw ArgumentError(what, " is empty: give at least one symbol");
  if (static_cast<int64_t>(text.size()) > block_size)
    throw ArgumentError(what, " has " + std::to_string(text.size()) + " symbols, more than the model's block_size of " +
                                  std::to_string(block_size));
  try {
    return vocab.encode(text, what);
  } catch (const InputError& e) {  // "WHAT: symbol ... is not in the vocabulary"
    const std::string message = e.what();
    if (message.rfind(what, 0) != 0) throw;
    throw ArgumentError(what, message.substr(what.size()));
  }
}

Inspection inspect_heads(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what,
                         const InspectOptions& options) {
  const ModelConfig& c = model.config();
  Inspection r;
  r.text = std::u32string(text);
  r.ids = encode_for_model(model, vocab, text, what);
  for (int32_t id : r.ids) r.tokens.push_back(vocab.symbol(id));
  r.T = static_cast<int64_t>(r.ids.size());
  r.n_layer = c.n_layer;
  r.n_head = c.n_head;
  const HeadSelection& sel = options.selection;
  MG_CHECK(!sel.layer || (*sel.layer >= 0 && *sel.layer < c.n_layer), "inspect_heads: layer out of range");
  MG_CHECK(!sel.head || (*sel.head >= 0 && *sel.head < c.n_head), "inspect_heads: head out of range");

  NoGradGuard no_grad;
  std::vector<std::vector<float>> patterns = head_patterns(model, r.ids);
  const bool score = options.importance && r.T > 1;
  if (score) r.loss = text_loss(model, r.ids, {});
  for (int64_t l = 0; l < c.n_layer; ++l) {
    for (int64_t h = 0; h < c.n_head; ++h) {
      if (!sel.contains(l, h)) continue;
      HeadInspection head;
      head.layer = l;
      head.head = h;
      head.projected_weights = std::move(patterns[static_cast<size_t>(l * c.n_head + h)]);
      head.summary = summarize_weights(head.projected_weights, r.T);
      if (score) {
        ForwardHooks zeroed;
        add_ablation(zeroed, {l, h, {}});
        head.summary.ablated_loss = text_loss(model, r.ids, {.hooks = &zeroed});
        head.summary.importance = *head.summary.ablated_loss - *r.loss;
      }
      r.heads.push_back(std::move(head));
    }
  }
  return r;
}

double frobenius_norm(const Tensor& t) {
  double sum = 0.0;
  for (float v : t.span()) sum += static_cast<double>(v) * v;
  return std::sqrt(sum);
}

HeadParameters head_parameters(const Gpt& model, int64_t layer, int64_t head) {
  const ModelConfig& c = model.config();
  MG_CHECK(layer >= 0 && layer < c.n_layer && head >= 0 && head < c.n_head, "head_parameters: out of range");
  const int64_t D = c.n_embd, d = c.head_width();
  const auto l = static_cast<size_t>(layer);
  const ModelParameterNames all_names = parameter_names(c);
  const BlockOf<std::string>& names = all_names.blocks[l];
  const BlockWeights& weights = model.weights().blocks[l];
  struct Matrix {
    const char* name;
    const std::string& tensor;
    const Var& weight;
  };
  HeadParameters p;
  p.layer = layer;
  p.head = head;
  for (const Matrix& m : {Matrix{"Wq", names.q_proj, weights.q_proj}, Matrix{"Wk", names.k_proj, weights.k_proj},
                          Matrix{"Wv", names.v_proj, weights.v_proj}, Matrix{"Wo", names.out_proj, weights.out_proj}}) {
    ParameterSlice s;
    s.name = m.name;
    s.columns = (s.name == "Wo");
    s.tensor = m.tensor;
    s.first = head * d;
    s.last = head * d + d - 1;
    const Tensor& w = m.weight.value();  // [D,D], [out,in]
    if (!s.columns) {
      // Rows h*d .. h*d+d-1 are contiguous: [d,D].
      s.values = Tensor::empty({d, D});
      std::memcpy(s.values.data(), w.data() + head * d * D, sizeof(float) * static_cast<size_t>(d * D));
    } else {
      // Output coordinate i reads head h through w[i][h*d .. h*d+d-1]: [D,d].
      s.values = Tensor::empty({D, d});
      for (int64_t i = 0; i < D; ++i)
        std::memcpy(s.values.data() + i * d, w.data() + i * D + head * d, sizeof(float) * static_cast<size_t>(d));
    }
    s.norm = frobenius_norm(s.values);
    s.tensor_norm = frobenius_norm(w);
    p.slices.push_back(std::move(s));
  }
  return p;
}

}  // namespace mg

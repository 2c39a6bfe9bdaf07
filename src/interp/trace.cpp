// The worked trace of one head: one forward pass captures the residual stream entering
// block L (and ln_f's input, for the logit attribution) and the projected_weights; the
// head's arithmetic is then redone for one query row in plain loops, in double, each
// intermediate kept for the writers (report/trace_format.h).
#include "interp/trace.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "interp/patterns.h"
#include "kernels/rope.h"
#include "nn/reference.h"

namespace mg {
namespace {

// Rows first..first+d-1 of W [D,D] applied to x [D]: one head's q, k or v coordinates.
std::vector<double> head_rows(const Tensor& W, int64_t first, int64_t d, const std::vector<double>& x) {
  return rows_times(W.data(), first, d, x);
}

// Interleaved pairs (2i, 2i+1) rotated by the table's float32 angle at position p.
std::vector<double> rotate(const std::vector<double>& x, const RopeTable& table, int64_t p) {
  const int64_t half = table.head_width / 2;
  std::vector<double> y(x.size());
  for (int64_t i = 0; i < half; ++i) {
    const double c = table.cos[p * half + i], s = table.sin[p * half + i];
    y[2 * i] = x[2 * i] * c - x[2 * i + 1] * s;
    y[2 * i + 1] = x[2 * i] * s + x[2 * i + 1] * c;
  }
  return y;
}

// LayerNorm(blocks.L.ln1) of the stream entering block L at positions 0..P: [P+1][D].
std::vector<std::vector<double>> normed_rows(const Gpt& model, const Tensor& stream, int64_t layer, int64_t P) {
  const ModelConfig& c = model.config();
  const BlockWeights& block = model.weights().blocks[static_cast<size_t>(layer)];
  std::vector<std::vector<double>> normed(static_cast<size_t>(P + 1));
  for (int64_t s = 0; s <= P; ++s)
    normed[s] = layer_norm_row(stream.data() + s * c.n_embd, c.n_embd, block.ln1_weight.value().data(),
                               block.ln1_bias.value().data(), c.norm_eps);
  return normed;
}

// One head's attention at the last of the NORMED positions, every intermediate kept.
struct HeadRow {
  std::vector<double> q_raw, q;                          // [d]
  std::vector<std::vector<double>> keys, values;         // [P+1][d]
  std::vector<double> dots, scores, weights;             // [P+1]
  double scale = 0.0;
  std::vector<double> output;                            // [d]
};
HeadRow head_row(const Gpt& model, int64_t layer, int64_t head, const std::vector<std::vector<double>>& normed,
                 const RopeTable* table) {
  const int64_t d = model.config().head_width(), P = static_cast<int64_t>(normed.size()) - 1;
  const BlockWeights& block = model.weights().blocks[static_cast<size_t>(layer)];
  HeadRow r;
  r.q_raw = head_rows(block.q_proj.value(), head * d, d, normed[P]);
  r.q = table ? rotate(r.q_raw, *table, P) : r.q_raw;
  r.scale = static_cast<double>(1.0f / std::sqrt(static_cast<float>(d)));
  for (int64_t s = 0; s <= P; ++s) {
    std::vector<double> k = head_rows(block.k_proj.value(), head * d, d, normed[s]);
    r.keys.push_back(table ? rotate(k, *table, s) : k);
    r.values.push_back(head_rows(block.v_proj.value(), head * d, d, normed[s]));
    r.dots.push_back(std::inner_product(r.q.begin(), r.q.end(), r.keys.back().begin(), 0.0));
    r.scores.push_back(r.dots.back() * r.scale);
  }
  // Causal softmax over keys 0..P (the keys after P are masked out, weight 0).
  r.weights = r.scores;
  softmax_in_place(r.weights);
  r.output.assign(static_cast<size_t>(d), 0.0);
  for (int64_t s = 0; s <= P; ++s)
    for (int64_t j = 0; j < d; ++j) r.output[j] += r.weights[s] * r.values[s][j];
  return r;
}

}  // namespace

SplitMergeTrace trace_split_merge(const Gpt& model, const TraceForward& forward, int64_t layer, int64_t position) {
  const ModelConfig& c = model.config();
  const int64_t D = c.n_embd, H = c.n_head, d = c.head_width(), P = position;
  const BlockWeights& block = model.weights().blocks[static_cast<size_t>(layer)];
  const std::vector<std::vector<double>> normed = normed_rows(model, forward.streams[static_cast<size_t>(layer)], layer, P);
  const RopeTable table = c.position == PositionType::rope ? make_rope_table(c.block_size, d, c.rope_base) : RopeTable{};
  SplitMergeTrace r;
  r.H = H;
  r.d = d;
  r.q_row = head_rows(block.q_proj.value(), 0, D, normed[P]);  // all D rows: every head's q at once
  r.k_row = head_rows(block.k_proj.value(), 0, D, normed[P]);
  r.v_row = head_rows(block.v_proj.value(), 0, D, normed[P]);
  for (int64_t h = 0; h < H; ++h) {
    HeadRow row = head_row(model, layer, h, normed, c.position == PositionType::rope ? &table : nullptr);
    r.concatenated.insert(r.concatenated.end(), row.output.begin(), row.output.end());  // merge_heads: side by side
    r.head_weights.push_back(std::move(row.weights));
    r.head_outputs.push_back(std::move(row.output));
  }
  const Tensor& Wo = block.out_proj.value();  // [D,D]
  r.attention_out.assign(static_cast<size_t>(D), 0.0);
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j) r.attention_out[i] += static_cast<double>(Wo[i * D + j]) * r.concatenated[j];
  const float* in = forward.streams[static_cast<size_t>(layer)].data() + P * D;
  const float* mid = forward.mids[static_cast<size_t>(layer)].data() + P * D;
  r.residual_in.assign(in, in + D);
  r.residual_out = residual_add(r.residual_in, r.attention_out);
  r.forward_residual_out.assign(mid, mid + D);
  return r;
}

void check_head_in_model(const ModelConfig& c, int64_t layer, int64_t head, const std::string& option) {
  // The head is the job's argument (OPTION): "trace layer 9 is out of range: ...".
  if (layer >= c.n_layer)
    throw ArgumentError(option, " layer " + std::to_string(layer) + " is out of range: the model has " +
                                    std::to_string(c.n_layer) + " layers, valid 0.." + std::to_string(c.n_layer - 1));
  if (head >= c.n_head)
    throw ArgumentError(option, " head " + std::to_string(head) + " is out of range: the model has " +
                                    std::to_string(c.n_head) + " heads, valid 0.." + std::to_string(c.n_head - 1));
}

std::pair<int64_t, int64_t> parse_head_name(const std::string& spec, const std::string& option) {
  const size_t dot = spec.find('.');
  auto number = [&](const std::string& part) {
    if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos)
      throw ArgumentError(option, " \"" + spec + "\" is not a head: L3.H1 or 3.1 (layer and head, two non-negative integers)");
    return static_cast<int64_t>(std::stoll(part));
  };
  if (dot == std::string::npos) number("");
  std::string layer = spec.substr(0, dot), head = spec.substr(dot + 1);
  // The name every output prints, L3.H1, or the short 3.1: both letters or neither.
  if (!layer.empty() && layer[0] == 'L' && !head.empty() && head[0] == 'H') {
    layer.erase(0, 1);
    head.erase(0, 1);
  }
  return {number(layer), number(head)};
}

HeadTrace trace_head(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what, int64_t layer,
                     int64_t head, int64_t position, int64_t top) {
  const TraceForward forward = trace_forward(model, vocab, text, what);
  HeadTrace r = trace_head(model, vocab, forward, layer, head, position, top);
  r.split_merge = trace_split_merge(model, forward, layer, position);
  return r;
}

TraceForward trace_forward(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what) {
  TraceForward f;
  const std::vector<int32_t> ids = encode_for_model(model, vocab, text, what);
  for (int32_t id : ids) f.tokens.push_back(vocab.symbol(id));
  NoGradGuard no_grad;
  const int64_t L = model.config().n_layer;
  ForwardHooks hooks;
  for (int64_t l = 0; l < L; ++l) {
    hooks.record(hook::resid_pre(l));
    hooks.record(hook::pattern(l));
    hooks.record(hook::resid_mid(l));
  }
  hooks.record(hook::resid_post(L - 1));
  model.forward(ids, 1, static_cast<int64_t>(ids.size()), {.hooks = &hooks});
  for (int64_t l = 0; l < L; ++l) {
    f.streams.push_back(hooks[hook::resid_pre(l)]);
    f.weights.push_back(hooks[hook::pattern(l)]);
    f.mids.push_back(hooks[hook::resid_mid(l)]);
  }
  f.streams.push_back(hooks[hook::resid_post(L - 1)]);
  return f;
}

HeadTrace trace_head(const Gpt& model, const Vocab& vocab, const TraceForward& forward, int64_t layer, int64_t head,
                     int64_t position, int64_t top) {
  const ModelConfig& c = model.config();
  const int64_t text_size = static_cast<int64_t>(forward.tokens.size());
  check_head_in_model(c, layer, head, "trace");
  check_index("position", position, text_size, "the text has " + std::to_string(text_size) + " symbols");

  HeadTrace r;
  r.tokens = forward.tokens;
  r.layer = layer;
  r.head = head;
  r.position = position;
  r.T = text_size;
  r.D = c.n_embd;
  r.d = c.head_width();
  r.position_type = c.position;
  r.rope_base = c.rope_base;
  const int64_t T = r.T, D = r.D, d = r.d, P = position, V = c.vocab_size;
  const std::vector<Tensor>& streams = forward.streams;
  const std::vector<Tensor>& weights = forward.weights;

  const BlockWeights& block = model.weights().blocks[static_cast<size_t>(layer)];
  const Tensor& Wo = block.out_proj.value();
  const bool rope = c.position == PositionType::rope;
  const RopeTable table = rope ? make_rope_table(c.block_size, d, c.rope_base) : RopeTable{};

  const std::vector<std::vector<double>> normed = normed_rows(model, streams[static_cast<size_t>(layer)], layer, P);
  r.x = normed[P];
  HeadRow row_of_head = head_row(model, layer, head, normed, rope ? &table : nullptr);
  r.q_raw = std::move(row_of_head.q_raw);
  r.q = std::move(row_of_head.q);
  r.keys = std::move(row_of_head.keys);
  r.values = std::move(row_of_head.values);
  r.dots = std::move(row_of_head.dots);
  r.scale = row_of_head.scale;
  r.scores = std::move(row_of_head.scores);
  r.weights = std::move(row_of_head.weights);
  r.weights.resize(static_cast<size_t>(T), 0.0);  // keys after P: exactly 0
  const float* row = weights[static_cast<size_t>(layer)].data() + (head * T + P) * T;  // [T] of [1,H,T,T]
  r.forward_weights.assign(row, row + T);

  r.head_output = std::move(row_of_head.output);
  r.contribution.assign(static_cast<size_t>(D), 0.0);
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < d; ++j) r.contribution[i] += static_cast<double>(Wo[i * D + head * d + j]) * r.head_output[j];

  // Direct logit attribution through a frozen ln_f (see the header).
  const float* final_row = streams.back().data() + P * D;
  r.final_sigma = layer_norm_moments(final_row, D, c.norm_eps).sigma;
  const double c_mean = std::accumulate(r.contribution.begin(), r.contribution.end(), 0.0) / static_cast<double>(D);
  const Tensor& gamma = model.weights().ln_f_weight.value();
  const Tensor& W_vocab = model.weights().head.value();  // [V,D]
  std::vector<double> through(static_cast<size_t>(D));
  for (int64_t j = 0; j < D; ++j) through[j] = (r.contribution[j] - c_mean) / r.final_sigma * gamma[j];
  r.logit_push.assign(static_cast<size_t>(V), 0.0);
  for (int64_t v = 0; v < V; ++v)
    for (int64_t j = 0; j < D; ++j) r.logit_push[v] += static_cast<double>(W_vocab[v * D + j]) * through[j];
  std::vector<int32_t> order(static_cast<size_t>(V));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t z) { return r.logit_push[a] > r.logit_push[z]; });
  const int64_t n = std::min(top, V);
  for (int64_t i = 0; i < n; ++i) r.top_up.push_back({order[i], vocab.symbol(order[i]), r.logit_push[order[i]]});
  for (int64_t i = 0; i < n; ++i) {
    const int32_t id = order[static_cast<size_t>(V - 1 - i)];
    r.top_down.push_back({id, vocab.symbol(id), r.logit_push[id]});
  }
  return r;
}

}  // namespace mg

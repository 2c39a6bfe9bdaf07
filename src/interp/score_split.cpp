// The attention score split into source pairs (interp/score_split.h): one recorded
// forward, then each source's ln1 part at the query and at every key, through the head's
// slices of Wq and Wk, rotated, dotted, in double.
#include "interp/score_split.h"

#include <cmath>

#include "core/error.h"
#include "interp/attribution.h"
#include "interp/patterns.h"
#include "kernels/rope.h"

namespace mg {
namespace {

using Vector = std::vector<double>;

// W [D,D] (out,in) rows h*d .. h*d+d-1 applied to x [D]: [d].
Vector head_rows_times(const Tensor& w, int64_t h, int64_t d, const Vector& x) {
  const int64_t D = w.dim(1);
  Vector out(static_cast<size_t>(d), 0.0);
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < D; ++j) out[i] += static_cast<double>(w[(h * d + i) * D + j]) * x[j];
  return out;
}

// R(position) x for x [d], pairs (2i, 2i+1) as kernels/rope.h turns them.
Vector rotate(const RopeTable& table, int64_t position, const Vector& x) {
  const int64_t d = static_cast<int64_t>(x.size()), half = d / 2;
  Vector out(x.size());
  for (int64_t i = 0; i < half; ++i) {
    const double c = table.cos[position * half + i], s = table.sin[position * half + i];
    out[2 * i] = x[2 * i] * c - x[2 * i + 1] * s;
    out[2 * i + 1] = x[2 * i] * s + x[2 * i + 1] * c;
  }
  return out;
}

double dot(const Vector& a, const Vector& b) {
  double sum = 0.0;
  for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace

ScoreSplit split_scores(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what,
                        int64_t layer, int64_t head, std::optional<int64_t> position) {
  const ModelConfig& c = model.config();
  const int64_t L = c.n_layer, H = c.n_head, D = c.n_embd, d = c.head_width();
  check_index("layer", layer, L, "the model has " + std::to_string(L) + " layers");
  check_index("head", head, H, "each layer has " + std::to_string(H) + " heads");
  const std::vector<int32_t> ids = encode_for_model(model, vocab, text, what);
  const int64_t T = static_cast<int64_t>(ids.size());
  ScoreSplit r;
  r.layer = layer;
  r.head = head;
  r.position = position.value_or(T - 1);
  check_index("position", r.position, T, "the text has " + std::to_string(T) + " symbols");
  r.rope = c.position == PositionType::rope;
  for (int32_t id : ids) r.tokens.push_back(vocab.symbol(id));
  const int64_t P = r.position;

  NoGradGuard no_grad;
  ForwardHooks hooks;
  record_stream_parts(hooks, c, layer);
  hooks.record(hook::resid_pre(layer));
  hooks.record(hook::pattern(layer));
  model.forward(ids, 1, T, {.hooks = &hooks});

  // Each source's rows [T][D]: what it wrote into the stream at every position.
  std::vector<std::vector<Vector>> sources;
  auto rows_of = [&](const float* x, int64_t stride) {
    std::vector<Vector> rows;
    for (int64_t t = 0; t < T; ++t) rows.emplace_back(x + t * stride, x + t * stride + D);
    return rows;
  };
  r.sources.push_back("embed");
  sources.push_back(rows_of(hooks[hook::embed].data(), D));
  if (c.position == PositionType::learned) {
    r.sources.push_back("pos_embed");
    sources.push_back(rows_of(hooks[hook::pos_embed].data(), D));
  }
  const ModelWeights& w = model.weights();
  for (int64_t l = 0; l < layer; ++l) {
    const Tensor& wo = w.blocks[static_cast<size_t>(l)].out_proj.value();  // [D,D]
    const float* z = hooks[hook::z(l)].data();                              // [1,H,T,d]
    for (int64_t h = 0; h < H; ++h) {
      std::vector<Vector> rows;
      for (int64_t t = 0; t < T; ++t) rows.push_back(head_output_row(wo, z, h, t, T, d));
      r.sources.push_back("L" + std::to_string(l) + ".H" + std::to_string(h));
      sources.push_back(std::move(rows));
    }
    r.sources.push_back("L" + std::to_string(l) + ".mlp");
    sources.push_back(rows_of(hooks[hook::mlp_out(l)].data(), D));
  }
  r.sources.push_back("ln1.bias");
  const int64_t S = static_cast<int64_t>(r.sources.size());

  // ln1's frozen scale at each position, from the stream the forward carried.
  const BlockWeights& b = w.blocks[static_cast<size_t>(layer)];
  const Tensor& gamma = b.ln1_weight.value();
  const Tensor& beta = b.ln1_bias.value();
  const float* stream = hooks[hook::resid_pre(layer)].data();  // [1,T,D]
  std::vector<double> sigma(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    double mean = 0.0, var = 0.0;
    for (int64_t j = 0; j < D; ++j) mean += stream[t * D + j];
    mean /= static_cast<double>(D);
    for (int64_t j = 0; j < D; ++j) var += (stream[t * D + j] - mean) * (stream[t * D + j] - mean);
    sigma[t] = std::sqrt(var / static_cast<double>(D) + c.norm_eps);
  }
  // Source s's ln1 part at position t through W's head rows: [d], unrotated.
  auto part = [&](const Tensor& weight, int64_t s, int64_t t) {
    Vector x(static_cast<size_t>(D));
    if (s == S - 1) {
      for (int64_t j = 0; j < D; ++j) x[j] = beta[j];
    } else {
      const Vector& row = sources[s][t];
      double mean = 0.0;
      for (double v : row) mean += v;
      mean /= static_cast<double>(D);
      for (int64_t j = 0; j < D; ++j) x[j] = gamma[j] * (row[j] - mean) / sigma[t];
    }
    return head_rows_times(weight, head, d, x);
  };
  RopeTable table;
  if (r.rope) table = make_rope_table(c.block_size, d, c.rope_base);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<Vector> query, query_rotated;
  for (int64_t s = 0; s < S; ++s) {
    query.push_back(part(b.q_proj.value(), s, P));
    query_rotated.push_back(r.rope ? rotate(table, P, query.back()) : query.back());
  }
  // The unsplit score from the stream itself: ln1 (unfrozen), Wq, Wk, rotation.
  auto whole = [&](const Tensor& weight, int64_t t) {
    Vector x(static_cast<size_t>(D));
    double mean = 0.0;
    for (int64_t j = 0; j < D; ++j) mean += stream[t * D + j];
    mean /= static_cast<double>(D);
    for (int64_t j = 0; j < D; ++j) x[j] = gamma[j] * (stream[t * D + j] - mean) / sigma[t] + beta[j];
    Vector v = head_rows_times(weight, head, d, x);
    return r.rope ? rotate(table, t, v) : v;
  };
  const Vector q_whole = whole(b.q_proj.value(), P);
  const float* pattern = hooks[hook::pattern(layer)].data();  // [1,H,T,T]
  for (int64_t j = 0; j <= P; ++j) {
    ScoreSplitKey key;
    key.position = j;
    key.score = dot(q_whole, whole(b.k_proj.value(), j)) * scale;
    key.weight = pattern[(head * T + P) * T + j];
    std::vector<Vector> k, k_rotated;
    for (int64_t s = 0; s < S; ++s) {
      k.push_back(part(b.k_proj.value(), s, j));
      k_rotated.push_back(r.rope ? rotate(table, j, k.back()) : k.back());
    }
    key.parts.resize(static_cast<size_t>(S * S));
    for (int64_t cq = 0; cq < S; ++cq)
      for (int64_t ck = 0; ck < S; ++ck) {
        const double p = dot(query_rotated[cq], k_rotated[ck]) * scale;
        key.parts[cq * S + ck] = p;
        key.parts_sum += p;
        key.unrotated += dot(query[cq], k[ck]) * scale;
      }
    require_finite(key.parts_sum, "the attention score's parts");
    r.largest_gap = std::max(r.largest_gap, std::abs(key.parts_sum - key.score));
    r.keys.push_back(std::move(key));
  }
  return r;
}

}  // namespace mg

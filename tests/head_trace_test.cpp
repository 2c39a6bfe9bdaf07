// inspect-heads --trace: every number the trace prints, held against an independent plain-loop
// forward pass in double written here from docs/model.md (LayerNorm, split_heads, RoPE,
// causal softmax, Wo, exact-erf GELU MLP, ln_f, vocabulary head), and against the real
// forward's projected_weights and hook_z, at a query position past 32, for both position
// types; its logit push for a symbol is --attribution's part for the head.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "interp/attribution.h"
#include "interp/trace.h"
#include "model_support.h"
#include "report/trace_format.h"

namespace mg {
namespace {

using Matrix = std::vector<std::vector<double>>;  // [rows][cols]

// What the reference records for one block: per head, the rows the trace prints.
struct RefBlock {
  Matrix normed;                 // [T][D] ln1 output
  std::vector<Matrix> q_raw, q, k, v, w, out, contribution;  // per head: [T][d] (w: [T][T]; contribution [T][D])
  Matrix q_full, k_full, v_full;  // [T][D] before the split (q, k before RoPE)
  Matrix resid_in, resid_mid;     // [T][D] the stream entering the block, and after its attention branch
};

struct Reference {
  std::vector<RefBlock> blocks;
  Matrix final_residual;  // [T][D] entering ln_f
};

const float* value(const Gpt& m, const std::string& name) { return m.parameters().get(name).value().data(); }

Matrix layer_norm(const Matrix& x, const float* g, const float* b, double eps) {
  Matrix y = x;
  for (size_t t = 0; t < x.size(); ++t) {
    const double D = static_cast<double>(x[t].size());
    double mean = 0, var = 0;
    for (double a : x[t]) mean += a;
    mean /= D;
    for (double a : x[t]) var += (a - mean) * (a - mean);
    var /= D;
    for (size_t j = 0; j < x[t].size(); ++j) y[t][j] = (x[t][j] - mean) / std::sqrt(var + eps) * g[j] + b[j];
  }
  return y;
}

// y = x W^T (+ bias), W [out,in].
Matrix linear(const Matrix& x, const float* W, int64_t out, const float* bias = nullptr) {
  Matrix y(x.size(), std::vector<double>(static_cast<size_t>(out), 0.0));
  const size_t in = x[0].size();
  for (size_t t = 0; t < x.size(); ++t)
    for (int64_t o = 0; o < out; ++o) {
      double s = bias ? bias[o] : 0.0;
      for (size_t i = 0; i < in; ++i) s += W[o * in + i] * x[t][i];
      y[t][o] = s;
    }
  return y;
}

Reference reference_forward(const Gpt& m, const std::vector<int32_t>& ids) {
  const ModelConfig& c = m.config();
  const int64_t T = static_cast<int64_t>(ids.size()), D = c.n_embd, H = c.n_head, d = D / H, F = c.mlp_ratio * D;
  Matrix x(static_cast<size_t>(T), std::vector<double>(static_cast<size_t>(D)));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < D; ++j) {
      x[t][j] = value(m, "tok_emb.weight")[ids[t] * D + j];
      if (c.position == PositionType::learned) x[t][j] += value(m, "pos_emb.weight")[t * D + j];
    }
  Reference ref;
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    RefBlock blk;
    blk.normed = layer_norm(x, value(m, b + "ln1.weight"), value(m, b + "ln1.bias"), c.norm_eps);
    const Matrix Q = linear(blk.normed, value(m, b + "attn.q_proj.weight"), D);
    const Matrix K = linear(blk.normed, value(m, b + "attn.k_proj.weight"), D);
    const Matrix Vv = linear(blk.normed, value(m, b + "attn.v_proj.weight"), D);
    const float* Wo = value(m, b + "attn.out_proj.weight");
    blk.q_full = Q;
    blk.k_full = K;
    blk.v_full = Vv;
    blk.resid_in = x;
    Matrix x1 = x;
    for (int64_t h = 0; h < H; ++h) {
      Matrix q(T, std::vector<double>(d)), k = q, v = q, qr = q;
      for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < d; ++j) {  // split_heads: feature h*d + j
          q[t][j] = Q[t][h * d + j];
          k[t][j] = K[t][h * d + j];
          v[t][j] = Vv[t][h * d + j];
        }
      qr = q;
      if (c.position == PositionType::rope) {
        for (int64_t t = 0; t < T; ++t)
          for (int64_t i = 0; i < d / 2; ++i) {
            const double angle = static_cast<double>(t) * std::pow(c.rope_base, -2.0 * i / d);
            const double co = static_cast<float>(std::cos(angle)), si = static_cast<float>(std::sin(angle));
            for (Matrix* z : {&q, &k}) {
              const double a = (*z)[t][2 * i], bb = (*z)[t][2 * i + 1];
              (*z)[t][2 * i] = a * co - bb * si;
              (*z)[t][2 * i + 1] = a * si + bb * co;
            }
          }
      }
      Matrix w(T, std::vector<double>(T, 0.0)), out(T, std::vector<double>(d, 0.0)), contrib(T, std::vector<double>(D, 0.0));
      for (int64_t t = 0; t < T; ++t) {
        double mx = -1e300, sum = 0;
        std::vector<double> s(t + 1);
        for (int64_t u = 0; u <= t; ++u) {
          for (int64_t j = 0; j < d; ++j) s[u] += q[t][j] * k[u][j];
          s[u] /= std::sqrt(static_cast<double>(d));
          mx = std::max(mx, s[u]);
        }
        for (int64_t u = 0; u <= t; ++u) sum += (w[t][u] = std::exp(s[u] - mx));
        for (int64_t u = 0; u <= t; ++u) w[t][u] /= sum;
        for (int64_t u = 0; u <= t; ++u)
          for (int64_t j = 0; j < d; ++j) out[t][j] += w[t][u] * v[u][j];
        for (int64_t i = 0; i < D; ++i) {
          for (int64_t j = 0; j < d; ++j) contrib[t][i] += Wo[i * D + h * d + j] * out[t][j];
          x1[t][i] += contrib[t][i];
        }
      }
      blk.q_raw.push_back(qr);
      blk.q.push_back(q);
      blk.k.push_back(k);
      blk.v.push_back(v);
      blk.w.push_back(w);
      blk.out.push_back(out);
      blk.contribution.push_back(contrib);
    }
    blk.resid_mid = x1;
    Matrix h2 = layer_norm(x1, value(m, b + "ln2.weight"), value(m, b + "ln2.bias"), c.norm_eps);
    Matrix hidden = linear(h2, value(m, b + "mlp.fc.weight"), F, value(m, b + "mlp.fc.bias"));
    for (auto& row : hidden)
      for (double& a : row) a = a * 0.5 * (1.0 + std::erf(a / std::sqrt(2.0)));
    Matrix mlp = linear(hidden, value(m, b + "mlp.proj.weight"), D, value(m, b + "mlp.proj.bias"));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < D; ++i) x1[t][i] += mlp[t][i];
    x = x1;
    ref.blocks.push_back(std::move(blk));
  }
  ref.final_residual = x;
  return ref;
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << what << " [" << i << "]";
}

// A model whose weights are 10x docs/model.md's initialisation, so the heads are far from uniform.
Gpt sharp_model(const std::string& position, int64_t V) {
  Gpt model(test::config_of(2, 16, 2, 40, V, position));
  Rng rng(11);
  model.initialize(rng);
  for (auto& p : model.parameters().all()) {
    if (p.var.value().rank() == 2)
      for (float& w : p.var.value().span()) w *= 10.0f;
    else  // LayerNorm weights and every bias away from 1 and 0, so each one shows in the numbers
      for (float& w : p.var.value().span()) w += static_cast<float>(0.3 * rng.normal());
  }
  return model;
}

class HeadTraceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HeadTraceTest, EveryNumberEqualsTheForwardPassPastPosition32) {
  const std::u32string text = U"abcabdcaddbcabcadbcabbacdadcbadcabdcbad";  // 39 symbols
  const Vocab vocab = Vocab::from_text(text);
  Gpt model = sharp_model(GetParam(), vocab.size());
  const std::vector<int32_t> ids = vocab.encode(text, "text");
  const Reference ref = reference_forward(model, ids);
  std::vector<Tensor> z_of;  // [1,H,T,d] per layer, from the forward's named points
  {
    NoGradGuard no_grad;
    ForwardHooks hooks;
    for (int64_t l = 0; l < 2; ++l) hooks.record(hook::z(l));
    model.forward(ids, 1, static_cast<int64_t>(ids.size()), {.hooks = &hooks});
    for (int64_t l = 0; l < 2; ++l) z_of.push_back(hooks[hook::z(l)]);
  }
  const double tol = 1e-5;
  const int64_t D = 16, d = 8, V = vocab.size();
  for (int64_t layer : {0, 1})
    for (int64_t head : {0, 1})
      for (int64_t P : {33, 38}) {
        const std::string at = "layer " + std::to_string(layer) + " head " + std::to_string(head) + " P " + std::to_string(P);
        const HeadTrace tr = trace_head(model, vocab, text, "text", layer, head, P);
        const RefBlock& blk = ref.blocks[layer];
        expect_near_all(tr.x, blk.normed[P], tol, at + " x_t");
        expect_near_all(tr.q_raw, blk.q_raw[head][P], tol, at + " q before RoPE");
        expect_near_all(tr.q, blk.q[head][P], tol, at + " q");
        ASSERT_EQ(static_cast<int64_t>(tr.keys.size()), P + 1);
        for (int64_t s = 0; s <= P; ++s) {
          expect_near_all(tr.keys[s], blk.k[head][s], tol, at + " k_" + std::to_string(s));
          expect_near_all(tr.values[s], blk.v[head][s], tol, at + " v_" + std::to_string(s));
          double dot = 0;
          for (int64_t j = 0; j < d; ++j) dot += blk.q[head][P][j] * blk.k[head][s][j];
          EXPECT_NEAR(tr.dots[s], dot, tol) << at;
          EXPECT_NEAR(tr.scores[s], dot / std::sqrt(8.0), tol) << at;
        }
        expect_near_all(tr.weights, blk.w[head][P], tol, at + " weights");
        for (int64_t s = 0; s < tr.T; ++s) {
          EXPECT_NEAR(tr.forward_weights[s], blk.w[head][P][s], tol) << at << " forward weights";
          if (s > P) {
            EXPECT_EQ(tr.weights[s], 0.0);
          }
        }
        expect_near_all(tr.head_output, blk.out[head][P], tol, at + " head output");
        // The forward's own hook_z row, which attribution and patching read, is the same vector.
        const std::vector<double> z(z_of[layer].data() + (head * tr.T + P) * d, z_of[layer].data() + (head * tr.T + P + 1) * d);
        expect_near_all(tr.head_output, z, tol, at + " hook_z");
        expect_near_all(tr.contribution, blk.contribution[head][P], tol, at + " contribution");
        // Direct logit attribution: centred contribution / final sigma * ln_f.weight, through head.
        const auto& fin = ref.final_residual[P];
        double mean = 0, var = 0, cmean = 0;
        for (double a : fin) mean += a;
        mean /= D;
        for (double a : fin) var += (a - mean) * (a - mean);
        const double sigma = std::sqrt(var / D + 1e-5);
        EXPECT_NEAR(tr.final_sigma, sigma, tol) << at;
        for (double a : blk.contribution[head][P]) cmean += a;
        cmean /= D;
        std::vector<double> push(V, 0.0);
        for (int64_t v = 0; v < V; ++v)
          for (int64_t j = 0; j < D; ++j)
            push[v] += value(model, "head.weight")[v * D + j] * (blk.contribution[head][P][j] - cmean) / sigma *
                       value(model, "ln_f.weight")[j];
        expect_near_all(tr.logit_push, push, tol, at + " logit push");
        ASSERT_FALSE(tr.top_up.empty());
        // --attribution's part for this head is the same push, for its answer.
        const Attribution a = attribute_logits(model, vocab, ids, {P, tr.top_up[0].id, std::nullopt});
        const AttributionPart& part = a.parts[static_cast<size_t>((GetParam() == std::string("learned") ? 2 : 1) + layer * 3 + head)];
        ASSERT_EQ(part.name, "L" + std::to_string(layer) + ".H" + std::to_string(head));
        EXPECT_NEAR(part.logit, tr.top_up[0].logit, tol) << at;
        EXPECT_NEAR(tr.top_up[0].logit, *std::max_element(push.begin(), push.end()), tol);
        // The printout carries these numbers at 6 decimals.
        const std::string printed = format_trace(tr);
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, "%.6f", tr.contribution[0]);
        EXPECT_NE(printed.find(buffer), std::string::npos) << printed;
        std::snprintf(buffer, sizeof buffer, "%.6f", tr.weights[P]);
        EXPECT_NE(printed.find(buffer), std::string::npos);

        // Split and merge of the whole layer at P: the rows before the split, every head's
        // output side by side (not added), W_O, the residual stream after the branch.
        const SplitMergeTrace& sm = tr.split_merge;
        ASSERT_EQ(sm.H, 2);
        ASSERT_EQ(sm.d, d);
        expect_near_all(sm.q_row, blk.q_full[P], tol, at + " q row");
        expect_near_all(sm.k_row, blk.k_full[P], tol, at + " k row");
        expect_near_all(sm.v_row, blk.v_full[P], tol, at + " v row");
        std::vector<double> concatenated, attention_out(D, 0.0);
        for (int64_t h = 0; h < 2; ++h) {
          expect_near_all(sm.head_outputs[h], blk.out[h][P], tol, at + " head output " + std::to_string(h));
          concatenated.insert(concatenated.end(), blk.out[h][P].begin(), blk.out[h][P].end());
          for (int64_t i = 0; i < D; ++i) attention_out[i] += blk.contribution[h][P][i];
          std::vector<double> row(blk.w[h][P].begin(), blk.w[h][P].begin() + P + 1);
          expect_near_all(sm.head_weights[h], row, tol, at + " head weights " + std::to_string(h));
        }
        EXPECT_EQ(sm.head_outputs[head], tr.head_output) << at;  // the traced head's step 8, bit for bit
        expect_near_all(sm.concatenated, concatenated, tol, at + " concatenated");
        expect_near_all(sm.attention_out, attention_out, tol, at + " attention out");
        expect_near_all(sm.residual_in, blk.resid_in[P], tol, at + " residual in");
        expect_near_all(sm.residual_out, blk.resid_mid[P], tol, at + " residual out");
        std::vector<double> forward_out(sm.forward_residual_out.begin(), sm.forward_residual_out.end());
        expect_near_all(forward_out, blk.resid_mid[P], tol, at + " forward resid_mid");
        for (const char* step : {"split and merge:", "S1.", "S3. merge_heads: the outputs concatenated, not added",
                                 "S4. W_O", "S5. the residual stream"})
          EXPECT_NE(printed.find(step), std::string::npos) << step;
      }
}

INSTANTIATE_TEST_SUITE_P(Positions, HeadTraceTest, ::testing::Values("rope", "learned"));

TEST(HeadTrace, RejectsOutOfRangeAndParsesNames) {
  const std::u32string text = U"abcab";
  const Vocab vocab = Vocab::from_text(text);
  Gpt model = sharp_model("rope", vocab.size());
  EXPECT_THROW(trace_head(model, vocab, text, "text", 2, 0, 1), InputError);
  EXPECT_THROW(trace_head(model, vocab, text, "text", 0, 2, 1), InputError);
  EXPECT_THROW(trace_head(model, vocab, text, "text", 0, 0, 5), InputError);
  EXPECT_EQ(parse_head_name("1.0", "--trace"), (std::pair<int64_t, int64_t>{1, 0}));
  EXPECT_THROW(parse_head_name("1", "--trace"), InputError);
  EXPECT_THROW(parse_head_name("a.1", "--trace"), InputError);
  EXPECT_THROW(parse_head_name("1.-1", "--trace"), InputError);
}

}  // namespace
}  // namespace mg

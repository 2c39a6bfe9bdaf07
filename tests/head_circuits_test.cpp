// inspect-heads --circuits: QK and OV against a plain recomputation, the eigenvalue copy
// score on known matrices and on a head built to copy, top pairs, and the SVG.
#include <gtest/gtest.h>

#include <cmath>

#include "interp/qk_ov.h"
#include "model_support.h"
#include "report/qk_ov_format.h"
#include "report/qk_ov_svg.h"

namespace mg {
namespace {

TEST(HeadCircuits, EigenvalueSignShare) {
  EXPECT_NEAR(eigenvalue_sign_share({1, 0, 0, 0, 2, 0, 0, 0, 3}, 3), 1.0, 1e-12);
  EXPECT_NEAR(eigenvalue_sign_share({-1, 0, 0, -2}, 2), -1.0, 1e-12);
  EXPECT_NEAR(eigenvalue_sign_share({0, -1, 1, 0}, 2), 0.0, 1e-12);  // a rotation: eigenvalues +-i
  EXPECT_NEAR(eigenvalue_sign_share({1, 0, 0, -1}, 2), 0.0, 1e-12);
  EXPECT_EQ(eigenvalue_sign_share({0, 0, 0, 0}, 2), 0.0);
}

TEST(HeadCircuits, TopPairs) {
  const std::vector<double> t = {0.1, 0.9, 0.5, 0.9};
  const auto top = top_pairs(t, 2, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].row, 0);
  EXPECT_EQ(top[0].column, 1);
  EXPECT_EQ(top[1].row, 1);
  EXPECT_EQ(top[1].column, 1);
  EXPECT_EQ(top[2].row, 1);
  EXPECT_EQ(top[2].column, 0);
}

TEST(HeadCircuits, TablesEqualAPlainRecomputation) {
  const Vocab vocab = Vocab::from_text(U"abcdefg");
  Gpt model = test::small_model(2, 16, 16, vocab.size(), 9);
  const int64_t V = 7, D = 16, d = 8, layer = 1, head = 1;
  const HeadCircuits c = head_circuits(model, vocab, layer, head);
  auto P = [&](const std::string& n) { return model.parameters().get(n).value().data(); };
  const std::string b = "blocks.1.";
  auto normed = [&](int64_t a) {
    std::vector<double> x(D);
    double mean = 0, var = 0;
    for (int64_t i = 0; i < D; ++i) mean += P("tok_emb.weight")[a * D + i];
    mean /= D;
    for (int64_t i = 0; i < D; ++i) var += std::pow(P("tok_emb.weight")[a * D + i] - mean, 2);
    for (int64_t i = 0; i < D; ++i)
      x[i] = (P("tok_emb.weight")[a * D + i] - mean) / std::sqrt(var / D + 1e-5) * P(b + "ln1.weight")[i] +
             P(b + "ln1.bias")[i];
    return x;
  };
  auto project = [&](const std::string& w, const std::vector<double>& x) {
    std::vector<double> y(d, 0.0);
    for (int64_t j = 0; j < d; ++j)
      for (int64_t i = 0; i < D; ++i) y[j] += P(w)[(head * d + j) * D + i] * x[i];
    return y;
  };
  for (int64_t a = 0; a < V; ++a)
    for (int64_t k = 0; k < V; ++k) {
      const auto q = project(b + "attn.q_proj.weight", normed(a)), kk = project(b + "attn.k_proj.weight", normed(k));
      double dot = 0;
      for (int64_t j = 0; j < d; ++j) dot += q[j] * kk[j];
      EXPECT_NEAR(c.qk[a * V + k], dot / std::sqrt(8.0), 1e-9);
      // OV: Wo's columns of the head, centred over D, times ln_f.weight, through the vocabulary head.
      const auto v = project(b + "attn.v_proj.weight", normed(a));
      std::vector<double> out(D, 0.0);
      for (int64_t i = 0; i < D; ++i)
        for (int64_t j = 0; j < d; ++j) out[i] += P(b + "attn.out_proj.weight")[i * D + head * d + j] * v[j];
      double mean = 0;
      for (double o : out) mean += o / D;
      double logit = 0;
      for (int64_t i = 0; i < D; ++i) logit += P("head.weight")[k * D + i] * (out[i] - mean) * P("ln_f.weight")[i];
      EXPECT_NEAR(c.ov[a * V + k], logit, 1e-9);
    }
  const std::string svg = qk_ov_svg(c);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find(">g</text>"), std::string::npos);
  EXPECT_NE(format_circuits(c, 5).find("copy score"), std::string::npos);
}

// A head built to copy: the value reads the symbol, Wo writes it back, and the vocabulary
// head reads the same direction, so OV is a positive multiple of the identity on the
// symbols' (centred) embeddings: copy score near 1 and a full diagonal.
TEST(HeadCircuits, ACopyingHeadScoresNearOne) {
  const Vocab vocab = Vocab::from_text(U"abcdef");
  const int64_t V = 6, D = 16, d = 8;
  Gpt model = test::small_model(1, D, 8, V, 3);
  auto W = [&](const std::string& n) { return model.parameters().get(n).value().data(); };
  for (const char* n : {"tok_emb.weight", "head.weight"})
    for (int64_t a = 0; a < V; ++a)
      for (int64_t i = 0; i < D; ++i) W(n)[a * D + i] = (i == a) ? 1.0f : (i == a + 8 ? -1.0f : 0.0f);  // centred
  float* Wv = W("blocks.0.attn.v_proj.weight");
  float* Wo = W("blocks.0.attn.out_proj.weight");
  for (int64_t i = 0; i < D * D; ++i) Wv[i] = Wo[i] = 0.0f;
  for (int64_t j = 0; j < d; ++j) {  // head 0: v_j = x_j - x_{j+8}, out_j = v_j, out_{j+8} = -v_j
    Wv[j * D + j] = 1.0f;
    Wv[j * D + j + 8] = -1.0f;
    Wo[j * D + j] = 1.0f;
    Wo[(j + 8) * D + j] = -1.0f;
  }
  const HeadCircuits c = head_circuits(model, vocab, 0, 0);
  EXPECT_GE(c.copy_score, 0.99);
  EXPECT_DOUBLE_EQ(c.diagonal_top1, 1.0);
  // Flip Wo: the head now suppresses what it reads.
  for (int64_t i = 0; i < D * D; ++i) Wo[i] = -Wo[i];
  const HeadCircuits s = head_circuits(model, vocab, 0, 0);
  EXPECT_LE(s.copy_score, -0.99);
  EXPECT_DOUBLE_EQ(s.diagonal_top1, 0.0);
}

}  // namespace
}  // namespace mg

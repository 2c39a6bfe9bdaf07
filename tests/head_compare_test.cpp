// inspect-heads --compare: the Hungarian assignment on known costs, the pattern divergence
// on known patterns, and a model matched against a copy whose two heads of layer 0 trade
// places (same function, heads renumbered): the matching finds the swap; and one head against
// two: a one-head model built to read as head 1 of a two-head model is matched to it, the
// other head left unmatched with its nearest; and the printed table keeps its columns when a
// role is longer than the column's usual width.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "data/vocab.h"
#include "interp/compare.h"
#include "model_support.h"
#include "report/compare_format.h"

namespace mg {
namespace {

TEST(HeadCompare, AssignmentOfLeastCost) {
  const std::vector<double> cost = {4, 1, 3, 2, 0, 5, 3, 2, 2};
  EXPECT_EQ(min_cost_assignment(cost, 3), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(min_cost_assignment({7}, 1), (std::vector<int64_t>{0}));
  const std::vector<double> anti = {9, 9, 0, 9, 0, 9, 0, 9, 9};
  EXPECT_EQ(min_cost_assignment(anti, 3), (std::vector<int64_t>{2, 1, 0}));
}

TEST(HeadCompare, PatternDivergence) {
  const std::vector<float> a = {1, 0, 1, 0}, b = {1, 0, 0, 1}, u = {1, 0, 0.5f, 0.5f};
  EXPECT_DOUBLE_EQ(pattern_divergence(a, a, 2), 0.0);
  EXPECT_NEAR(pattern_divergence(a, b, 2), std::log(2.0) / 2, 1e-12);  // row 0 agrees by force
  EXPECT_LT(pattern_divergence(a, u, 2), pattern_divergence(a, b, 2));
}

TEST(HeadCompare, FindsHeadsThatTradedPlaces) {
  const Vocab vocab = Vocab::from_text(U"小丁拿着红色的苹果。谁");
  Gpt a = test::small_model(2, 16, 16, vocab.size(), 21);
  for (auto& p : a.parameters().all())  // sharper patterns than the 0.02 initialisation
    if (p.name.find("q_proj") != std::string::npos || p.name.find("k_proj") != std::string::npos)
      for (float& w : p.var.value().span()) w *= 30.0f;
  Gpt b(a.config());
  for (auto& p : a.parameters().all()) b.parameters().get(p.name).value().copy_from(p.var.value());
  const int64_t D = 16, d = 8;
  for (const char* n : {"q_proj", "k_proj", "v_proj"}) {  // rows 0..7 <-> 8..15
    float* w = b.parameters().get(std::string("blocks.0.attn.") + n + ".weight").value().data();
    for (int64_t i = 0; i < d * D; ++i) std::swap(w[i], w[d * D + i]);
  }
  float* wo = b.parameters().get("blocks.0.attn.out_proj.weight").value().data();  // columns
  for (int64_t r = 0; r < D; ++r)
    for (int64_t j = 0; j < d; ++j) std::swap(wo[r * D + j], wo[r * D + d + j]);
  const std::vector<std::vector<int32_t>> texts = {vocab.encode(U"小丁拿着红色的苹果。谁拿着", "t"),
                                                   vocab.encode(U"红色的苹果。小丁", "t")};
  const HeadComparison c = compare_heads(a, b, texts, texts);
  ASSERT_EQ(c.matches.size(), 4u);
  EXPECT_EQ(c.texts, 2);
  EXPECT_EQ(c.matches[0].layer_b, 0);
  EXPECT_EQ(c.matches[0].head_b, 1);
  EXPECT_EQ(c.matches[1].head_b, 0);
  EXPECT_EQ(c.matches[2].layer_b, 1);
  EXPECT_EQ(c.matches[2].head_b, 0);
  EXPECT_EQ(c.matches[3].head_b, 1);
  for (const HeadMatch& m : c.matches) EXPECT_NEAR(m.similarity, 1.0, 1e-5);
  // The swapped pairing is clearly worse: the heads do differ.
  EXPECT_GT(c.divergence[0 * 4 + 0], 0.01);
}

TEST(HeadCompare, OneHeadAgainstTwoMatchesTheHeadItCopies) {
  const Vocab vocab = Vocab::from_text(U"小丁拿着红色的苹果。谁");
  const int64_t D = 16, d = 8;
  Gpt two(test::config_of(1, D, 2, 16, vocab.size(), "learned"));  // learned positions: no RoPE frequencies to differ
  Rng rng(33);
  two.initialize(rng);
  for (auto& p : two.parameters().all())
    if (p.name.find("q_proj") != std::string::npos || p.name.find("k_proj") != std::string::npos)
      for (float& w : p.var.value().span()) w *= 30.0f;
  Gpt one(test::config_of(1, D, 1, 16, vocab.size(), "learned"));
  for (auto& p : two.parameters().all()) one.parameters().get(p.name).value().copy_from(p.var.value());
  // One's single head (d = 16) gets two's head 1 (rows 8..15) in its rows 0..7 and zeros
  // beside them; q scaled by sqrt(2) so that q.k / sqrt(16) equals two's q.k / sqrt(8).
  for (const char* n : {"q_proj", "k_proj"}) {
    const float* src = two.parameters().get(std::string("blocks.0.attn.") + n + ".weight").value().data();
    float* w = one.parameters().get(std::string("blocks.0.attn.") + n + ".weight").value().data();
    const float factor = std::strcmp(n, "q_proj") == 0 ? std::sqrt(2.0f) : 1.0f;
    for (int64_t i = 0; i < d * D; ++i) {
      w[i] = factor * src[d * D + i];
      w[d * D + i] = 0.0f;
    }
  }
  const std::vector<std::vector<int32_t>> texts = {vocab.encode(U"小丁拿着红色的苹果。谁拿着", "t"),
                                                   vocab.encode(U"红色的苹果。小丁", "t")};
  const HeadComparison c = compare_heads(one, two, texts, texts);
  EXPECT_EQ(c.heads_a, 1);
  EXPECT_EQ(c.heads_b, 2);
  ASSERT_EQ(c.matches.size(), 1u);
  EXPECT_EQ(c.matches[0].head_a, 0);
  EXPECT_EQ(c.matches[0].head_b, 1);
  EXPECT_NEAR(c.matches[0].similarity, 1.0, 1e-5);
  ASSERT_EQ(c.unmatched.size(), 1u);
  EXPECT_EQ(c.unmatched[0].model, 'b');
  EXPECT_EQ(c.unmatched[0].head, 0);
  EXPECT_EQ(c.unmatched[0].nearest_head, 0);  // the one head of A
  EXPECT_NEAR(c.unmatched[0].divergence, c.divergence[0 * 2 + 0], 1e-15);
  EXPECT_GT(c.unmatched[0].divergence, 0.01);  // two's head 0 reads otherwise
  // The other way round, the same pair, and two's head 0 left over.
  const HeadComparison back = compare_heads(two, one, texts, texts);
  ASSERT_EQ(back.matches.size(), 1u);
  EXPECT_EQ(back.matches[0].head_a, 1);
  EXPECT_EQ(back.matches[0].head_b, 0);
  ASSERT_EQ(back.unmatched.size(), 1u);
  EXPECT_EQ(back.unmatched[0].model, 'a');
  EXPECT_EQ(back.unmatched[0].head, 0);
}

TEST(HeadCompare, TheTableKeepsItsColumnsForALongRole) {
  ComparisonReport r;
  r.a = "a.safetensors";
  r.b = "b.safetensors";
  r.texts = "the --text";
  r.matching.layers_a = 2, r.matching.heads_a = 1, r.matching.layers_b = 1, r.matching.heads_b = 2;
  r.matching.matches = {{0, 0, 0, 1, 0.1, 0.955}, {1, 0, 0, 0, 0.3, 0.572}};
  const std::string long_role = "writer(colour)+carrier(colour,what)";  // 35 symbols: over the usual 30
  r.roles_a.heads.resize(2);
  r.roles_a.heads[0].role = "mixed";
  r.roles_a.heads[1].layer = 1;
  r.roles_a.heads[1].role = long_role;
  r.roles_b.heads.resize(2);
  r.roles_b.heads[0].role = "writer";
  r.roles_b.heads[1].head = 1;
  r.roles_b.heads[1].role = "carrier(colour,what)";
  const std::string table = format_comparison(r);
  // Every row's similarity starts where the header's does; B's head column too.
  std::vector<std::string> rows;
  for (size_t at = table.find("  A "); at < table.size();) {
    const size_t end = table.find('\n', at);
    rows.push_back(table.substr(at, end - at));
    if (rows.size() == 3) break;
    at = end + 1;
  }
  ASSERT_EQ(rows.size(), 3u) << table;
  const size_t similarity = rows[0].find("similarity"), b_column = rows[0].find("B ");
  EXPECT_EQ(rows[1].find("0.955"), similarity) << table;
  EXPECT_EQ(rows[2].find("0.572"), similarity) << table;
  EXPECT_EQ(rows[1].find("L0.H1"), b_column) << table;
  EXPECT_EQ(rows[2].find("L0.H0"), b_column) << table;
  EXPECT_NE(rows[2].find(long_role + "  L0.H0"), std::string::npos) << table;
}

}  // namespace
}  // namespace mg

// inspect-heads --roles: the pattern detectors on constructed patterns (an induction head
// by construction scores >= 0.9, other heads <= 0.1), the answer-source rule, role names
// and thresholds, the probe's optional "source", and the pass over a real model.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "core/error.h"
#include "data/probe.h"
#include "environment_support.h"
#include "interp/patterns.h"
#include "interp/roles.h"
#include "kernels/runtime.h"
#include "model_support.h"
#include "report/roles_format.h"
#include "test_support.h"

namespace mg {
namespace {

using Pattern = std::vector<float>;  // [T,T]

// A pattern whose row t puts all its weight on key pick(t) (pick(t) <= t).
template <typename Pick>
Pattern one_hot_rows(int64_t T, Pick pick) {
  Pattern w(static_cast<size_t>(T * T), 0.0f);
  for (int64_t t = 0; t < T; ++t) w[t * T + pick(t)] = 1.0f;
  return w;
}

Pattern uniform_rows(int64_t T) {
  Pattern w(static_cast<size_t>(T * T), 0.0f);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s <= t; ++s) w[t * T + s] = 1.0f / static_cast<float>(t + 1);
  return w;
}

double induction_of(const Pattern& w, const std::vector<int32_t>& ids) {
  PooledScore s;
  add_induction(w, ids, s);
  return s.mean().value();
}

TEST(HeadRoles, RepeatedRandomIdsAreDistinctThenRepeated) {
  const std::vector<int32_t> ids = repeated_random_ids(79, 32, 1);
  ASSERT_EQ(ids.size(), 64u);
  for (size_t i = 0; i < 32; ++i) {
    EXPECT_EQ(ids[i], ids[i + 32]);
    for (size_t j = 0; j < i; ++j) EXPECT_NE(ids[i], ids[j]);
  }
  EXPECT_EQ(ids, repeated_random_ids(79, 32, 1));  // fixed
  EXPECT_NE(ids, repeated_random_ids(79, 32, 2));
}

TEST(HeadRoles, InductionDetectorOnConstructedPatterns) {
  const int64_t n = 32, T = 2 * n;
  const std::vector<int32_t> ids = repeated_random_ids(79, n, 3);
  // By construction an induction head: in the second half, row t reads t - n + 1 (just
  // after the earlier copy of its symbol); the first half reads the previous symbol.
  auto target = [&](int64_t t) { return t >= n ? t - n + 1 : std::max<int64_t>(t - 1, 0); };
  const Pattern induction = one_hot_rows(T, target);
  EXPECT_GE(induction_of(induction, ids), 0.9);
  EXPECT_DOUBLE_EQ(induction_of(induction, ids), 1.0);
  // A softened one (0.8 on the target, the rest uniform) still passes, as a real head would.
  Pattern soft = uniform_rows(T);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s <= t; ++s) soft[t * T + s] = 0.2f * soft[t * T + s] + (s == target(t) ? 0.8f : 0.0f);
  EXPECT_GE(induction_of(soft, ids), 0.8);
  // Not induction heads: previous-token, current-token, first-position, uniform, and the
  // "duplicate-token" head that reads the earlier copy itself rather than what followed it.
  EXPECT_LE(induction_of(one_hot_rows(T, [](int64_t t) { return std::max<int64_t>(t - 1, 0); }), ids), 0.1);
  EXPECT_LE(induction_of(one_hot_rows(T, [](int64_t t) { return t; }), ids), 0.1);
  EXPECT_LE(induction_of(one_hot_rows(T, [](int64_t) { return int64_t{0}; }), ids), 0.1);
  EXPECT_LE(induction_of(uniform_rows(T), ids), 0.1);
  EXPECT_LE(induction_of(one_hot_rows(T, [&](int64_t t) { return t >= n ? t - n : t; }), ids), 0.1);
}

// A two-layer model set by hand to hold an induction circuit (learned positions, one head
// per layer). Each one-hot feature is written as +1 at its coordinate and -1 at a mirror
// coordinate, so every residual row has mean 0 and LayerNorm only rescales it. Layout of
// the D = 4V + 2T_max coordinates: [token | token mirror | position | position mirror |
// previous token | previous token mirror].
//   layer 0, a previous-token head: q reads position t as t - 1, k reads position s, v reads
//   the token, and Wo writes it into the previous-token block;
//   layer 1: q reads the current token, k reads the key's previous-token block (INDUCTION), or
//   the key's own token (a duplicate-token head, the control).
Gpt hand_set_model(int64_t V, int64_t T_max, bool induction) {
  const int64_t D = 4 * V + 2 * T_max;
  Gpt model(test::config_of(2, D, 1, T_max, V, "learned"));
  auto W = [&](const std::string& n) { return model.parameters().get(n).value().data(); };
  for (const char* n : {"blocks.0.ln1.weight", "blocks.0.ln2.weight", "blocks.1.ln1.weight", "blocks.1.ln2.weight",
                        "ln_f.weight"})
    for (int64_t i = 0; i < D; ++i) W(n)[i] = 1.0f;
  const int64_t tok = 0, tok_m = V, pos = 2 * V, pos_m = 2 * V + T_max, prev = 2 * V + 2 * T_max, prev_m = prev + V;
  for (int64_t a = 0; a < V; ++a) {
    W("tok_emb.weight")[a * D + tok + a] = 1.0f;
    W("tok_emb.weight")[a * D + tok_m + a] = -1.0f;
  }
  for (int64_t t = 0; t < T_max; ++t) {
    W("pos_emb.weight")[t * D + pos + t] = 1.0f;
    W("pos_emb.weight")[t * D + pos_m + t] = -1.0f;
  }
  const float beta = 10.0f;
  // Layer 0: rows of Wq, Wk, Wv are the head's coordinates (one head: d = D).
  float *q0 = W("blocks.0.attn.q_proj.weight"), *k0 = W("blocks.0.attn.k_proj.weight");
  float *v0 = W("blocks.0.attn.v_proj.weight"), *o0 = W("blocks.0.attn.out_proj.weight");
  for (int64_t j = 0; j + 1 < T_max; ++j) {  // q_j = beta [t == j + 1]
    q0[j * D + pos + j + 1] = beta;
    q0[j * D + pos_m + j + 1] = -beta;
  }
  for (int64_t j = 0; j < T_max; ++j) {  // k_j = [s == j]
    k0[j * D + pos + j] = 1.0f;
    k0[j * D + pos_m + j] = -1.0f;
  }
  // v_a = the token (2 / sigma0 at its coordinate); Wo scales it back to +-1 in the
  // previous-token block: sigma0 = sqrt(4 / D) at layer 0.
  const float back = std::sqrt(4.0f / static_cast<float>(D)) / 2.0f;
  for (int64_t a = 0; a < V; ++a) {
    v0[a * D + tok + a] = 1.0f;
    v0[a * D + tok_m + a] = -1.0f;
    o0[(prev + a) * D + a] = back;
    o0[(prev_m + a) * D + a] = -back;
  }
  // Layer 1: q = beta [current token], k = [previous token] (or [token] for the control).
  float *q1 = W("blocks.1.attn.q_proj.weight"), *k1 = W("blocks.1.attn.k_proj.weight");
  const int64_t key = induction ? prev : tok, key_m = induction ? prev_m : tok_m;
  for (int64_t a = 0; a < V; ++a) {
    q1[a * D + tok + a] = beta;
    q1[a * D + tok_m + a] = -beta;
    k1[a * D + key + a] = 1.0f;
    k1[a * D + key_m + a] = -1.0f;
  }
  return model;
}

TEST(HeadRoles, InductionDetectorOnAHandSetModel) {
  const Vocab vocab = Vocab::from_text(U"abcdef");
  for (bool induction : {true, false}) {
    Gpt model = hand_set_model(6, 16, induction);
    RoleOptions o;
    o.texts = {repeated_random_ids(6, 6, 9)};
    o.texts_description = "one repeated text";
    const RoleReport r = score_head_roles(model, vocab, o);
    ASSERT_EQ(r.heads.size(), 2u);
    EXPECT_GE(*r.heads[0].previous_token, 0.99);  // layer 0 is a previous-token head
    EXPECT_EQ(r.heads[0].role, "previous-token");
    if (induction) {
      EXPECT_GE(*r.heads[1].induction, 0.9);
      EXPECT_EQ(r.heads[1].role.find("induction"), 0u) << r.heads[1].role;
    } else {
      EXPECT_LE(*r.heads[1].induction, 0.1);
      EXPECT_EQ(r.heads[1].role.find("induction"), std::string::npos) << r.heads[1].role;
    }
  }
}

TEST(HeadRoles, PositionalDetectors) {
  const int64_t T = 10;
  PooledScore prev, cur, first;
  const Pattern w = one_hot_rows(T, [](int64_t t) { return std::max<int64_t>(t - 1, 0); });
  add_previous_token(w, T, prev);
  add_current_token(w, T, cur);
  add_first_position(w, T, first);
  EXPECT_DOUBLE_EQ(*prev.mean(), 1.0);
  EXPECT_DOUBLE_EQ(*cur.mean(), 0.0);
  EXPECT_DOUBLE_EQ(*first.mean(), 1.0 / 9.0);  // row 1 reads position 0 = its previous one
  std::vector<PooledScore> offsets(T);
  add_offsets(one_hot_rows(T, [](int64_t t) { return std::max<int64_t>(t - 3, 0); }), T, offsets);
  EXPECT_DOUBLE_EQ(*offsets[3].mean(), 1.0);
  EXPECT_DOUBLE_EQ(*offsets[1].mean(), 1.0 / 9.0);  // only row 1 (reads 0 = t - 1)
}

TEST(HeadRoles, AnswerSourceRuleAndRoleNames) {
  ProbeItem item{U"小彭买了黑色的花瓶。小高看着红色的帽子。谁看着红色的帽子？小", U'高', "who"};
  EXPECT_EQ(answer_source(item), 11);  // the last earlier occurrence of the answer symbol
  item.source = 3;
  EXPECT_EQ(answer_source(item), 3);  // the probe line's "source" wins
  ProbeItem none{U"abc", U'z', "who"};
  EXPECT_EQ(answer_source(none), -1);

  RoleThresholds th;
  HeadRoleScores s;
  s.previous_token = 0.2;
  s.current_token = 0.1;
  s.first_position = 0.1;
  s.induction = 0.05;
  s.answer_finding = 0.1;
  s.best_offset = 1;
  s.best_offset_score = 0.2;
  EXPECT_EQ(role_name(s, th), "mixed");
  s.previous_token = s.best_offset_score = 0.7;
  EXPECT_EQ(role_name(s, th), "previous-token");  // offset 1 is not named twice
  s.answer_finding = 0.35;
  EXPECT_EQ(role_name(s, th), "writer+previous-token");
  s.previous_token = 0.1;
  s.best_offset = 3;
  s.answer_finding = 0.0;
  EXPECT_EQ(role_name(s, th), "offset-3");
  s.best_offset_score = 0.1;
  s.induction = 0.4;
  EXPECT_EQ(role_name(s, th), "induction");
  // Below the threshold over all kinds, at or over it on some: named for those kinds.
  s.induction = 0.0;
  s.answer_finding = 0.2;
  s.answer_finding_by_kind = {{"colour", 0.05}, {"what", 0.45}, {"who", 0.3}};
  EXPECT_EQ(role_name(s, th), "writer(what,who)");
  s.answer_finding = 0.31;  // over all kinds: the plain name
  EXPECT_EQ(role_name(s, th), "writer");
  s.copy_forward = 0.3;
  s.copy_forward_by_kind = {{"colour", 0.1}, {"what", 0.9}};
  EXPECT_EQ(role_name(s, th), "writer+carrier(what)");
  s.answer_finding = 0.0;
  s.answer_finding_by_kind.clear();
  s.copy_forward = 0.5;
  EXPECT_EQ(role_name(s, th), "carrier");
}

// Copy-forward reads row `source` of the pattern: a hand-set pattern whose source row puts
// 0.8 on the symbol before it scores 0.8; the answer-finding row (the last) is separate.
TEST(HeadRoles, CopyForwardIsTheSourceRowsWeightOnTheSymbolBeforeIt) {
  const std::u32string text = U"小丁拿着红色的苹果。小丁拿着";
  const Vocab vocab = Vocab::from_text(text);
  Gpt model = test::small_model(1, 16, 32, vocab.size(), 5);
  const std::vector<ProbeItem> probes = {{text, U'红', "colour", 4}};
  RoleOptions o;
  o.texts = probe_texts(vocab, probes, 32);
  o.probes = &probes;
  const RoleReport r = score_head_roles(model, vocab, o);
  std::vector<Tensor> w;
  {
    NoGradGuard no_grad;
    ForwardHooks hooks;
    hooks.record(hook::pattern(0));
    const std::vector<int32_t> ids = vocab.encode(text, "text");
    model.forward(ids, 1, static_cast<int64_t>(ids.size()), {.hooks = &hooks});
    w.push_back(hooks[hook::pattern(0)]);
  }
  const int64_t T = static_cast<int64_t>(text.size());
  for (int64_t h = 0; h < 2; ++h) {
    const float* p = w[0].data() + h * T * T;
    ASSERT_TRUE(r.heads[h].copy_forward.has_value());
    EXPECT_NEAR(*r.heads[h].copy_forward, p[4 * T + 3], 1e-7) << h;  // row 4 (红), key 3 (着)
    EXPECT_NEAR(*r.heads[h].answer_finding, p[(T - 1) * T + 4], 1e-7) << h;
    ASSERT_EQ(r.heads[h].copy_forward_by_kind.size(), 1u);
    EXPECT_EQ(r.heads[h].copy_forward_by_kind[0].first, "colour");
  }
}

// Answer-finding takes its rows from the texts' forwards when a text is the prompt (as in
// training's head logging) and runs a forward of its own otherwise: both ways give the same
// bits, duplicated prompts included, and items are pooled in probe order either way.
TEST(HeadRoles, AnswerRowsFromTheTextsForwardsEqualTheirOwnForward) {
  const std::u32string text = U"小丁拿着红色的苹果。谁拿着红色的苹果？小丁。";
  const Vocab vocab = Vocab::from_text(text);
  Gpt model = test::small_model(2, 16, 32, vocab.size(), 7);
  const std::vector<ProbeItem> probes = {{U"小丁拿着红色的苹果。谁拿着红色的苹果？小", U'丁', "who"},
                                         {U"小丁拿着红色的苹果。小丁拿着红色的", U'苹', "what"},
                                         {U"小丁拿着红色的苹果。谁拿着红色的苹果？小", U'丁', "who"},
                                         {U"红色的苹果。小丁拿着红色的", U'苹', "what"}};
  RoleOptions shared;
  shared.texts = probe_texts(vocab, {probes.begin(), probes.begin() + 2}, 32);  // items 0-2 share a text's forward
  shared.probes = &probes;
  RoleOptions own = shared;
  own.texts = {vocab.encode(U"谁拿着苹果？", "text")};  // no prompt is a text: each its own forward
  const RoleReport a = score_head_roles(model, vocab, shared), b = score_head_roles(model, vocab, own);
  ASSERT_EQ(a.answer_items, 4);
  ASSERT_EQ(b.answer_items, 4);
  for (size_t i = 0; i < a.heads.size(); ++i) {
    EXPECT_EQ(*a.heads[i].answer_finding, *b.heads[i].answer_finding) << i;
    EXPECT_EQ(*a.heads[i].copy_forward, *b.heads[i].copy_forward) << i;
    EXPECT_EQ(a.heads[i].answer_finding_by_kind, b.heads[i].answer_finding_by_kind) << i;
    EXPECT_EQ(a.heads[i].copy_forward_by_kind, b.heads[i].copy_forward_by_kind) << i;
  }
  // And each equals the weights read from a forward of the prompt by hand (head 0 of layer 0).
  NoGradGuard no_grad;
  double by_hand = 0.0;
  for (const ProbeItem& item : probes) {
    const std::vector<int32_t> ids = vocab.encode(item.prompt, "prompt");
    ForwardHooks hooks;
    hooks.record(hook::pattern(0));
    model.forward(ids, 1, static_cast<int64_t>(ids.size()), {.hooks = &hooks});
    const int64_t T = static_cast<int64_t>(ids.size());
    by_hand += hooks[hook::pattern(0)].data()[(T - 1) * T + answer_source(item)];
  }
  EXPECT_NEAR(*a.heads[0].answer_finding, by_hand / 4, 1e-6);
}

// The role pass runs its texts batched by length (head_patterns_of_texts): each text's
// patterns must be the bits of a forward of its own, at the default model's widths, on one
// and on two threads, for texts of mixed lengths given out of order and more than one
// batch (32) of one length.
TEST(HeadRoles, BatchedPatternsAreEachTextsOwnForwardBitForBit) {
  if (const std::string why = test::use_test_environment(); !why.empty()) GTEST_SKIP() << why;
  const Gpt model = test::small_model(2, 64, 64, 79, 11);
  std::vector<std::vector<int32_t>> texts;
  Rng rng(5);
  for (int64_t i = 0; i < 80; ++i) {
    const int64_t T = i % 3 == 0 ? 64 : (i % 3 == 1 ? 1 : 37);
    std::vector<int32_t> ids(static_cast<size_t>(T));
    for (int32_t& id : ids) id = static_cast<int32_t>(rng.next_u64() % 79);
    texts.push_back(std::move(ids));
  }
  for (int64_t i = 0; i < 40; ++i) texts.push_back(texts[2 + 3 * (i % 26)]);  // 66 of 37 symbols: 3 batches
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    const std::vector<std::vector<std::vector<float>>> batched = head_patterns_of_texts(model, texts);
    ASSERT_EQ(batched.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      const std::vector<std::vector<float>> own = head_patterns(model, texts[i]);
      ASSERT_EQ(batched[i].size(), own.size()) << i;
      for (size_t h = 0; h < own.size(); ++h)
        ASSERT_EQ(0, std::memcmp(batched[i][h].data(), own[h].data(), own[h].size() * sizeof(float)))
            << "text " << i << " (" << texts[i].size() << " symbols), head " << h << ", " << threads << " threads";
    }
  }
  set_num_threads(1);
  // A long block_size runs fewer texts per forward (64 MB of patterns: 8 of these 8 MB ones),
  // the same bits.
  const Gpt long_model = test::small_model(1, 16, 1024, 79, 3);
  std::vector<std::vector<int32_t>> long_texts(10, std::vector<int32_t>(1024));
  for (auto& ids : long_texts)
    for (int32_t& id : ids) id = static_cast<int32_t>(rng.next_u64() % 79);
  ASSERT_EQ(pattern_bytes(long_model, 1024), size_t{8} << 20);
  const std::vector<std::vector<std::vector<float>>> batched = head_patterns_of_texts(long_model, long_texts);
  for (size_t i = 0; i < long_texts.size(); ++i) {
    const std::vector<std::vector<float>> own = head_patterns(long_model, long_texts[i]);
    for (size_t h = 0; h < own.size(); ++h)
      ASSERT_EQ(0, std::memcmp(batched[i][h].data(), own[h].data(), own[h].size() * sizeof(float))) << i << " " << h;
  }
}

TEST(HeadRoles, ProbeSourceFieldIsReadAndChecked) {
  const auto dir = test::fresh_dir("probe_source");
  auto write = [&](const std::string& line) {
    std::ofstream(dir / "p.jsonl") << line << "\n";
    return dir / "p.jsonl";
  };
  auto items = load_probe_set(write(R"({"prompt": "ab。谁？", "answer": "b", "kind": "who", "source": 1})"));
  EXPECT_EQ(items[0].source, 1);
  items = load_probe_set(write(R"({"prompt": "ab。谁？", "answer": "b", "kind": "who"})"));
  EXPECT_EQ(items[0].source, -1);
  EXPECT_THROW(load_probe_set(write(R"({"prompt": "ab", "answer": "b", "kind": "who", "source": 0})")), InputError);
  EXPECT_THROW(load_probe_set(write(R"({"prompt": "ab", "answer": "b", "kind": "who", "source": 2})")), InputError);
  EXPECT_THROW(load_probe_set(write(R"({"prompt": "ab", "answer": "b", "kind": "who", "source": "1"})")), InputError);
  std::filesystem::remove_all(dir);
}

TEST(HeadRoles, ScoresOfARealModelAreInRangeAndFixed) {
  const std::u32string text = U"小丁拿着红色的苹果。谁拿着红色的苹果？小丁。";
  const Vocab vocab = Vocab::from_text(text);
  Gpt model = test::small_model(2, 16, 32, vocab.size(), 5);
  const std::vector<ProbeItem> probes = {{U"小丁拿着红色的苹果。谁拿着红色的苹果？小", U'丁', "who"},
                                         {U"小丁拿着红色的苹果。小丁拿着红色的", U'苹', "what"}};
  RoleOptions o;
  o.texts = probe_texts(vocab, probes, 32);
  o.texts_description = "one prompt";
  o.probes = &probes;
  const RoleReport a = score_head_roles(model, vocab, o), b = score_head_roles(model, vocab, o);
  ASSERT_EQ(a.heads.size(), 4u);
  EXPECT_EQ(a.answer_items, 2);
  EXPECT_EQ(a.induction_texts, 4);
  for (size_t i = 0; i < a.heads.size(); ++i) {
    const HeadRoleScores& h = a.heads[i];
    for (const auto& v : {h.previous_token, h.current_token, h.first_position, h.induction, h.answer_finding,
                          h.best_offset_score}) {
      ASSERT_TRUE(v.has_value());
      EXPECT_GE(*v, 0.0);
      EXPECT_LE(*v, 1.0 + 1e-6);
    }
    EXPECT_EQ(*h.induction, *b.heads[i].induction);
    EXPECT_FALSE(h.role.empty());
    // One prompt per kind: each kind's score is that prompt's weight on its source, and
    // the overall score their mean.
    ASSERT_EQ(h.answer_finding_by_kind.size(), 2u);
    EXPECT_EQ(h.answer_finding_by_kind[0].first, "who");
    EXPECT_EQ(h.answer_finding_by_kind[1].first, "what");
    EXPECT_NEAR(*h.answer_finding, (h.answer_finding_by_kind[0].second + h.answer_finding_by_kind[1].second) / 2, 1e-12);
  }
  const std::string table = format_roles(a);
  EXPECT_NE(table.find("head        prev"), std::string::npos) << table;
  EXPECT_NE(table.find("\nL1.H0     "), std::string::npos) << table;  // each head by its one name
  const auto json = role_report_json(a);
  EXPECT_EQ(json["heads"].size(), 4u);
  EXPECT_TRUE(json["heads"][0]["roles"].contains("induction"));
}

}  // namespace
}  // namespace mg

// The circuit modes' numbers (issue 30): direct logit attribution's parts sum to the
// forward's logit and logit difference on every item of the shipped probe; the logit
// lens's last stage is the model's own output; composition scores equal a naive double
// recomputation of Elhage et al.'s formula; patching restores exactly 1 when the whole
// stream entering a block comes from the clean run and exactly 0 where the texts agree;
// the probe mode's corrupt prompt swaps the answer's fact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "data/corpus.h"
#include "data/probe.h"
#include "interp/attribution.h"
#include "interp/composition.h"
#include "interp/explain.h"
#include "interp/logit_choice.h"
#include "interp/logit_lens.h"
#include "interp/patching.h"
#include "model_support.h"
#include "report/explain_format.h"
#include "report/explorer_circuits.h"
#include "report/roles_format.h"
#include "test_support.h"

namespace mg {
namespace {

// A model over the shipped corpus's vocabulary with every parameter drawn normal(0, 0.3)
// (biases and LayerNorm weights included, so no part is zero by construction).
struct Subject {
  Vocab vocab;
  Gpt model;
};
Subject random_subject(const std::string& position, int64_t n_layer = 2) {
  Corpus corpus = load_corpus(test::source_dir() / "data" / "corpus.txt", 0.1, 64);
  Gpt model = test::small_model(n_layer, 16, 64, corpus.vocab.size(), 5, position);
  Rng rng(23);
  for (auto& p : model.parameters().all())
    for (float& w : p.var.value().span()) w = static_cast<float>(rng.normal() * 0.3);
  return {std::move(corpus.vocab), std::move(model)};
}

// The v4 corpus's probe set (bare holds facts, 小彭 renamed: the
// vocabulary of v5 has no 彭): a fixed set whose items the tests below name by index, so
// that a new shipped probe does not move them.
std::vector<ProbeItem> probe() { return load_probe_set(test::source_dir() / "tests" / "fixtures" / "circuit_probe.jsonl"); }

const std::u32string kClean = U"小韩拿着黑花瓶。小曹买了绿帽子。小郑看见橙杯子。小韩有什么？小韩拿着";
const std::u32string kCorrupt = U"小韩拿着白花瓶。小曹买了绿帽子。小郑看见橙杯子。小韩有什么？小韩拿着";

TEST(Attribution, PartsSumToTheLogitAndTheDifferenceOnEveryProbeItem) {
  const std::vector<ProbeItem> items = probe();
  for (const std::string position : {"rope", "learned"}) {
    Subject s = random_subject(position);
    for (const ProbeItem& item : items) {
      std::vector<int32_t> ids = *s.vocab.find_all(item.prompt);
      if (ids.size() > 64) ids.erase(ids.begin(), ids.end() - 64);
      const Attribution a = attribute_logits(s.model, s.vocab, ids, {std::nullopt, s.vocab.find(item.answer), std::nullopt});
      ASSERT_NEAR(a.parts_logit, a.logit, 1e-4) << position;
      ASSERT_NEAR(a.parts_difference, a.logit - a.against_logit, 1e-4) << position;
    }
    // The parts: embed (+ pos_embed), 2 heads and an MLP per layer, ln_f.bias.
    const Attribution a = attribute_logits(s.model, s.vocab, kClean, "text", {});
    EXPECT_EQ(a.parts.size(), position == "learned" ? 9u : 8u);
    EXPECT_EQ(a.parts.front().name, "embed");
    EXPECT_EQ(a.parts[position == "learned" ? 2 : 1].name, "L0.H0");
    EXPECT_EQ(a.parts.back().name, "ln_f.bias");
    EXPECT_EQ(a.position, static_cast<int64_t>(kClean.size()) - 1);
    EXPECT_NE(a.answer, a.against);
    const std::vector<ProbeItem> few(items.begin(), items.begin() + 60);
    const ProbeAttribution mean = attribute_probe(s.model, s.vocab, few);
    EXPECT_LT(mean.largest_gap, 1e-4);
    ASSERT_EQ(mean.kinds.size(), 3u);  // colour, what, who
    int64_t counted = 0;
    for (const KindAttribution& k : mean.kinds) {
      counted += k.items;
      double sum = 0.0;
      for (double p : k.parts) sum += p;
      EXPECT_NEAR(sum, k.difference, 1e-4) << k.kind;  // a mean of sums is the sum of the means
    }
    EXPECT_EQ(counted + mean.skipped, 60);
  }
}

// --roles' direct-logit column: each head's part of the answer's difference, per kind the
// probe means above, overall the mean over every attributed item (recomputed item by item).
TEST(Attribution, RolesDirectLogitColumnIsTheHeadsMeanPart) {
  const std::vector<ProbeItem> items = probe();
  const std::vector<ProbeItem> few(items.begin(), items.begin() + 30);
  Subject s = random_subject("rope");
  const ProbeAttribution mean = attribute_probe(s.model, s.vocab, few);
  RoleReport report;
  for (int64_t l = 0; l < 2; ++l)
    for (int64_t h = 0; h < 2; ++h) report.heads.push_back(HeadRoleScores{.layer = l, .head = h});
  add_direct_logits(mean, report);
  for (const HeadRoleScores& h : report.heads) {
    const std::string name = "L" + std::to_string(h.layer) + ".H" + std::to_string(h.head);
    double sum = 0.0;
    int64_t counted = 0;
    for (const ProbeItem& item : few) {
      std::vector<int32_t> ids = *s.vocab.find_all(item.prompt);
      if (ids.size() > 64) ids.erase(ids.begin(), ids.end() - 64);
      const Attribution a = attribute_logits(s.model, s.vocab, ids, {std::nullopt, s.vocab.find(item.answer), std::nullopt});
      for (const AttributionPart& p : a.parts)
        if (p.name == name) sum += p.difference;
      ++counted;
    }
    ASSERT_TRUE(h.direct_logit) << name;
    EXPECT_NEAR(*h.direct_logit, sum / static_cast<double>(counted), 1e-9) << name;
    ASSERT_EQ(h.direct_logit_by_kind.size(), mean.kinds.size()) << name;
    const size_t part = static_cast<size_t>(
        std::find(mean.part_names.begin(), mean.part_names.end(), name) - mean.part_names.begin());
    for (size_t k = 0; k < mean.kinds.size(); ++k) {
      EXPECT_EQ(h.direct_logit_by_kind[k].first, mean.kinds[k].kind);
      EXPECT_EQ(h.direct_logit_by_kind[k].second, mean.kinds[k].parts[part]);
    }
  }
  const std::string table = format_roles(report);
  EXPECT_NE(table.find("dla"), std::string::npos) << table;
  EXPECT_EQ(head_roles_json(report.heads[0])["direct_logit"].get<double>(), *report.heads[0].direct_logit);
}

TEST(Attribution, RefusesBadInput) {
  Subject s = random_subject("rope");
  EXPECT_THROW(attribute_logits(s.model, s.vocab, kClean, "--text", {int64_t{34}, std::nullopt, std::nullopt}), InputError);
  const int32_t black = *s.vocab.find(U'黑');
  EXPECT_THROW(attribute_logits(s.model, s.vocab, kClean, "--text", {std::nullopt, black, black}), InputError);
  EXPECT_THROW(attribute_logits(s.model, s.vocab, U"小韩€", "--text", {}), InputError);
}

TEST(LogitLens, TheLastStageIsTheModelsOutput) {
  Subject s = random_subject("learned", 3);
  const LogitLens lens = logit_lens(s.model, s.vocab, kClean, "--text", int64_t{20}, std::nullopt, 5);
  ASSERT_EQ(lens.stages.size(), 4u);  // embed, L0, L1, L2
  EXPECT_EQ(lens.stages.front().name, "embed");
  EXPECT_EQ(lens.stages.back().name, "L2");
  // The answer defaults to the model's choice, which the last stage ranks first.
  const LensStage& last = lens.stages.back();
  EXPECT_EQ(last.answer_rank, 1);
  EXPECT_EQ(last.top.front().id, lens.answer);
  NoGradGuard no_grad;
  const std::vector<int32_t> ids = s.vocab.encode(kClean, "text");
  const Tensor logits = s.model.forward(ids, 1, static_cast<int64_t>(ids.size())).value();
  const int64_t V = s.model.config().vocab_size;
  for (const LogitPush& t : last.top) EXPECT_NEAR(t.logit, logits.data()[20 * V + t.id], 1e-4);
  for (size_t i = 1; i < last.top.size(); ++i) EXPECT_GE(last.top[i - 1].logit, last.top[i].logit);
  EXPECT_TRUE(lens.first_stage >= 0 && lens.first_stage <= 3);
  EXPECT_EQ(lens.stages[lens.first_stage].answer_rank, 1);
}

// Composition in double, written out from the formula (no kernels): TransformerLens's
// W_Q = (Wq rows of the head)^T scaled by ln1's gamma and centred over D, W_O centred.
std::vector<double> head_matrix(const Gpt& model, int64_t layer, int64_t head, const std::string& a, const std::string& b) {
  const int64_t D = model.config().n_embd, d = model.config().head_width();
  const std::string block = "blocks." + std::to_string(layer) + ".";
  const Tensor& gamma = model.parameters().get(block + "ln1.weight").value();
  auto reading = [&](const std::string& name) {  // [D,d]
    const Tensor& w = model.parameters().get(block + "attn." + name + ".weight").value();
    std::vector<double> m(D * d);
    for (int64_t j = 0; j < d; ++j) {
      double mean = 0.0;
      for (int64_t i = 0; i < D; ++i) mean += (m[i * d + j] = double(w[(head * d + j) * D + i]) * gamma[i]) / D;
      for (int64_t i = 0; i < D; ++i) m[i * d + j] -= mean;
    }
    return m;
  };
  std::vector<double> left = reading(a), out(D * D, 0.0);
  if (b == "o") {  // OV = W_V W_O
    const Tensor& wo = model.parameters().get(block + "attn.out_proj.weight").value();
    std::vector<double> o(d * D);
    for (int64_t j = 0; j < d; ++j) {
      double mean = 0.0;
      for (int64_t i = 0; i < D; ++i) mean += (o[j * D + i] = wo[i * D + head * d + j]) / D;
      for (int64_t i = 0; i < D; ++i) o[j * D + i] -= mean;
    }
    for (int64_t i = 0; i < D; ++i)
      for (int64_t k = 0; k < D; ++k)
        for (int64_t j = 0; j < d; ++j) out[i * D + k] += left[i * d + j] * o[j * D + k];
  } else {  // QK = W_Q W_K^T
    std::vector<double> right = reading(b);
    for (int64_t i = 0; i < D; ++i)
      for (int64_t k = 0; k < D; ++k)
        for (int64_t j = 0; j < d; ++j) out[i * D + k] += left[i * d + j] * right[k * d + j];
  }
  return out;
}

double score(const std::vector<double>& a, const std::vector<double>& b, int64_t D, bool transpose_b) {
  auto norm = [](const std::vector<double>& m) {
    double s = 0.0;
    for (double v : m) s += v * v;
    return std::sqrt(s);
  };
  std::vector<double> p(D * D, 0.0);
  for (int64_t i = 0; i < D; ++i)
    for (int64_t k = 0; k < D; ++k)
      for (int64_t j = 0; j < D; ++j) p[i * D + k] += a[i * D + j] * (transpose_b ? b[k * D + j] : b[j * D + k]);
  return norm(p) / (norm(a) * norm(b));
}

TEST(Composition, ScoresAreTheFormulaAndTheBaselineIsChance) {
  Subject s = random_subject("rope", 3);
  const CompositionScores c = composition_scores(s.model, 50, 7);
  ASSERT_EQ(c.pairs.size(), 12u);  // 3 layers x 2 heads: (L0,L1), (L0,L2), (L1,L2), 4 pairs each
  const int64_t D = 16;
  for (const CompositionPair& p : c.pairs) {
    ASSERT_LT(p.layer1, p.layer2);
    const std::vector<double> ov1 = head_matrix(s.model, p.layer1, p.head1, "v_proj", "o");
    const std::vector<double> qk2 = head_matrix(s.model, p.layer2, p.head2, "q_proj", "k_proj");
    const std::vector<double> ov2 = head_matrix(s.model, p.layer2, p.head2, "v_proj", "o");
    EXPECT_NEAR(p.q, score(ov1, qk2, D, false), 1e-5);
    EXPECT_NEAR(p.k, score(ov1, qk2, D, true), 1e-5);
    EXPECT_NEAR(p.v, score(ov1, ov2, D, false), 1e-5);
  }
  // Random rank-d matrices in D = 16 overlap by chance: the mean lies well inside (0, 1),
  // equal for the three modes up to sampling noise, and the same seed draws the same.
  EXPECT_GT(c.baseline_q, 0.1);
  EXPECT_LT(c.baseline_q, 0.6);
  EXPECT_NEAR(c.baseline_q, c.baseline_v, 0.05);
  EXPECT_EQ(composition_scores(s.model, 50, 7).baseline_k, c.baseline_k);
}

// Issue 45: a head whose W_O is zero writes nothing, so it composes with nothing: its scores
// are 0, not 0/0; and a one-symbol vocabulary has no competitor (one line, not an id of -1).
TEST(Composition, AZeroWriterScoresZeroAndOneSymbolHasNoCompetitor) {
  Subject s = random_subject("rope", 2);
  for (float& w : s.model.parameters().get("blocks.0.attn.out_proj.weight").value().span()) w = 0.0f;
  for (const CompositionPair& p : composition_scores(s.model, 5, 7).pairs) {
    EXPECT_EQ(p.q, 0.0);
    EXPECT_EQ(p.k, 0.0);
    EXPECT_EQ(p.v, 0.0);
  }
  const float logits[1] = {2.0f};
  EXPECT_EQ(best_symbol(logits, 1), 0);
  EXPECT_THROW(best_symbol(logits, 1, 0), InputError);
  EXPECT_THROW(choose_pair(logits, 1, std::nullopt, std::nullopt), InputError);
}

// The probe mode's candidates are found once per set (issue 45: each item used to scan every
// other row, quadratic in duplicates): a set with every row twice gives each item the same
// corrupt prompt as the set itself.
TEST(Patching, DuplicateRowsChangeNoItemsCorruptPrompt) {
  Subject s = random_subject("rope");
  std::vector<ProbeItem> items = probe();
  const std::vector<ProbeItem> copy = items;
  items.insert(items.end(), copy.begin(), copy.end());  // every row twice
  for (Swap swap : {Swap::value, Swap::key}) {
    const CorruptionCandidates candidates(items, swap);
    for (const ProbeItem& item : copy) {
      const auto once = candidates.corrupt(item, s.vocab, 64), alone = corrupt_prompt(item, copy, s.vocab, 64, swap);
      ASSERT_EQ(once.has_value(), alone.has_value());
      if (once) {
        EXPECT_EQ(once->corrupt, alone->corrupt);
        EXPECT_EQ(once->positions, alone->positions);
      }
    }
    if (swap == Swap::key) {
      EXPECT_EQ(candidates.offsets("colour"), key_offsets(copy, "colour"));
    }
  }
}

TEST(Patching, TheWholeStreamRestoresOneAndAnAgreeingPositionZero) {
  Subject s = random_subject("rope", 3);
  const int32_t black = *s.vocab.find(U'黑'), white = *s.vocab.find(U'白');
  const Patching p = patch_activations(s.model, s.vocab, kClean, kCorrupt, black, white);
  const int64_t T = static_cast<int64_t>(kClean.size());
  ASSERT_EQ(p.whole_streams.size(), 3u);
  ASSERT_EQ(p.streams.size(), static_cast<size_t>(3 * T));
  ASSERT_EQ(p.heads.size(), 6u);
  EXPECT_NE(p.clean, p.corrupt);
  for (size_t l = 0; l < 3; ++l) EXPECT_EQ(p.whole_streams[l], 1.0) << l << " clean " << p.clean << " corrupt " << p.corrupt;
  // Entering block 0 the texts differ only at position 4: patching there restores all of
  // it, patching any other position nothing at all.
  for (int64_t t = 0; t < T; ++t) EXPECT_EQ(p.streams[t], t == 4 ? 1.0 : 0.0) << t;
  // Entering later blocks, positions before 4 have seen nothing of the difference.
  for (int64_t l = 1; l < 3; ++l)
    for (int64_t t = 0; t < 4; ++t) EXPECT_EQ(p.streams[l * T + t], 0.0) << l << " " << t;
  // A head patched at one position before 4 copies what it already holds: nothing restored
  // (up to float rounding: an edited hook_z runs the op-by-op attention, not the fused one).
  ASSERT_EQ(p.head_positions.size(), static_cast<size_t>(6 * T));
  for (int64_t lh = 0; lh < 6; ++lh)
    for (int64_t t = 0; t < 4; ++t) EXPECT_NEAR(p.head_positions[lh * T + t], 0.0, 1e-4) << lh << " " << t;
  EXPECT_THROW(patch_activations(s.model, s.vocab, kClean, kCorrupt.substr(1), black, white), InputError);
  EXPECT_THROW(patch_activations(s.model, s.vocab, kClean, kClean, black, white), InputError);  // nothing to restore
}

TEST(Patching, TheProbeModeSwapsTheAnswersFact) {
  const std::vector<ProbeItem> items = probe();
  Subject s = random_subject("rope");
  const ProbeItem& first = items[0];  // colour: 小韩拿着黑花瓶 ... 小韩拿着 -> 黑, source 4
  const std::optional<CorruptPrompt> p = corrupt_prompt(first, items, s.vocab, 64);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->clean, first.prompt);
  EXPECT_EQ(p->corrupt.size(), p->clean.size());
  EXPECT_EQ(p->positions, std::vector<int64_t>{4});
  ASSERT_EQ(p->replacements.size(), 1u);
  EXPECT_NE(p->replacements[0], first.answer);
  for (size_t i = 0; i < p->clean.size(); ++i)
    EXPECT_EQ(p->corrupt[i] == p->clean[i], i != 4u) << i;
  EXPECT_EQ(p->corrupt[4], p->replacements[0]);
  EXPECT_EQ(p->clean.find(p->replacements[0]), std::u32string::npos);
  ProbeItem unsourced = first;
  unsourced.source = -1;
  EXPECT_FALSE(corrupt_prompt(unsourced, items, s.vocab, 64));
  const std::vector<ProbeItem> few(items.begin(), items.begin() + 30);
  const ProbePatching mean = patch_probe(s.model, s.vocab, few);
  int64_t counted = mean.skipped;
  for (const KindPatching& k : mean.kinds) {
    counted += k.items;
    EXPECT_EQ(k.heads.size(), 4u);
    for (double h : k.heads) EXPECT_TRUE(std::isfinite(h));
  }
  EXPECT_EQ(counted, 30);
}

// --swap key: every symbol that tells the answer's fact apart (the name and the verb for
// colour, those and the colour for what, the colour for who) is replaced, so the question
// matches the fact on none of them; the answer stays and the competitor is what the corrupt
// run answers instead.
TEST(Patching, TheKeySwapChangesTheSymbolTheQuestionMatchesOn) {
  const std::vector<ProbeItem> items = probe();
  Subject s = random_subject("rope");
  EXPECT_EQ(key_offsets(items, "colour"), (std::vector<int64_t>{1, 2, 3}));  // 着, 拿, 韩 (小 repeats)
  EXPECT_EQ(key_offsets(items, "what"), (std::vector<int64_t>{1, 2, 3, 4}));  // 黑, 着, 拿, 韩
  EXPECT_EQ(key_offsets(items, "who"), std::vector<int64_t>{5});  // 小 and 是 repeat in every fact, an object may repeat, a colour not
  EXPECT_TRUE(key_offsets(items, "none").empty());
  const std::u32string colours = U"红黄蓝绿白黑紫灰粉橙";
  struct Expected { size_t item; std::vector<int64_t> positions; };
  // items[0]: 小韩拿着黑花瓶 ... 小韩拿着 -> 黑: 着 3, 拿 2, 韩 1; the story uses 拿着, 买了 and
  // 看见, so the verb becomes 画过. items[1]: ... 小韩拿着黑 -> 花: 黑 4 and those.
  // items[4]: 红铅笔是小陈的。灰鞋子是小马的。... -> 马: 灰 at 8.
  for (const Expected& e : {Expected{0, {3, 2, 1}}, Expected{1, {4, 3, 2, 1}}, Expected{4, {8}}}) {
    const ProbeItem& item = items[e.item];
    const std::optional<CorruptPrompt> p = corrupt_prompt(item, items, s.vocab, 64, Swap::key);
    ASSERT_TRUE(p) << e.item;
    EXPECT_EQ(p->positions, e.positions) << e.item;
    ASSERT_EQ(p->replacements.size(), e.positions.size()) << e.item;
    for (size_t i = 0; i < p->clean.size(); ++i)
      EXPECT_EQ(p->corrupt[i] == p->clean[i],
                std::find(e.positions.begin(), e.positions.end(), static_cast<int64_t>(i)) == e.positions.end())
          << e.item << " " << i;
    for (size_t j = 0; j < e.positions.size(); ++j) {
      EXPECT_EQ(p->corrupt[static_cast<size_t>(e.positions[j])], p->replacements[j]) << e.item;
      EXPECT_EQ(p->clean.find(p->replacements[j]), std::u32string::npos) << e.item;
    }
    if (e.item == 0) EXPECT_EQ(p->replacements.substr(0, 2), U"过画");
    else EXPECT_NE(colours.find(p->replacements[0]), std::u32string::npos) << e.item;
  }
  // The probe mode's per-kind restoration is the single-pair patching of each item's pair
  // (the answer against the corrupt run's choice), summed as sum(patched - corrupt) /
  // sum(clean - corrupt).
  const std::vector<ProbeItem> few(items.begin(), items.begin() + 24);
  const ProbePatching mean = patch_probe(s.model, s.vocab, few, Swap::key);
  EXPECT_EQ(mean.swap, Swap::key);
  for (const KindPatching& k : mean.kinds) {
    EXPECT_EQ(k.key_offsets, key_offsets(few, k.kind)) << k.kind;
    std::vector<double> moved(k.heads.size(), 0.0);
    double gap = 0.0;
    int64_t counted = 0;
    for (const ProbeItem& item : few) {
      if (item.kind != k.kind) continue;
      const std::optional<CorruptPrompt> p = corrupt_prompt(item, few, s.vocab, 64, Swap::key);
      if (!p) continue;
      const Patching one = patch_activations(s.model, s.vocab, p->clean, p->corrupt, s.vocab.find(item.answer), std::nullopt);
      ++counted;
      gap += one.clean - one.corrupt;
      for (size_t h = 0; h < moved.size(); ++h) moved[h] += one.heads[h] * (one.clean - one.corrupt);
    }
    EXPECT_EQ(counted, k.items) << k.kind;
    for (size_t h = 0; h < moved.size(); ++h) EXPECT_NEAR(k.heads[h], moved[h] / gap, 1e-9) << k.kind << " " << h;
  }
}

TEST(CircuitExplorer, ThePageHoldsTheModesNumbers) {
  const std::vector<ProbeItem> items = probe();
  Subject s = random_subject("rope");
  const std::vector<int32_t> ids = s.vocab.encode(items[0].prompt, "prompt");
  const int64_t last = static_cast<int64_t>(ids.size()) - 1;
  const auto page = circuit_explorer_json(s.model, s.vocab, ids, &items, {3, last});
  const Attribution a = attribute_logits(s.model, s.vocab, ids, {int64_t{3}, std::nullopt, std::nullopt});
  const auto& parts = page["attribution"]["at"]["3"]["parts"];
  ASSERT_EQ(parts.size(), a.parts.size());
  for (size_t i = 0; i < a.parts.size(); ++i) EXPECT_NEAR(parts[i]["difference"].get<double>(), a.parts[i].difference, 1e-8);
  // The question is a probe item with a source: patched against its corrupted partner.
  const auto& patching = page["patching"];
  ASSERT_TRUE(patching["available"].get<bool>());
  const std::optional<CorruptPrompt> partner = corrupt_prompt(items[0], items, s.vocab, 64);
  const Patching p = patch_activations(s.model, s.vocab, partner->clean, partner->corrupt, s.vocab.find(items[0].answer),
                                       s.vocab.find(partner->replacements[0]));
  for (int64_t l = 0; l < 2; ++l)
    for (int64_t h = 0; h < 2; ++h) EXPECT_NEAR(patching["heads"][l][h].get<double>(), p.heads[l * 2 + h], 1e-8);
  EXPECT_EQ(page["composition"]["pairs"].size(), 4u);
  // Without a probe set, or on a text that is no probe question, the page says why not.
  EXPECT_FALSE(circuit_explorer_json(s.model, s.vocab, ids, nullptr, {last})["patching"]["available"].get<bool>());
  const std::vector<int32_t> other(ids.begin() + 1, ids.end());
  EXPECT_FALSE(circuit_explorer_json(s.model, s.vocab, other, &items, {0})["patching"]["available"].get<bool>());
}

// A kind named by its probe's "key" (corpus v6) is swapped where the key is, on either side
// of the source: holder's key, the object, follows the name it answers.
TEST(Patching, TheKeySwapReplacesANamedKeyAfterTheSource) {
  Subject s = random_subject("rope");
  // 小丁拿着红色的苹果。小王拿着红色的杯子。谁拿着红色的杯子？小 -> 王 (source 11), key 杯 (17);
  // the second item's key 书 (17) is what the first is given instead.
  std::vector<ProbeItem> items(2);
  items[0] = {U"小丁拿着红色的苹果。小王拿着红色的杯子。谁拿着红色的杯子？小", U'王', "holder", 11};
  items[1] = {U"小李买了绿色的鞋子。小马买了绿色的书包。谁买了绿色的书包？小", U'马', "holder", 11};
  for (ProbeItem& item : items) item.key = {17};
  EXPECT_EQ(key_offsets(items, "holder"), std::vector<int64_t>{-6});
  const std::optional<CorruptPrompt> p = corrupt_prompt(items[0], items, s.vocab, 64, Swap::key);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->positions, std::vector<int64_t>{17});
  EXPECT_EQ(p->replacements, U"书");
  EXPECT_EQ(p->corrupt, U"小丁拿着红色的苹果。小王拿着红色的书子。谁拿着红色的杯子？小");
  // Without "key" the rule for v5's forward reads finds the distractor's symbols: the first
  // fact's 着/了, 红/绿, 色 and 的, 8 to 5 before the source, line up with the question's
  // because that fact shares the asked fact's verb and colour. Swapping them would corrupt
  // the wrong fact, which is why v6's items name their key.
  for (ProbeItem& item : items) item.key.clear();
  EXPECT_EQ(key_offsets(items, "holder"), (std::vector<int64_t>{5, 6, 7, 8}));
}

// --explain's verdict per kind from the probe's tags: learned only if the items with
// distractors are answered too; learned by a shortcut when only those without are.
TEST(Explain, AKindAnsweredOnlyWithoutDistractorsIsLearnedByAShortcut) {
  ProbeScore score;
  score.kinds = {"who", "what", "colour"};
  score.items = 600;
  score.kind_items = {200, 200, 200};
  score.kind_correct = {190, 200, 100};
  score.alone_items = {100, 100, 100};
  score.alone_correct = {100, 100, 50};
  score.distracted_items = {100, 100, 100};
  score.distracted_correct = {90, 100, 50};
  score.cues = {"colour", "verb and colour", "verb"};
  score.kind_correct[0] = 150, score.distracted_correct[0] = 50;  // who: 1.00 without, 0.50 with
  const Explanation e = explain_chains(score, ProbeAttribution{}, ProbePatching{}, ProbePatching{}, CompositionScores{});
  ASSERT_EQ(e.kinds.size(), 3u);
  EXPECT_TRUE(e.kinds[0].shortcut);
  EXPECT_FALSE(e.kinds[0].learned);
  EXPECT_EQ(e.kinds[0].cue, "colour");
  EXPECT_DOUBLE_EQ(e.kinds[0].distractor_accuracy, 0.5);
  EXPECT_TRUE(e.kinds[1].learned);
  EXPECT_FALSE(e.kinds[1].shortcut);
  EXPECT_FALSE(e.kinds[2].learned);  // 0.50 on both: not learned at all
  EXPECT_FALSE(e.kinds[2].shortcut);
  const std::string text = format_explanation(e);
  EXPECT_NE(text.find("who: learned by a shortcut: the colour alone (accuracy 1.000 without distractors, 0.500 with "
                      "them, under 0.9)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("colour: not learned (accuracy 0.500, under 0.9)"), std::string::npos) << text;
  const auto json = explanation_json(e);
  EXPECT_EQ(json["kinds"][0]["shortcut"], true);
  EXPECT_EQ(json["kinds"][0]["cue"], "colour");
  EXPECT_EQ(json["kinds"][0]["distractor_accuracy"], 0.5);
}

}  // namespace
}  // namespace mg

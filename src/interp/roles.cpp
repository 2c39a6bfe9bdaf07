// Head-role detectors over attention patterns, and the pass that runs a model over the
// stated texts (forwards batched by text length, capturing every layer's projected_weights) and pools
// the detectors' scores per head.
#include "interp/roles.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>

#include "core/error.h"
#include "core/random.h"
#include "interp/patterns.h"

namespace mg {
namespace {

float at(const std::vector<float>& w, int64_t T, int64_t t, int64_t s) { return w[static_cast<size_t>(t * T + s)]; }

// The texts' patterns held at once: 256 MB at most (256 texts of block_size 64 on 8 heads hold
// 33 MB), or one text whose patterns alone are more.
constexpr size_t kSliceBytes = size_t{256} << 20;

}  // namespace

void add_previous_token(const std::vector<float>& w, int64_t T, PooledScore& score) {
  for (int64_t t = 1; t < T; ++t) score.sum += at(w, T, t, t - 1);
  score.rows += std::max<int64_t>(T - 1, 0);
}

void add_current_token(const std::vector<float>& w, int64_t T, PooledScore& score) {
  for (int64_t t = 1; t < T; ++t) score.sum += at(w, T, t, t);
  score.rows += std::max<int64_t>(T - 1, 0);
}

void add_first_position(const std::vector<float>& w, int64_t T, PooledScore& score) {
  for (int64_t t = 1; t < T; ++t) score.sum += at(w, T, t, 0);
  score.rows += std::max<int64_t>(T - 1, 0);
}

void add_offsets(const std::vector<float>& w, int64_t T, std::vector<PooledScore>& by_offset) {
  for (int64_t k = 0; k < static_cast<int64_t>(by_offset.size()) && k < T; ++k)
    for (int64_t t = std::max<int64_t>(k, 1); t < T; ++t) by_offset[k].add(at(w, T, t, t - k));
}

void add_induction(const std::vector<float>& w, const std::vector<int32_t>& ids, PooledScore& score) {
  const int64_t T = static_cast<int64_t>(ids.size());
  for (int64_t t = 1; t < T; ++t) {
    bool earlier = false;
    double sum = 0.0;
    for (int64_t j = 0; j < t; ++j)
      if (ids[j] == ids[t]) {  // an earlier copy of the current symbol: read what followed it
        earlier = true;
        sum += at(w, T, t, j + 1);
      }
    if (earlier) score.add(sum);
  }
}

int64_t answer_source(const ProbeItem& item) {
  if (item.source >= 0) return item.source;
  for (int64_t i = static_cast<int64_t>(item.prompt.size()) - 1; i >= 0; --i)
    if (item.prompt[static_cast<size_t>(i)] == item.answer) return i;
  return -1;
}

std::vector<int32_t> repeated_random_ids(int64_t vocab_size, int64_t count, uint64_t seed) {
  MG_CHECK(count >= 1 && count <= vocab_size, "repeated_random_ids: count must be in 1..vocab_size");
  std::vector<int32_t> all(static_cast<size_t>(vocab_size));
  std::iota(all.begin(), all.end(), 0);
  Rng rng(seed);
  for (int64_t i = 0; i < count; ++i) {  // partial Fisher-Yates: the first `count` are a uniform draw
    const int64_t j = i + static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(vocab_size - i)));
    std::swap(all[i], all[j]);
  }
  std::vector<int32_t> ids(all.begin(), all.begin() + count);
  ids.insert(ids.end(), all.begin(), all.begin() + count);
  return ids;
}

std::string role_name(const HeadRoleScores& s, const RoleThresholds& th) {
  std::vector<std::string> names;
  auto passes = [](const std::optional<double>& v, double threshold) { return v && *v >= threshold; };
  // Named overall, or else for the kinds on which the score reaches the threshold.
  auto by_kind = [&](const char* name, const std::optional<double>& overall,
                     const std::vector<std::pair<std::string, double>>& kinds, double threshold) {
    if (passes(overall, threshold)) return names.push_back(name);
    std::string found;
    for (const auto& [kind, score] : kinds)
      if (score >= threshold) found += (found.empty() ? "" : ",") + kind;
    if (!found.empty()) names.push_back(std::string(name) + "(" + found + ")");
  };
  // The chain's two words, as --explain says them (docs/glossary.md): a head that reads the
  // answer's source from the answer position has the writer's pattern; one that copies the
  // symbol before the answer into the answer's position, the carrier's.
  by_kind("writer", s.answer_finding, s.answer_finding_by_kind, th.answer_finding);
  by_kind("carrier", s.copy_forward, s.copy_forward_by_kind, th.copy_forward);
  if (passes(s.induction, th.induction)) names.push_back("induction");
  if (passes(s.previous_token, th.previous_token)) names.push_back("previous-token");
  if (s.best_offset >= 2 && passes(s.best_offset_score, th.offset))
    names.push_back("offset-" + std::to_string(s.best_offset));
  if (passes(s.current_token, th.current_token)) names.push_back("current-token");
  if (passes(s.first_position, th.first_position)) names.push_back("first-position");
  if (names.empty()) return "mixed";
  std::string out = names[0];
  for (size_t i = 1; i < names.size(); ++i) out += "+" + names[i];
  return out;
}

std::vector<std::vector<int32_t>> text_windows(const std::vector<int32_t>& ids, int64_t block_size,
                                               int64_t max_windows) {
  std::vector<std::vector<int32_t>> out;
  for (size_t first = 0; first < ids.size() && static_cast<int64_t>(out.size()) < max_windows;
       first += static_cast<size_t>(block_size)) {
    const size_t last = std::min(ids.size(), first + static_cast<size_t>(block_size));
    out.emplace_back(ids.begin() + first, ids.begin() + last);
  }
  return out;
}

std::vector<std::vector<int32_t>> probe_texts(const Vocab& vocab, const std::vector<ProbeItem>& probes,
                                              int64_t block_size) {
  std::vector<std::vector<int32_t>> out;
  for (const ProbeItem& item : probes) {
    std::optional<std::vector<int32_t>> known = vocab.find_all(item.prompt);
    if (!known || known->empty()) continue;
    std::vector<int32_t> ids = std::move(*known);
    if (static_cast<int64_t>(ids.size()) > block_size) ids.erase(ids.begin(), ids.end() - block_size);
    out.push_back(std::move(ids));
  }
  return out;
}

namespace {

// One head's pooled detector sums, over the texts (the pattern detectors), the induction
// texts and the probe's answer items.
struct HeadSums {
  PooledScore previous, current, first, induction, answer, copy;
  std::vector<PooledScore> offsets;                       // [block_size]
  std::vector<PooledScore> answer_by_kind, copy_by_kind;  // [kinds]
};

// The detectors each text's pattern W [T,T] of one head goes through.
void add_text_detectors(const std::vector<float>& w, int64_t T, HeadSums& s) {
  add_previous_token(w, T, s.previous);
  add_current_token(w, T, s.current);
  add_first_position(w, T, s.first);
  add_offsets(w, T, s.offsets);
}

// The bounded pattern stream: every head's pattern on each of TEXTS (empty ones skipped),
// computed a slice at a time (batched by length, head_patterns_of_texts) so that at most
// kSliceBytes of patterns are held, and handed to VISIT(ids, patterns) in the texts' order,
// patterns indexed layer * H + head, each [T,T].
template <class Visit>
void for_each_pattern(const Gpt& model, const std::vector<std::vector<int32_t>>& texts, Visit&& visit) {
  std::vector<std::vector<int32_t>> slice;
  for (size_t next = 0; next < texts.size();) {
    slice.clear();
    for (size_t bytes = 0; next < texts.size(); ++next) {
      const std::vector<int32_t>& ids = texts[next];
      if (ids.empty()) continue;
      MG_CHECK(static_cast<int64_t>(ids.size()) <= model.config().block_size,
               "score_head_roles: a text longer than block_size");
      bytes += pattern_bytes(model, static_cast<int64_t>(ids.size()));
      if (!slice.empty() && bytes > kSliceBytes) break;
      slice.push_back(ids);
    }
    const std::vector<std::vector<std::vector<float>>> patterns = head_patterns_of_texts(model, slice);
    for (size_t j = 0; j < slice.size(); ++j) visit(slice[j], patterns[j]);
  }
}

// The probe's answer items: each prompt cropped to its last block_size symbols, where the
// answer's source is, and its kind; then the two rows of each head's pattern the
// answer-finding and copy-forward detectors read, taken from whichever forward saw the
// prompt first. The probe's prompts are usually the texts too (training's head logging
// scores on them), so the rows are taken while the texts' forwards run, and a prompt gets a
// forward of its own (unseen()) only if no text was the same ids.
class AnswerItems {
 public:
  AnswerItems(const Vocab& vocab, const std::vector<ProbeItem>* probes, int64_t block_size, int64_t heads) : heads_(heads) {
    if (!probes) return;
    std::unordered_map<std::string, size_t> kind_index;  // into kinds
    for (const ProbeItem& item : *probes) {
      int64_t source = answer_source(item);
      if (source < 0) continue;
      std::optional<std::vector<int32_t>> known = vocab.find_all(item.prompt);
      if (!known) continue;
      std::vector<int32_t> ids = std::move(*known);
      const int64_t dropped = std::max<int64_t>(0, static_cast<int64_t>(ids.size()) - block_size);
      ids.erase(ids.begin(), ids.begin() + dropped);
      source -= dropped;
      if (source < 0) continue;
      const auto [at, fresh] = kind_index.try_emplace(item.kind, kinds.size());
      if (fresh) kinds.push_back(item.kind);
      items_of_ids_[ids].push_back(items.size());
      items.push_back({std::move(ids), source, at->second, {}, {}});
    }
  }

  struct Item {
    std::vector<int32_t> ids;  // the prompt cropped to its last block_size symbols
    int64_t source = -1;       // in ids
    size_t kind = 0;
    std::vector<float> weight, copied;  // [heads]: w[T-1][source] and w[source][source-1]
  };
  std::vector<Item> items;
  std::vector<std::string> kinds;  // in order of first appearance in the probe set

  // Each head's two rows of P for every item whose prompt is IDS and has none yet.
  void take_rows(const std::vector<int32_t>& ids, const std::vector<std::vector<float>>& p) {
    const auto found = items_of_ids_.find(ids);
    if (found == items_of_ids_.end()) return;
    const int64_t T = static_cast<int64_t>(ids.size());
    for (size_t index : found->second) {
      Item& a = items[index];
      if (!a.weight.empty()) continue;
      a.weight.resize(static_cast<size_t>(heads_));
      a.copied.resize(static_cast<size_t>(heads_));
      for (int64_t i = 0; i < heads_; ++i) {
        a.weight[i] = at(p[i], T, T - 1, a.source);  // row T-1 of the head's [T,T]
        if (a.source >= 1) a.copied[i] = at(p[i], T, a.source, a.source - 1);
      }
    }
  }

  // The prompts no forward has seen yet, each once.
  std::vector<std::vector<int32_t>> unseen() const {
    std::vector<std::vector<int32_t>> out;
    std::set<std::vector<int32_t>> queued;
    for (const Item& a : items)
      if (a.weight.empty() && queued.insert(a.ids).second) out.push_back(a.ids);
    return out;
  }

  // Answer-finding: the weight on the answer's source from the position that predicts it;
  // copy-forward: how much of the symbol before it the source reads. Pooled in probe order.
  void add_to(std::vector<HeadSums>& sums) const {
    for (const Item& a : items)
      for (int64_t i = 0; i < heads_; ++i) {
        HeadSums& s = sums[i];
        s.answer.add(a.weight[i]);
        s.answer_by_kind.resize(kinds.size());
        s.answer_by_kind[a.kind].add(a.weight[i]);
        if (a.source >= 1) {
          s.copy.add(a.copied[i]);
          s.copy_by_kind.resize(kinds.size());
          s.copy_by_kind[a.kind].add(a.copied[i]);
        }
      }
  }

 private:
  int64_t heads_;
  std::map<std::vector<int32_t>, std::vector<size_t>> items_of_ids_;
};

// One head's scores from its sums: each detector's mean, the best offset (a tie keeps the
// smaller k), the role name.
HeadRoleScores assemble_head(int64_t layer, int64_t head, const HeadSums& s, const std::vector<std::string>& kinds,
                             const RoleThresholds& thresholds) {
  HeadRoleScores r;
  r.layer = layer;
  r.head = head;
  r.previous_token = s.previous.mean();
  r.current_token = s.current.mean();
  r.first_position = s.first.mean();
  r.induction = s.induction.mean();
  r.answer_finding = s.answer.mean();
  for (size_t k = 0; k < s.answer_by_kind.size(); ++k)
    if (auto m = s.answer_by_kind[k].mean()) r.answer_finding_by_kind.emplace_back(kinds[k], *m);
  r.copy_forward = s.copy.mean();
  for (size_t k = 0; k < s.copy_by_kind.size(); ++k)
    if (auto m = s.copy_by_kind[k].mean()) r.copy_forward_by_kind.emplace_back(kinds[k], *m);
  for (int64_t k = 0; k < static_cast<int64_t>(s.offsets.size()); ++k) {
    auto m = s.offsets[k].mean();
    if (m && (!r.best_offset_score || *m > *r.best_offset_score)) {
      r.best_offset = k;
      r.best_offset_score = m;
    }
  }
  r.role = role_name(r, thresholds);
  return r;
}

}  // namespace

RoleReport score_head_roles(const Gpt& model, const Vocab& vocab, const RoleOptions& o) {
  const ModelConfig& c = model.config();
  const int64_t L = c.n_layer, H = c.n_head, heads = L * H;
  std::vector<HeadSums> sums(static_cast<size_t>(heads));
  for (HeadSums& s : sums) s.offsets.resize(static_cast<size_t>(c.block_size));
  AnswerItems answers(vocab, o.probes, c.block_size, heads);

  RoleReport report;
  report.texts = o.texts_description;
  report.texts_source = o.texts_source;
  report.texts_probe = o.texts_probe;
  report.thresholds = o.thresholds;
  // The texts: the pattern detectors, and the answer rows of the prompts among them.
  for_each_pattern(model, o.texts, [&](const std::vector<int32_t>& ids, const std::vector<std::vector<float>>& p) {
    ++report.text_count;
    for (int64_t i = 0; i < heads; ++i) add_text_detectors(p[i], static_cast<int64_t>(ids.size()), sums[i]);
    answers.take_rows(ids, p);
  });
  // Induction: the repeated random sequences, each as long as block_size allows.
  const int64_t count = std::min<int64_t>(c.block_size / 2, c.vocab_size);
  std::vector<std::vector<int32_t>> induction_texts;
  for (int64_t seed = 1; count >= 2 && seed <= o.induction_texts; ++seed)
    induction_texts.push_back(repeated_random_ids(c.vocab_size, count, static_cast<uint64_t>(seed)));
  for_each_pattern(model, induction_texts, [&](const std::vector<int32_t>& ids, const std::vector<std::vector<float>>& p) {
    ++report.induction_texts;
    for (int64_t i = 0; i < heads; ++i) add_induction(p[i], ids, sums[i].induction);
  });
  // The prompts no text was: their own forwards.
  for_each_pattern(model, answers.unseen(),
                   [&](const std::vector<int32_t>& ids, const std::vector<std::vector<float>>& p) { answers.take_rows(ids, p); });
  answers.add_to(sums);
  report.answer_items = static_cast<int64_t>(answers.items.size());
  for (int64_t l = 0; l < L; ++l)
    for (int64_t h = 0; h < H; ++h) report.heads.push_back(assemble_head(l, h, sums[l * H + h], answers.kinds, o.thresholds));
  return report;
}

}  // namespace mg

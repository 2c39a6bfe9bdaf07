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

RoleReport score_head_roles(const Gpt& model, const Vocab& vocab, const RoleOptions& o) {
  const ModelConfig& c = model.config();
  const int64_t L = c.n_layer, H = c.n_head, heads = L * H;
  struct Sums {
    PooledScore previous, current, first, induction, answer, copy;
    std::vector<PooledScore> offsets;
    std::vector<PooledScore> answer_by_kind, copy_by_kind;  // [kinds]
  };
  std::vector<std::string> kinds;  // in order of first appearance in the probe set
  std::vector<Sums> sums(static_cast<size_t>(heads));
  for (Sums& s : sums) s.offsets.resize(static_cast<size_t>(c.block_size));

  RoleReport report;
  report.texts = o.texts_description;
  report.thresholds = o.thresholds;

  // Answer-finding reads two rows of each head's pattern on each probe prompt: the weight on
  // the answer's source from the position that predicts it, and how much of the symbol before
  // it the source reads. The probe's prompts are usually the texts too (training's head logging
  // scores on them), so the rows are taken while the texts' forwards run, and a prompt gets a
  // forward of its own only if no text was the same ids; the pooled sums below still add the
  // items in probe order, so every score is what a forward per prompt gave.
  struct AnswerItem {
    std::vector<int32_t> ids;  // the prompt cropped to its last block_size symbols
    int64_t source = -1;       // in ids
    size_t kind = 0;
    std::vector<float> weight, copied;  // [heads], filled by whichever forward saw ids first
  };
  std::vector<AnswerItem> answer_items;
  std::map<std::vector<int32_t>, std::vector<size_t>> items_of_ids;
  std::unordered_map<std::string, size_t> kind_index;  // into kinds
  if (o.probes) {
    for (const ProbeItem& item : *o.probes) {
      int64_t source = answer_source(item);
      if (source < 0) continue;
      std::optional<std::vector<int32_t>> known = vocab.find_all(item.prompt);
      if (!known) continue;
      std::vector<int32_t> ids = std::move(*known);
      const int64_t dropped = std::max<int64_t>(0, static_cast<int64_t>(ids.size()) - c.block_size);
      ids.erase(ids.begin(), ids.begin() + dropped);
      source -= dropped;
      if (source < 0) continue;
      const auto [at, fresh] = kind_index.try_emplace(item.kind, kinds.size());
      if (fresh) kinds.push_back(item.kind);
      const size_t kind = at->second;
      items_of_ids[ids].push_back(answer_items.size());
      answer_items.push_back({std::move(ids), source, kind, {}, {}});
    }
  }
  // Each head's two answer-finding rows of P (index layer * H + head, each [T,T]) for every
  // probe item whose prompt is IDS and has none yet.
  auto take_answer_rows = [&](const std::vector<int32_t>& ids, const std::vector<std::vector<float>>& p) {
    const auto found = items_of_ids.find(ids);
    if (found == items_of_ids.end()) return;
    const int64_t T = static_cast<int64_t>(ids.size());
    for (size_t index : found->second) {
      AnswerItem& a = answer_items[index];
      if (!a.weight.empty()) continue;
      a.weight.resize(static_cast<size_t>(heads));
      a.copied.resize(static_cast<size_t>(heads));
      for (int64_t i = 0; i < heads; ++i) {
        a.weight[i] = at(p[i], T, T - 1, a.source);  // row T-1 of the head's [T,T]
        if (a.source >= 1) a.copied[i] = at(p[i], T, a.source, a.source - 1);
      }
    }
  };

  // The texts' patterns come a slice at a time (batched by length, head_patterns_of_texts),
  // so memory stays bounded, and are pooled in the texts' order.
  std::vector<std::vector<int32_t>> slice;
  for (size_t next = 0; next < o.texts.size();) {
    slice.clear();
    for (size_t bytes = 0; next < o.texts.size(); ++next) {
      const std::vector<int32_t>& ids = o.texts[next];
      if (ids.empty()) continue;
      MG_CHECK(static_cast<int64_t>(ids.size()) <= c.block_size, "score_head_roles: a text longer than block_size");
      bytes += pattern_bytes(model, static_cast<int64_t>(ids.size()));
      if (!slice.empty() && bytes > kSliceBytes) break;
      slice.push_back(ids);
    }
    const std::vector<std::vector<std::vector<float>>> patterns = head_patterns_of_texts(model, slice);
    for (size_t j = 0; j < slice.size(); ++j) {
      const std::vector<std::vector<float>>& p = patterns[j];  // index layer * H + head
      const int64_t T = static_cast<int64_t>(slice[j].size());
      ++report.text_count;
      for (int64_t i = 0; i < heads; ++i) {
        Sums& s = sums[i];
        add_previous_token(p[i], T, s.previous);
        add_current_token(p[i], T, s.current);
        add_first_position(p[i], T, s.first);
        add_offsets(p[i], T, s.offsets);
      }
      take_answer_rows(slice[j], p);
    }
  }
  // Induction: the repeated random sequences, each as long as block_size allows.
  const int64_t count = std::min<int64_t>(c.block_size / 2, c.vocab_size);
  std::vector<std::vector<int32_t>> induction_texts;
  for (int64_t seed = 1; count >= 2 && seed <= o.induction_texts; ++seed)
    induction_texts.push_back(repeated_random_ids(c.vocab_size, count, static_cast<uint64_t>(seed)));
  const std::vector<std::vector<std::vector<float>>> induction_patterns = head_patterns_of_texts(model, induction_texts);
  for (size_t j = 0; j < induction_texts.size(); ++j) {
    ++report.induction_texts;
    for (int64_t i = 0; i < heads; ++i) add_induction(induction_patterns[j][i], induction_texts[j], sums[i].induction);
  }
  // Prompts no text was: their own forwards, batched as the texts' were.
  std::vector<std::vector<int32_t>> unseen;
  std::set<std::vector<int32_t>> queued;
  for (const AnswerItem& a : answer_items)
    if (a.weight.empty() && queued.insert(a.ids).second) unseen.push_back(a.ids);
  for (size_t next = 0; next < unseen.size();) {
    size_t first = next;
    for (size_t bytes = 0; next < unseen.size(); ++next) {
      bytes += pattern_bytes(model, static_cast<int64_t>(unseen[next].size()));
      if (next > first && bytes > kSliceBytes) break;
    }
    const std::span<const std::vector<int32_t>> slice(unseen.data() + first, next - first);
    const std::vector<std::vector<std::vector<float>>> patterns = head_patterns_of_texts(model, slice);
    for (size_t j = 0; j < slice.size(); ++j) take_answer_rows(slice[j], patterns[j]);
  }
  // Answer-finding: the weight on the answer's source from the position that predicts it.
  for (AnswerItem& a : answer_items) {
    ++report.answer_items;
    for (int64_t i = 0; i < heads; ++i) {
      Sums& s = sums[i];
      s.answer.add(a.weight[i]);
      s.answer_by_kind.resize(kinds.size());
      s.answer_by_kind[a.kind].add(a.weight[i]);
      if (a.source >= 1) {  // how much of the symbol before it the source reads
        s.copy.add(a.copied[i]);
        s.copy_by_kind.resize(kinds.size());
        s.copy_by_kind[a.kind].add(a.copied[i]);
      }
    }
  }
  for (int64_t l = 0; l < L; ++l)
    for (int64_t h = 0; h < H; ++h) {
      const Sums& s = sums[l * H + h];
      HeadRoleScores r;
      r.layer = l;
      r.head = h;
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
        if (m && (!r.best_offset_score || *m > *r.best_offset_score)) {  // a tie keeps the smaller k
          r.best_offset = k;
          r.best_offset_score = m;
        }
      }
      r.role = role_name(r, o.thresholds);
      report.heads.push_back(std::move(r));
    }
  return report;
}

}  // namespace mg

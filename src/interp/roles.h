// inspect-heads --roles: what each head does, as scores in [0, 1] measured on attention
// patterns (the projected_weights [T,T], row t the query, column s the key), averaged over
// a fixed set of texts, and a role name where a score passes its threshold.
//
// The detectors work on given patterns (so a test can hand them constructed ones) and are
// pooled: each adds, per eligible query row, the weight it looks for to a sum, and the
// score is that sum over the rows of all texts divided by their number.
//   previous-token   w[t][t-1]                                   rows t >= 1
//   current-token    w[t][t]                                     rows t >= 1 (row 0 has no choice)
//   best offset k    w[t][t-k] for the k >= 0 with the largest mean, rows t >= max(k, 1)
//   first position   w[t][0] ("sink")                            rows t >= 1
//   induction        sum over earlier positions j < t holding the current symbol of
//                    w[t][j+1], the position just after the earlier copy: rows t whose
//                    symbol occurred before. TransformerLens's detector (head_detector.py,
//                    "induction" pattern, "mul" method) uses the same target positions but
//                    divides by all T rows, so on a text repeated twice a perfect induction
//                    head scores about 0.5 there; dividing by the eligible rows makes it 1.
//   answer-finding   at each probe prompt's last position (where the answer is predicted),
//                    w[T-1][source], source the prompt index the answer copies (the probe
//                    line's "source", else the rule answer_source states); also per question
//                    kind, since a head may find the answers of one kind and not another.
//   copy-forward     at each probe prompt's answer source s, w[s][s-1]: the head copies the
//                    symbol before the answer into the answer's position. That is the first
//                    half of an induction circuit: a later head, at a query holding that same
//                    symbol, then finds the answer by matching what was copied. Per kind too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/probe.h"
#include "data/vocab.h"
#include "nn/gpt.h"

namespace mg {

// A pooled mean: the sum of the detected weights and the number of rows that counted.
struct PooledScore {
  double sum = 0.0;
  int64_t rows = 0;
  void add(double weight) {
    sum += weight;
    ++rows;
  }
  std::optional<double> mean() const { return rows ? std::optional<double>(sum / static_cast<double>(rows)) : std::nullopt; }
};

// The pattern detectors; W is [T,T] row-major. Each adds to its PooledScore.
void add_previous_token(const std::vector<float>& w, int64_t T, PooledScore& score);
void add_current_token(const std::vector<float>& w, int64_t T, PooledScore& score);
void add_first_position(const std::vector<float>& w, int64_t T, PooledScore& score);
// by_offset[k] for k in [0, by_offset.size()): the weight on s = t - k.
void add_offsets(const std::vector<float>& w, int64_t T, std::vector<PooledScore>& by_offset);
void add_induction(const std::vector<float>& w, const std::vector<int32_t>& ids, PooledScore& score);

// The prompt index the answer is copied from: item.source when the probe line gives it,
// else the last position of the prompt holding the answer symbol; -1 when it holds none.
int64_t answer_source(const ProbeItem& item);

// The induction text: `count` distinct symbols drawn without replacement by Rng(seed) from
// the whole vocabulary (all V ids), then the same sequence again: length 2 * count.
std::vector<int32_t> repeated_random_ids(int64_t vocab_size, int64_t count, uint64_t seed);

// Thresholds for a role name, stated once: a head gets every name whose score reaches its
// threshold, in this order, joined by "+"; none: "mixed". "offset -k" counts only k >= 2
// (k = 0 and 1 are current- and previous-token). The answer-finding score names the role
// "writer", the copy-forward score "carrier": the words --explain uses for the heads of a
// chain, which it confirms by attribution, patching and composition (docs/glossary.md). A
// head whose answer-finding score misses the threshold over all kinds but reaches it on
// some is named for those kinds: "writer(what)"; carrier likewise.
struct RoleThresholds {
  double answer_finding = 0.3;  // 10x the uniform share of a 30-symbol prompt
  double copy_forward = 0.5;    // as previous-token, but measured at the answers' sources
  double induction = 0.4;
  double previous_token = 0.5;
  double offset = 0.5;
  double current_token = 0.5;
  double first_position = 0.5;
};

struct HeadRoleScores {
  int64_t layer = 0, head = 0;
  std::optional<double> previous_token, current_token, first_position, induction, answer_finding;
  std::vector<std::pair<std::string, double>> answer_finding_by_kind;  // (kind, score), probe file order
  std::optional<double> copy_forward;
  std::vector<std::pair<std::string, double>> copy_forward_by_kind;
  int64_t best_offset = 0;  // k: the head reads s = t - k most (shown as offset -k)
  std::optional<double> best_offset_score;
  std::string role;  // e.g. "previous-token", "writer+first-position", "carrier(colour,what)", "mixed"
  // Probe accuracy without the head minus with it (> 0: the head helps); set by the caller
  // that ran the ablations (interp/ablation.h), overall and per question kind.
  std::optional<double> accuracy_drop;
  std::vector<std::pair<std::string, double>> accuracy_drop_by_kind;
  // The head's mean direct logit attribution at each probe item's answer position (the
  // answer against the best other symbol; interp/attribution.h add_direct_logits), overall
  // and per question kind; set with the drops.
  std::optional<double> direct_logit;
  std::vector<std::pair<std::string, double>> direct_logit_by_kind;
};

struct RoleReport {
  std::string texts;         // which texts the pattern scores were averaged over
  int64_t text_count = 0, induction_texts = 0, answer_items = 0;
  RoleThresholds thresholds;
  std::vector<HeadRoleScores> heads;  // by layer then head
  std::optional<double> base_accuracy;  // probe accuracy of the intact model, with the drops
  std::vector<std::pair<std::string, double>> base_accuracy_by_kind;
  std::string ablation;                 // "zero" or "mean", with the drops
};

struct RoleOptions {
  std::vector<std::vector<int32_t>> texts;  // each at most block_size ids
  std::string texts_description;
  const std::vector<ProbeItem>* probes = nullptr;  // for answer-finding; may be null
  int64_t induction_texts = 4;                     // seeds 1..n of repeated_random_ids
  RoleThresholds thresholds;
};

RoleReport score_head_roles(const Gpt& model, const Vocab& vocab, const RoleOptions& options);

// The role names of one head's scores under THRESHOLDS.
std::string role_name(const HeadRoleScores& s, const RoleThresholds& thresholds);

// Texts for --text-file: non-overlapping windows of block_size symbols (the last, shorter
// one too), at most max_windows of them.
std::vector<std::vector<int32_t>> text_windows(const std::vector<int32_t>& ids, int64_t block_size,
                                               int64_t max_windows);

// Probe prompts as id sequences, cropped to their last block_size symbols; prompts with a
// symbol outside the vocabulary are skipped.
std::vector<std::vector<int32_t>> probe_texts(const Vocab& vocab, const std::vector<ProbeItem>& probes,
                                              int64_t block_size);

}  // namespace mg

// Scoring without training: the deterministic eval windows (docs/cli.md, "eval"), the sampled
// validation loss the training loop reports, and the probe set's arg-max accuracy.
#include "inference/evaluate.h"

#include <algorithm>
#include <optional>

#include "data/batch_sampler.h"
#include "core/error.h"

namespace mg {
namespace {
constexpr int64_t kWindowsPerForward = 32;
}

EvalResult evaluate_windows(const Gpt& model, std::span<const int32_t> ids) {
  NoGradGuard no_grad;
  const int64_t T = model.config().block_size, n = static_cast<int64_t>(ids.size());
  const int64_t windows = n >= T + 1 ? (n - 1) / T : 0;  // k with kT + T + 1 <= n
  if (windows == 0)
    throw InputError("text has " + std::to_string(n) + " symbols; eval needs at least block_size + 1 = " +
                     std::to_string(T + 1));
  double total = 0.0;
  std::vector<int32_t> inputs, targets;
  for (int64_t first = 0; first < windows; first += kWindowsPerForward) {
    const int64_t B = std::min(kWindowsPerForward, windows - first);
    inputs.assign(ids.begin() + first * T, ids.begin() + (first + B) * T);
    targets.assign(ids.begin() + first * T + 1, ids.begin() + (first + B) * T + 1);
    total += static_cast<double>(model.loss(inputs, targets, B, T).value()[0]) * static_cast<double>(B * T);
  }
  const double loss = total / static_cast<double>(windows * T);
  require_finite(loss, "the mean loss");
  return {loss, windows * T};
}

namespace {

// Sum of the losses of this share's batches among `batches` draws of the sampler.
double sampled_loss_share(const Gpt& model, BatchSampler& sampler, int64_t batches, EvalShare share) {
  NoGradGuard no_grad;
  const int64_t B = sampler.batch_size(), T = sampler.block_size();
  std::vector<int32_t> inputs(static_cast<size_t>(B * T)), targets(inputs.size());
  double total = 0.0;
  for (int64_t i = 0; i < batches; ++i) {
    sampler.next(inputs, targets);  // every share draws every batch: the sampler's sequence is the same
    if (i % share.parts == share.part) total += model.loss(inputs, targets, B, T).value()[0];
  }
  return total;
}

}  // namespace

// The sampler shares the split's storage: no copy of the validation ids per evaluation.
double sampled_loss(const Gpt& model, const TokenIds& split, int64_t batch_size, int64_t batches, uint64_t seed,
                    RowStart row_start) {
  BatchSampler sampler(split, model.config().block_size, batch_size, seed, row_start);
  return sampled_loss_share(model, sampler, batches, EvalShare{}) / static_cast<double>(batches);
}

double sampled_loss_sum(const Gpt& model, const TokenIds& split, int64_t batch_size, int64_t batches, uint64_t seed,
                        EvalShare share, RowStart row_start) {
  BatchSampler sampler(split, model.config().block_size, batch_size, seed, row_start);
  return sampled_loss_share(model, sampler, batches, share);
}

ProbeScore score_probe(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes, EvalShare share,
                       std::span<const HeadAblation> ablations) {
  ProbeScore score;
  ProbeKinds kinds = probe_kinds(probes);
  score.kinds = std::move(kinds.names);
  const std::vector<size_t>& kind_of = kinds.of_item;  // index into score.kinds
  score.items = static_cast<int64_t>(probes.size());
  score.kind_correct.assign(score.kinds.size(), 0);
  score.kind_items.assign(score.kinds.size(), 0);
  for (size_t k : kind_of) ++score.kind_items[k];
  score.alone_correct.assign(score.kinds.size(), 0);
  score.alone_items.assign(score.kinds.size(), 0);
  score.distracted_correct.assign(score.kinds.size(), 0);
  score.distracted_items.assign(score.kinds.size(), 0);
  score.cues.assign(score.kinds.size(), "");
  for (size_t i = 0; i < probes.size(); ++i) {
    if (score.cues[kind_of[i]].empty()) score.cues[kind_of[i]] = probes[i].cue;
    if (probes[i].distractors == 0) ++score.alone_items[kind_of[i]];
    if (probes[i].distractors > 0) ++score.distracted_items[kind_of[i]];
  }

  NoGradGuard no_grad;
  const int64_t T_max = model.config().block_size, V = model.config().vocab_size;
  // Prompts are left-aligned and padded at the end: with a causal mask the padding
  // never reaches the position whose prediction is read.
  for (size_t first = 0; first < probes.size(); first += kWindowsPerForward) {
    if (static_cast<int64_t>(first / kWindowsPerForward) % share.parts != share.part) continue;
    const size_t count = std::min<size_t>(kWindowsPerForward, probes.size() - first);
    std::vector<std::vector<int32_t>> prompts;
    std::vector<int32_t> answers;
    int64_t T = 1;
    for (size_t i = first; i < first + count; ++i) {
      std::optional<std::vector<int32_t>> ids = vocab.find_all(probes[i].prompt);
      auto answer = vocab.find(probes[i].answer);
      if (!ids || !answer || ids->empty()) {
        ids.emplace(1, 0);
        answers.push_back(-1);  // cannot be right
      } else {
        answers.push_back(*answer);
      }
      if (static_cast<int64_t>(ids->size()) > T_max) ids->erase(ids->begin(), ids->end() - T_max);
      T = std::max<int64_t>(T, static_cast<int64_t>(ids->size()));
      prompts.push_back(std::move(*ids));
    }
    std::vector<int32_t> batch(count * static_cast<size_t>(T), 0);
    for (size_t i = 0; i < count; ++i) std::copy(prompts[i].begin(), prompts[i].end(), batch.begin() + i * T);
    ForwardHooks hooks = ablation_hooks(ablations);
    Tensor logits =
        model.forward(batch, static_cast<int64_t>(count), T, {.hooks = ablations.empty() ? nullptr : &hooks}).value();  // [count,T,V]
    for (size_t i = 0; i < count; ++i) {
      const float* row = logits.data() + (i * T + prompts[i].size() - 1) * V;
      // A NaN among the logits would make the arg-max meaningless: refused, not scored.
      for (int64_t v = 0; v < V; ++v) require_finite(row[v], "a probe prompt's next-symbol logit");
      const int64_t best = std::max_element(row, row + V) - row;  // first maximum: lowest id on a tie
      if (best == answers[i]) {
        ++score.correct;
        ++score.kind_correct[kind_of[first + i]];
        const int64_t distractors = probes[first + i].distractors;
        if (distractors == 0) ++score.alone_correct[kind_of[first + i]];
        if (distractors > 0) ++score.distracted_correct[kind_of[first + i]];
      }
    }
  }
  return score;
}

std::vector<TagAccuracy> tag_accuracies(const ProbeScore& score) {
  std::vector<TagAccuracy> out;
  for (size_t k = 0; k < score.kinds.size(); ++k)
    if (score.tagged(k))
      out.push_back({score.kinds[k], score.alone_accuracy(k), score.distracted_accuracy(k), score.alone_items[k],
                     score.distracted_items[k]});
  return out;
}

}  // namespace mg

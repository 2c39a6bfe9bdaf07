// Scoring a model without training it: the deterministic eval figure (docs/cli.md), the sampled
// validation loss the training loop reports, and the probe set's accuracy.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "data/batch_sampler.h"
#include "data/probe.h"
#include "data/token_ids.h"
#include "data/vocab.h"
#include "nn/gpt.h"

namespace mg {

struct EvalResult {
  double loss = 0.0;        // mean cross-entropy, nats per symbol
  int64_t predictions = 0;  // how many next symbols were scored
};

// docs/cli.md, "eval": windows start at 0, T, 2T, ...; inputs s[kT, kT+T), targets
// s[kT+1, kT+T+1) for every k with kT+T+1 <= n. InputError when no window fits.
EvalResult evaluate_windows(const Gpt& model, std::span<const int32_t> ids);

// Mean loss over `batches` random batches of the split, drawn by a sampler seeded with
// `seed` so every evaluation of a run scores the same windows; rows start as ROW_START
// says (the training sampler's choice, so the figure compares with the training loss).
double sampled_loss(const Gpt& model, const TokenIds& split, int64_t batch_size, int64_t batches, uint64_t seed,
                    RowStart row_start = RowStart::anywhere());

// The probe's right answers overall and per question kind: the prompts whose arg-max next
// symbol is the answer (prompts cropped to their last block_size symbols). Items with a
// symbol outside the vocabulary count wrong.
struct ProbeScore {
  int64_t correct = 0, items = 0;
  std::vector<std::string> kinds;                    // in order of first appearance in the probe set
  std::vector<int64_t> kind_correct, kind_items;     // [kinds.size()]
  double accuracy() const { return items ? static_cast<double>(correct) / static_cast<double>(items) : 0.0; }
  double kind_accuracy(size_t k) const {
    return kind_items[k] ? static_cast<double>(kind_correct[k]) / static_cast<double>(kind_items[k]) : 0.0;
  }
  // Per kind, the items tagged with "distractors" (data/README.md), apart: tag 0, the
  // question's cue alone finds the fact; tag 1 or more, only binding does. A model that
  // found a one-symbol cue, not who holds what, scores well on the first and near chance
  // on the second. Untagged items count in neither; a kind with no tagged item has none.
  std::vector<int64_t> alone_correct, alone_items, distracted_correct, distracted_items;  // [kinds.size()]
  std::vector<std::string> cues;  // [kinds.size()] the kind's first "cue" in the set, or empty
  bool tagged(size_t k) const { return alone_items[k] + distracted_items[k] > 0; }
  double alone_accuracy(size_t k) const { return share(alone_correct[k], alone_items[k]); }
  double distracted_accuracy(size_t k) const { return share(distracted_correct[k], distracted_items[k]); }

 private:
  static double share(int64_t right, int64_t of) {
    return of ? static_cast<double>(right) / static_cast<double>(of) : 0.0;
  }
};

// A kind's accuracy on its tagged items, apart (ProbeScore's alone and distracted).
struct TagAccuracy {
  std::string kind;
  double no_distractor = 0.0, distractors = 0.0;
  int64_t no_distractor_items = 0, distractor_items = 0;
};
std::vector<TagAccuracy> tag_accuracies(const ProbeScore& score);  // the tagged kinds, in order

// One process's share of the two evaluations above, for data-parallel training: of
// `parts` processes, process `part` scores batches (of sampled_loss) and chunks of
// probes (of score_probe, in its groups of one forward pass) i with i % parts == part.
// Every share draws all the batches, so the shares together score exactly the single
// process's windows, each batch and chunk computed alike; summing the shares' results
// over the processes and dividing by `batches` or probes.size() gives the same figures.
struct EvalShare {
  int part = 0, parts = 1;
};
double sampled_loss_sum(const Gpt& model, const TokenIds& split, int64_t batch_size, int64_t batches, uint64_t seed,
                        EvalShare share, RowStart row_start = RowStart::anywhere());

// The share's ProbeScore: kinds and item counts are the whole set's, the right answers
// only the share's (the shares' kind_correct and correct add up to the single process's).
// ABLATIONS replace heads' outputs in every forward (eval --ablate L.H, inspect-heads
// --roles: the causal evidence of what a head does).
ProbeScore score_probe(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes,
                       EvalShare share = EvalShare{}, std::span<const HeadAblation> ablations = {});

}  // namespace mg

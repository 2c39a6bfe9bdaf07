// Scoring a model without training it: SPEC's deterministic eval figure, the sampled
// validation loss the training loop reports, and the probe set's accuracy.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "data/probe.h"
#include "data/token_ids.h"
#include "data/vocab.h"
#include "nn/gpt.h"

namespace mg {

struct EvalResult {
  double loss = 0.0;        // mean cross-entropy, nats per symbol
  int64_t predictions = 0;  // how many next symbols were scored
};

// SPEC section 4: windows start at 0, T, 2T, ...; inputs s[kT, kT+T), targets
// s[kT+1, kT+T+1) for every k with kT+T+1 <= n. InputError when no window fits.
EvalResult evaluate_windows(Gpt& model, std::span<const int32_t> ids);

// Mean loss over `batches` random batches of the split, drawn by a sampler seeded with
// `seed` so every evaluation of a run scores the same windows.
double sampled_loss(Gpt& model, std::span<const int32_t> split, int64_t batch_size, int64_t batches, uint64_t seed);
double sampled_loss(Gpt& model, const TokenIds& split, int64_t batch_size, int64_t batches, uint64_t seed);

// Share of probe prompts whose arg-max next symbol is the answer (prompts cropped to
// their last block_size symbols). Items with a symbol outside the vocabulary count wrong.
double probe_accuracy(Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes);

// One process's share of the two evaluations above, for data-parallel training: of
// `parts` processes, process `part` scores batches (of sampled_loss) and chunks of
// probes (of probe_accuracy, in its groups of one forward pass) i with i % parts == part.
// Every share draws all the batches, so the shares together score exactly the single
// process's windows, each batch and chunk computed alike; summing the shares' results
// over the processes and dividing by `batches` or probes.size() gives the same figures.
struct EvalShare {
  int part = 0, parts = 1;
};
double sampled_loss_sum(Gpt& model, const TokenIds& split, int64_t batch_size, int64_t batches, uint64_t seed,
                        EvalShare share);
int64_t probe_correct_count(Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes, EvalShare share);

}  // namespace mg

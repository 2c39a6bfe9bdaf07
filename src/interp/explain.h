// The chain a trained model answers each question kind with, found for the learner from
// the probe (inspect-heads --explain). Three techniques, each with its own mode, give the
// evidence; this file only reads their results and picks:
// - the writer: the head with the largest mean direct logit attribution at the answer
//   (--attribution --probe), with the share of the logit difference its clean output
//   restores when the answer's fact is swapped (--patch --probe --swap value);
// - the carrier: among the heads of earlier layers whose clean output restores at least
//   kCarrierRestores when the fact's key is swapped (--patch --probe --swap key), the one
//   whose output the writer's queries or keys read most (--composition: the larger of its
//   Q- and K-composition with the writer), provided that score is above its random baseline;
// - the MLPs' part of the attribution (every layer's MLP added up).
// A kind whose probe accuracy is under kLearnedAccuracy is "not learned"; its candidates
// are still found, so the learner sees which heads came closest. A kind whose items carry
// distractor tags (data/README.md) is learned only if its items with distractors, where
// only binding the name (or the object) finds the fact, also reach kLearnedAccuracy; when
// only those without reach it, it was "learned by a shortcut": the cue alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/probe.h"
#include "data/vocab.h"
#include "inference/evaluate.h"
#include "interp/attribution.h"
#include "interp/composition.h"
#include "interp/patching.h"
#include "nn/gpt.h"

namespace mg {

constexpr double kLearnedAccuracy = 0.9;
constexpr double kCarrierRestores = 0.5;

struct ChainHead {
  int64_t layer = 0, head = 0;
};

struct KindChain {
  std::string kind;
  int64_t items = 0;        // the kind's probe items
  double accuracy = 0.0;    // share answered right (score_probe)
  bool learned = false;     // accuracy >= kLearnedAccuracy, and so are the items with distractors
  bool shortcut = false;    // items without distractors >= kLearnedAccuracy, those with them under
  bool tagged = false;      // the kind's items carry distractor tags
  double no_distractor_accuracy = 0.0, distractor_accuracy = 0.0;  // when tagged
  std::string cue;          // what a distractor shares (the probe's "cue"), when tagged
  double difference = 0.0;  // mean logit difference, answer against the best other (attribution)
  std::optional<ChainHead> writer;  // none only when the model has no head
  double writer_attribution = 0.0, writer_restores = 0.0;
  std::optional<ChainHead> carrier;  // none when no earlier head qualifies
  double carrier_restores = 0.0;
  char composition = 'K';            // 'Q' or 'K': which of the writer's inputs reads the carrier
  double composition_score = 0.0, baseline = 0.0;
  double mlp_attribution = 0.0;      // sum of the MLPs' mean parts of the difference
  // How much of the behaviour the chain explains: the faithfulness (interp/circuit_edges.h)
  // of the circuit of every edge between the embeddings, the writer, the carrier, the MLPs
  // and the logits, everything else resample-ablated, on the kind's pairs with the answer's
  // fact swapped (value) and with its key swapped (key). None without a model (the picking
  // alone) or without pairs.
  std::optional<double> chain_faithfulness, chain_key_faithfulness;
  // The earlier heads that restore at least kCarrierRestores with the key swapped, best
  // first, with their scores against the writer: what the carrier was chosen from.
  struct Candidate {
    ChainHead head;
    double restores = 0.0, q = 0.0, k = 0.0;
  };
  std::vector<Candidate> candidates;
};

struct Explanation {
  int64_t n_layer = 0, n_head = 0;
  std::vector<KindChain> kinds;  // in the probe's order of first appearance
  int64_t skipped_attribution = 0, skipped_value = 0, skipped_key = 0;
};

// Runs the four techniques on PROBES, picks each kind's chain and measures its faithfulness.
Explanation explain_chains(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes);

// The picking alone, from results already computed (the equality test calls the modes'
// own functions and hands their results here).
Explanation explain_chains(const ProbeScore& score, const ProbeAttribution& attribution, const ProbePatching& value,
                           const ProbePatching& key, const CompositionScores& composition);

}  // namespace mg

// The training run's evaluation (train/evaluation.h).
#include "train/evaluation.h"

#include <cmath>

namespace mg {
namespace {

// The validation batches are drawn from this seed at every evaluation, so successive
// val losses of a run score the same windows and are comparable.
constexpr uint64_t kValidationSeedOffset = 0x5eed0fe7a1ULL;

}  // namespace

EvaluationFigures evaluate_training(const Gpt& model, const Corpus& corpus, const std::vector<ProbeItem>& probes,
                                    const TrainConfig& tc, RowStart row_start, Communicator& comm) {
  const uint64_t val_seed = tc.seed + kValidationSeedOffset;
  EvaluationFigures figures;
  double& val = figures.val_loss;
  ProbeScore& probe_score = figures.probe;
  if (comm.size() <= 1) {
    val = sampled_loss(model, corpus.val, tc.batch_size, tc.eval_batches, val_seed, row_start);
    if (!probes.empty()) probe_score = score_probe(model, corpus.vocab, probes);
  } else {  // each rank scores a share of the batches and probes; the sums add up
    const EvalShare eval_share{comm.rank(), comm.size()};
    if (!probes.empty()) probe_score = score_probe(model, corpus.vocab, probes, eval_share);
    // [val loss sum, right answers, right answers per kind, then per kind with no
    // distractor and with distractors]
    std::vector<double> sums{sampled_loss_sum(model, corpus.val, tc.batch_size, tc.eval_batches, val_seed,
                                              eval_share, row_start),
                             static_cast<double>(probe_score.correct)};
    for (const auto* counts : {&probe_score.kind_correct, &probe_score.alone_correct, &probe_score.distracted_correct})
      for (int64_t c : *counts) sums.push_back(static_cast<double>(c));
    comm.allreduce_sum(sums.data(), static_cast<int64_t>(sums.size()));
    val = sums[0] / static_cast<double>(tc.eval_batches);
    probe_score.correct = std::llround(sums[1]);
    size_t at = 2;
    for (auto* counts : {&probe_score.kind_correct, &probe_score.alone_correct, &probe_score.distracted_correct})
      for (int64_t& c : *counts) c = std::llround(sums[at++]);
  }
  return figures;
}

}  // namespace mg

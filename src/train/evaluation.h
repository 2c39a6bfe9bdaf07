// The training run's evaluation (train/train.h): the validation loss on the same seeded
// windows at every evaluation, and the probe accuracy per kind. With several ranks each
// scores a share of the batches and probe items, and one allreduce adds the sums up.
#pragma once

#include <vector>

#include "data/batch_sampler.h"
#include "data/corpus.h"
#include "data/probe.h"
#include "distributed/communicator.h"
#include "inference/evaluate.h"
#include "io/config.h"
#include "nn/gpt.h"

namespace mg {

struct EvaluationFigures {
  double val_loss = 0.0;
  ProbeScore probe;  // empty without a probe set
};

// MODEL's figures on CORPUS's validation split (train.eval_batches batches of
// train.batch_size windows, seeded by train.seed) and on PROBES, over COMM's ranks.
EvaluationFigures evaluate_training(const Gpt& model, const Corpus& corpus, const std::vector<ProbeItem>& probes,
                                    const TrainConfig& tc, RowStart row_start, Communicator& comm);

}  // namespace mg

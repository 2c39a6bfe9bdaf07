// The pieces of data-parallel training that train/train.cpp adds when its communicator
// holds more than one rank. The global batch [B,T] is drawn whole, from the same seeded
// sampler, by every rank; rank r trains on the contiguous rows [first, first + rows) of
// it, so the ranks' rows together are exactly the single process's batch. Each rank's
// loss is the mean over its own rows*T predictions, so the global mean is
//   L = sum_r (rows_r / B) * L_r,   and likewise dL/dw = sum_r (rows_r / B) * dL_r/dw,
// which one allreduce of the weighted gradients (all tensors fused in one buffer)
// computes; every rank then clips and applies the same AdamW update to the same weights.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/corpus.h"
#include "distributed/communicator.h"
#include "io/config.h"
#include "nn/gpt.h"
#include "optim/adamw.h"

namespace mg {

// What every rank of a job must share for its gradients to belong to the same run, as
// (key, value) in a fixed order: every resolved config key but those that may differ
// per rank without changing the arithmetic's meaning (train.out_dir, train.threads,
// train.backend: only rank 0 writes, and a backend's rounding is averaged like any other)
// and the corpus paths (the same corpus may sit at another path on another machine);
// then "vocabulary" (its size and SHA-256), "corpus" (the splits' sizes and the SHA-256
// of 4,096 ids sampled evenly from each: a different corpus, not a different mount point)
// and "model parameters" (the parameters' count and the SHA-256 of their names and shapes).
using RankSettings = std::vector<std::pair<std::string, std::string>>;
RankSettings rank_settings(const Config& config, const Corpus& corpus, const Parameters& params);

// Before the first collective that depends on them: every rank compares the SHA-256 of its
// settings with rank 0's (one broadcast, one allreduce); when any differs, rank 0's settings
// are broadcast, each rank finds its first differing key, and every rank throws the same
// JobWideInputError naming the key, rank 0's value and the lowest differing rank's, e.g.
//   "ranks disagree before the first step: train.seed is 1 on rank 0 but 7 on rank 1; ..."
// so the job ends with exit 2 and no mismatched buffer reaches an allreduce.
void check_ranks_agree(Communicator& communicator, const RankSettings& settings);

struct RowShare {
  int64_t first = 0, rows = 0;  // rows [first, first + rows) of the global batch
};

// Rank r of n takes rows [floor(rB/n), floor((r+1)B/n)): shares differ by at most one
// row. InputError when B < n (a rank with no rows would have no loss to average).
RowShare batch_rows(int64_t batch_size, int rank, int size);

// The per-step exchange: packs (rows/B) * every parameter's gradient, the weighted loss
// and this rank's stop flag into one float buffer, sums it over the ranks with one
// allreduce, and unpacks the sums back into the gradients.
class GradientExchange {
 public:
  GradientExchange(Communicator& communicator, Parameters& params, double weight);

  struct Result {
    double loss = 0.0;           // the global batch's mean loss
    bool stop_requested = false; // some rank saw Ctrl-C: every rank stops after this step
  };
  Result exchange(double local_loss, bool local_stop);

  double allreduce_seconds() const { return allreduce_s_; }  // inside the allreduce, waits included

 private:
  Communicator& communicator_;
  Parameters& params_;
  float weight_;
  std::vector<float> buffer_;  // [every gradient, in params.all() order | loss | stop]
  double allreduce_s_ = 0.0;
};

// Rank 0's training state, on every rank: the weights and AdamW moments the optimizer's
// states hold (one fused broadcast), the step, the sampler's and the dropout generator's
// states and the best validation loss so far. Rank 0 built them fresh or from the
// checkpoint it resumed.
struct SharedState {
  int64_t step = 0;
  std::string sampler_state, dropout_rng_state;
  std::optional<double> best_val;
};
void broadcast_training_state(Communicator& communicator, AdamW& optimizer, SharedState& state);

}  // namespace mg

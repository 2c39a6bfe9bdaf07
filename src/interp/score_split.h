// Why a head attends where it does, for one text and one query position (inspect-heads
// --score-split L.H): the head's attention score on each key, split into query-side
// sources times key-side sources. The stream entering block L at any position is the sum
// of what earlier components wrote: the embeddings (token, and learned position rows), each
// earlier head's output through its columns of Wo, each earlier MLP. ln1 is LayerNorm, not
// linear; as direct logit attribution does (interp/attribution.h), its scale sigma_t =
// sqrt(var(x_t) + eps) is taken from the whole stream at each position and frozen, so that
//   ln1(x_t) = sum over sources c of gamma (c_t - mean(c_t)) / sigma_t  +  beta,
// ln1's bias beta a source of its own. The query and the key are then sums of parts,
//   q_P = sum_c R(P) W_Q ln1-part_c(P),   k_j = sum_c' R(j) W_K ln1-part_c'(j),
// (R the RoPE rotation at the position, for RoPE models; the identity otherwise), and
//   score(P, j) = q_P . k_j / sqrt(d) = sum over (c, c') of part_c(P) . part_c'(j) / sqrt(d)
// exactly (to float rounding of the recorded activations). The position's own part under
// RoPE is no additive source: it is the rotation, reported as the score minus the same sum
// with R left out (what the relative offset P - j adds or takes away). B is 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/vocab.h"
#include "nn/gpt.h"

namespace mg {

struct ScoreSplitKey {
  int64_t position = 0;           // j, 0..P
  double score = 0.0;             // q_P . k_j / sqrt(d), from the unsplit forward's stream
  double weight = 0.0;            // the forward's own attention weight (hook_pattern)
  std::vector<double> parts;      // [sources * sources], query source major: parts[cq * S + ck]
  double parts_sum = 0.0;         // the parts' sum, to hold against score
  double unrotated = 0.0;         // the parts' sum with RoPE's rotation left out (RoPE models)
};

struct ScoreSplit {
  std::vector<std::string> tokens;   // [T]
  int64_t layer = 0, head = 0, position = 0;
  bool rope = false;
  std::vector<std::string> sources;  // "embed", "pos_embed", "L0.H1", "L0.mlp", ..., "ln1.bias"
  std::vector<ScoreSplitKey> keys;   // every visible key, 0..P
  double largest_gap = 0.0;          // max over keys of |parts_sum - score|
};

// InputError: the text (WHAT names it) empty, too long or with an unknown symbol; the
// layer, head or position out of range.
ScoreSplit split_scores(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what,
                        int64_t layer, int64_t head, std::optional<int64_t> position);

}  // namespace mg

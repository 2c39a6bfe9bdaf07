// Direct logit attribution (inspect-heads --attribution): the final residual stream at a
// position written as the sum of its parts, and each part's share of the answer's logit
// and of the logit difference against a competitor. B is 1: one text.
//
// The stream entering ln_f at P is x = tok_emb + pos_emb (learned positions) + sum over
// layers of (each head's output through its slice of Wo) + (each MLP's output, its bias
// b2 included). This model's attention has no out-projection bias and its head no bias,
// so those parts do not exist. ln_f is LayerNorm, not linear; as TransformerLens does, its
// scale sigma = sqrt(var(x) + eps) is taken from the whole stream and frozen, so that
//   logit_a = sum_j W_U[a,j] (gamma_j (x_j - mean(x)) / sigma + beta_j)
//           = sum over parts c of  sum_j W_U[a,j] gamma_j (c_j - mean(c)) / sigma
//             + sum_j W_U[a,j] beta_j,
// the last term (ln_f's bias) a part of its own. The parts then sum to the logit exactly
// (to float rounding), and each part's number is what it adds to the logit with every
// other part, and sigma, held as they are.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data/probe.h"
#include "data/vocab.h"
#include "interp/roles.h"
#include "nn/gpt.h"

namespace mg {

struct AttributionPart {
  std::string name;  // "embed", "pos_embed", "L1.H0" (layer 1, head 0), "L1.mlp", "ln_f.bias"
  int64_t layer = -1, head = -1;  // -1 where the part has none
  double logit = 0.0;       // its contribution to the answer's logit
  double difference = 0.0;  // its contribution to logit(answer) - logit(against)
};

struct Attribution {
  std::vector<std::string> tokens;  // [T] the text's symbols
  int64_t position = 0;             // P
  int32_t answer = 0, against = 0;
  std::string answer_symbol, against_symbol;
  double logit = 0.0, against_logit = 0.0;  // the forward's own logits at P
  double scale = 0.0;                       // ln_f's frozen sigma at P (ln_final.hook_scale)
  std::vector<AttributionPart> parts;       // in the forward's order: embeddings, then by layer, ln_f.bias last
  double parts_logit = 0.0, parts_difference = 0.0;  // the parts' sums, to hold against the forward's
};

struct AttributionQuery {
  std::optional<int64_t> position;  // default: the last
  std::optional<int32_t> answer;    // default: the model's choice at P
  std::optional<int32_t> against;   // default: the best symbol other than the answer
};

// Records in HOOKS the points whose values sum to the stream entering block LAYERS (ln_f's
// input when LAYERS is n_layer): hook_embed, hook_pos_embed (learned positions), each earlier
// block's hook_z and hook_mlp_out. The parts of attribution and of the score split.
void record_stream_parts(ForwardHooks& hooks, const ModelConfig& config, int64_t layers);

// Head H's output at position T through its columns h*d .. h*d+d-1 of WO [D,D], in double:
// [D], from Z, the block's hook_z [1,H,T_all,d].
std::vector<double> head_output_row(const Tensor& wo, const float* z, int64_t h, int64_t t, int64_t T_all, int64_t d);

// InputError: the text (WHAT names it) empty, too long or with an unknown symbol; the
// position out of range; the answer equal to its competitor.
Attribution attribute_logits(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what,
                             const AttributionQuery& query);

// The same on ids (the probe mode).
Attribution attribute_logits(const Gpt& model, const Vocab& vocab, const std::vector<int32_t>& ids,
                             const AttributionQuery& query);

// The mean of each part's difference over a probe's items, per question kind, each item
// at its answer position (the prompt's last symbol, cropped to block_size) with its answer
// against the model's best other symbol. Items with a symbol outside the vocabulary are
// skipped (counted).
struct KindAttribution {
  std::string kind;
  int64_t items = 0;
  double difference = 0.0;           // mean logit(answer) - logit(best other)
  std::vector<double> parts;         // [parts] mean contribution to that difference
};
struct ProbeAttribution {
  std::vector<std::string> part_names;
  std::vector<std::pair<int64_t, int64_t>> part_heads;  // (layer, head) of each part, (-1, -1) where none
  std::vector<KindAttribution> kinds;  // in order of first appearance
  int64_t skipped = 0;
  double largest_gap = 0.0;  // max over items of |parts' sum - the forward's difference|
};
ProbeAttribution attribute_probe(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes);

// Fills every head's direct_logit in REPORT from ATTRIBUTION: the head's mean part of the
// answer-against-best-other difference, per kind and over all the attributed items (each
// kind weighted by its items). --roles' direct-logit column.
void add_direct_logits(const ProbeAttribution& attribution, RoleReport& report);

}  // namespace mg

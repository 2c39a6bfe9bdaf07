// The interp layer (src/interp/): the interpretability techniques, one file each, named for
// the technique: patterns (this file: every head's weights on a text), roles, ablation,
// attribution, patching, composition, qk_ov, compare, trace, logit_lens, and logit_choice
// (the answer and competitor they share). A technique computes and returns structs: no
// function here returns formatted text and no file includes nlohmann/json; its table, JSON,
// SVG and page are the report layer's.
// It may include inference and the layers below it; never train (only cli joins training
// to interpretation), report or cli. scripts/check_layers.py refuses each.
// A new technique X: interp/X.h and X.cpp (its struct and the function computing it),
// report/X_format.h and .cpp (its table and JSON) and, if drawn, report/X_svg.h and .cpp;
// then one row in inspect-heads' mode table (cli/inspect_modes.cpp) and its mode function.
//
// What each attention head reads (inspect-heads, docs/cli.md): for one text (batch 1),
// every head's projected_weights [T,T], the softmax of its projected, scaled, masked Q.K
// scores, with a few numbers that summarise it, and the slices of Wq, Wk, Wv, Wo that
// belong to it. It only computes: report/patterns_format.h writes the tables and JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "data/vocab.h"
#include "nn/gpt.h"

namespace mg {

// Which heads to report; an unset field means all of them.
struct HeadSelection {
  std::optional<int64_t> layer, head;
  bool contains(int64_t l, int64_t h) const { return (!layer || *layer == l) && (!head || *head == h); }
};

// Numbers that describe one head's [T,T] weights w (row t = query, column s = key).
struct HeadSummary {
  // Mean over all T rows of the row entropy -sum_s w[t][s] ln w[t][s], in nats. Row 0
  // can only read itself (entropy 0); a uniform row t reaches ln(t + 1).
  double mean_entropy = 0.0;
  // The offset o = s - t with the largest sum_t w[t][t+o] (-1: the previous symbol,
  // 0: itself); a tie goes to the offset nearest 0. top_offset_share is that sum / T,
  // the share of all the head's weight that lands on this offset.
  int64_t top_offset = 0;
  double top_offset_share = 0.0;
  // Mean over query rows t >= 1 of w[t][0] (row 0 puts all on position 0 by force);
  // absent when T = 1.
  std::optional<double> first_share;
  // Importance: the text's loss with this head's output zeroed before the out projection,
  // minus the normal loss (nats per symbol; > 0: the head helps). The loss is the mean
  // cross-entropy of the T - 1 next-symbol predictions (inputs text[0..T-2], targets
  // text[1..T-1]). Absent when T = 1: a one-symbol text predicts nothing.
  std::optional<double> importance;
  std::optional<double> ablated_loss;
};

struct HeadInspection {
  int64_t layer = 0, head = 0;
  std::vector<float> projected_weights;  // [T,T] row-major; rows sum to 1, 0 for s > t
  HeadSummary summary;
  float weight(int64_t t, int64_t s, int64_t T) const { return projected_weights[static_cast<size_t>(t * T + s)]; }
};

struct Inspection {
  std::u32string text;
  std::vector<std::string> tokens;  // [T] the text's symbols as UTF-8
  std::vector<int32_t> ids;         // [T]
  int64_t T = 0, n_layer = 0, n_head = 0;
  std::optional<double> loss;          // the normal loss (see HeadSummary::importance); absent when T = 1
  std::vector<HeadInspection> heads;   // the selected heads, by layer then head
};

struct InspectOptions {
  HeadSelection selection;
  bool importance = true;  // false skips the ablation forwards (one per selected head)
};

// ArgumentError "OPTION VALUE is out of range: OF_WHAT, valid 0..COUNT-1" unless 0 <= VALUE
// < COUNT (OPTION "position": "position 9 is out of range: the text has 4 symbols, valid
// 0..3", which cli/ shows with the option's flag).
void check_index(const std::string& option, int64_t value, int64_t count, const std::string& of_what);

// TEXT's ids for one forward pass of MODEL (batch 1); WHAT names it in errors, as an
// ArgumentError's argument (the caller's option, or the job's name for the text).
// InputError: an empty text; a text longer than block_size (naming the limit); a symbol
// outside the vocabulary (naming it and its position).
std::vector<int32_t> encode_for_model(const Gpt& model, const Vocab& vocab, std::u32string_view text,
                                      const std::string& what);

// Encodes TEXT (WHAT names it in errors, as encode_for_model says) and runs the model on it.
// InputError: an empty text; a text longer than block_size (naming the limit); a symbol
// outside the vocabulary (naming it and its position). Selected layer/head numbers must
// be in range (MG_CHECK: the caller validates user input).
Inspection inspect_heads(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what,
                         const InspectOptions& options = {});

// Every head's [T,T] projected_weights on IDS (batch 1, at most block_size ids), index
// layer * H + head: one forward pass that captures each layer's [1,H,T,T].
std::vector<std::vector<float>> head_patterns(const Gpt& model, const std::vector<int32_t>& ids);

// Bytes of every head's [T,T] pattern of one text of T symbols.
size_t pattern_bytes(const Gpt& model, int64_t T);

// head_patterns of each of TEXTS (none empty, each at most block_size ids), in their order:
// [text][layer * H + head] -> [T,T]. Texts of one length run as one batch [B,T] of at most
// 32 rows and 64 MB of patterns, far fewer forwards than one per text (the probe's 500 prompts have 6 lengths);
// no row of a batch reads another, so each pattern is the one a forward of its own gives,
// bit for bit (tests/roles_test.cpp holds that).
std::vector<std::vector<std::vector<float>>> head_patterns_of_texts(const Gpt& model,
                                                                    std::span<const std::vector<int32_t>> texts);

// The summary's entropy and offset numbers of one [T,T] weight matrix (importance unset).
HeadSummary summarize_weights(const std::vector<float>& weights, int64_t T);

// One head's share of a block's attention parameters. Wq, Wk, Wv are [D,D] stored
// [out,in]: rows h*d .. h*d+d-1 produce head h's q/k/v coordinates, so its slices are
// [d,D]. Wo [D,D] reads the merged heads: columns h*d .. h*d+d-1 read head h, [D,d].
// Together the H heads hold all 4*D^2 parameters, each exactly once, so the heads'
// squared slice norms add up to the tensor's squared norm.
struct ParameterSlice {
  std::string name;    // "Wq", "Wk", "Wv", "Wo"
  std::string tensor;  // "blocks.0.attn.q_proj.weight"
  bool columns = false;  // false: rows first..last of the tensor; true: its columns
  int64_t first = 0, last = 0;
  Tensor values;              // [d,D] for rows, [D,d] for columns
  double norm = 0.0;          // Frobenius norm of the slice
  double tensor_norm = 0.0;   // Frobenius norm of the whole [D,D] tensor
};

struct HeadParameters {
  int64_t layer = 0, head = 0;
  std::vector<ParameterSlice> slices;  // Wq, Wk, Wv, Wo
};

HeadParameters head_parameters(const Gpt& model, int64_t layer, int64_t head);

// Frobenius norm of a whole tensor, e.g. a block's Wq: the heads' squared norms sum to its square.
double frobenius_norm(const Tensor& t);

}  // namespace mg

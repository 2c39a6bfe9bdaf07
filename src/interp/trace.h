// inspect-heads --trace L.H --position P: one head at one query position, the lesson's
// formula "head output = softmax(q k^T / sqrt(d) + causal mask) @ v" with the real
// numbers, step by step, then where the result goes: the head's slice of Wo, its
// contribution to the residual stream at P, and the output symbols that contribution
// pushes up. The numbers are recomputed (in double, from the float32 parameters) from the
// residual stream that enters block L in a real forward pass, and the forward's own
// projected_weights row is kept beside them, so a reader (and the test) can compare.
// B is 1 throughout: one text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/vocab.h"
#include "nn/gpt.h"

namespace mg {

// One output symbol and how much a vector added to the residual stream moves its logit.
struct LogitPush {
  int32_t id = 0;
  std::string symbol;  // UTF-8
  double logit = 0.0;
};

// The whole attention layer at the query position, as the lesson's section on split and
// merge draws it: the position's x [D] projected to its q, k and v rows [D], each row split
// into H heads of d (head h owns features h*d .. h*d+d-1), each head's output [d], the heads
// concatenated (merge_heads: not added) into [D], W_O applied, and the residual stream it joins.
// In double, from the float32 parameters; the forward's own stream after the branch is kept beside.
struct SplitMergeTrace {
  int64_t H = 0, d = 0;                         // H = 0: not computed (the head explorer's traces)
  std::vector<double> q_row, k_row, v_row;      // [D] x_P Wq^T, x_P Wk^T, x_P Wv^T (q and k before RoPE)
  std::vector<std::vector<double>> head_weights;  // [H][P+1] each head's projected_weights row at P
  std::vector<std::vector<double>> head_outputs;  // [H][d] each head's output at P
  std::vector<double> concatenated;             // [D] merge_heads: head h's output at h*d .. h*d+d-1
  std::vector<double> attention_out;            // [D] concatenated Wo^T: every coordinate mixes every head
  std::vector<double> residual_in;              // [D] the stream entering block L at P
  std::vector<double> residual_out;             // [D] residual_in + attention_out
  std::vector<float> forward_residual_out;      // [D] the forward's blocks.L.hook_resid_mid at P, for comparison
};

struct HeadTrace {
  int64_t layer = 0, head = 0, position = 0;  // P: the query position
  int64_t T = 0, D = 0, d = 0;
  PositionType position_type = PositionType::rope;
  double rope_base = 10000.0;
  std::vector<std::string> tokens;   // [T] the text's symbols
  std::vector<double> x;             // [D] x_P = LayerNorm(residual_P; blocks.L.ln1)
  std::vector<double> q_raw, q;      // [d] x_P Wq_h^T, then after RoPE at P (equal when learned)
  std::vector<std::vector<double>> keys;    // [P+1][d] k_s (after RoPE at s when rope)
  std::vector<std::vector<double>> values;  // [P+1][d] v_s = x_s Wv_h^T (never rotated)
  std::vector<double> dots;          // [P+1] q . k_s
  double scale = 0.0;                // float32(1 / sqrt(float32(d))), as the forward uses it
  std::vector<double> scores;        // [P+1] dots * scale; keys s > P are masked (-inf)
  std::vector<double> weights;       // [T] the softmax row; exactly 0 for s > P
  std::vector<float> forward_weights;  // [T] row P of the forward's projected_weights, for comparison
  std::vector<double> head_output;   // [d] sum_s weights[s] v_s
  std::vector<double> contribution;  // [D] Wo[:, h*d..h*d+d-1] head_output: added to the residual at P
  // Direct logit attribution, an approximation: the contribution through ln_f as if the
  // final LayerNorm were linear, i.e. centred (minus its mean over D), divided by the
  // real final residual's sigma at P (sqrt(var + eps), frozen from the forward), times
  // ln_f.weight, then the vocabulary head. Later blocks and ln_f's dependence on this
  // very contribution are ignored.
  double final_sigma = 0.0;
  std::vector<double> logit_push;    // [V]
  std::vector<LogitPush> top_up, top_down;  // the largest and smallest entries, `top` of each
  SplitMergeTrace split_merge;  // the whole layer at P: made by the text overload below (--trace), else H = 0
};

// One forward and one head's trace with its layer's split and merge (--trace).
// InputError: TEXT empty, longer than block_size, or with a symbol outside the vocabulary
// (WHAT names it); layer, head or position out of range (naming the valid range).
HeadTrace trace_head(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what, int64_t layer,
                     int64_t head, int64_t position, int64_t top = 5);

// The same in two parts, so many traces of one text share one forward pass (the head
// explorer traces every head at several positions): the forward's captures, then one
// head at one position from them.
struct TraceForward {
  std::vector<std::string> tokens;  // [T] the text's symbols
  std::vector<Tensor> streams;      // n_layer + 1 of [1,T,D]: entering each block, then ln_f's input
  std::vector<Tensor> weights;      // n_layer of [1,H,T,T]: projected_weights
  std::vector<Tensor> mids;         // n_layer of [1,T,D]: the stream after each block's attention branch
};
TraceForward trace_forward(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what);
// One head at one position (no split_merge: the explorer's many traces go without it).
HeadTrace trace_head(const Gpt& model, const Vocab& vocab, const TraceForward& forward, int64_t layer, int64_t head,
                     int64_t position, int64_t top = 5);

// Layer LAYER's attention at POSITION split into heads and merged back (checked by the caller).
SplitMergeTrace trace_split_merge(const Gpt& model, const TraceForward& forward, int64_t layer, int64_t position);

// "L.H" -> {L, H}; ArgumentError naming ARGUMENT when it is not two non-negative integers.
std::pair<int64_t, int64_t> parse_head_name(const std::string& spec, const std::string& option);

// Layer LAYER's head HEAD is one of the model's (CONFIG's), else ArgumentError naming OPTION,
// the argument that named it ("trace layer 9 is out of range: the model has 4 layers, ...").
void check_head_in_model(const ModelConfig& config, int64_t layer, int64_t head, const std::string& option);

}  // namespace mg

// Named activation points of Gpt::forward, read and edited through one struct. The names
// are TransformerLens's, so a reader of a circuit paper finds the same tensor under the
// same name. Every inspection reads the model through these points (attention patterns,
// the worked trace, ablation, attribution, the logit lens, patching): there is one
// forward, the one training runs, and it records a point only when a reader asks for it.
// B batch, T positions, D width, H heads, d = D/H.
//
//   hook_embed                  [B,T,D]    token embedding rows
//   hook_pos_embed              [T,D]      learned position rows (learned positions only)
//   blocks.L.hook_resid_pre     [B,T,D]    the residual stream entering block L
//   blocks.L.attn.hook_pattern  [B,H,T,T]  projected_weights, the causal softmax
//   blocks.L.attn.hook_z        [B,H,T,d]  each head's output w @ v, before the out projection
//   blocks.L.hook_attn_out      [B,T,D]    the attention branch, merged heads @ Wo^T
//   blocks.L.hook_resid_mid     [B,T,D]    the stream after the attention branch
//   blocks.L.hook_mlp_out       [B,T,D]    the MLP branch, GELU(h W1^T + b1) W2^T + b2
//   blocks.L.hook_resid_post    [B,T,D]    the stream leaving block L
//   ln_final.hook_scale         [B,T,1]    ln_f's sqrt(var + eps) of each final row
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace mg {

// The point names, spelled in this one place.
namespace hook {
inline const std::string embed = "hook_embed";
inline const std::string pos_embed = "hook_pos_embed";
inline const std::string ln_final_scale = "ln_final.hook_scale";
std::string resid_pre(int64_t layer);
std::string pattern(int64_t layer);
std::string z(int64_t layer);
std::string attn_out(int64_t layer);
std::string resid_mid(int64_t layer);
std::string mlp_out(int64_t layer);
std::string resid_post(int64_t layer);
}  // namespace hook

// Changes an activation in place while the forward runs: ablation and patching.
using ActivationEdit = std::function<void(Tensor& activation)>;

class ForwardHooks {
 public:
  // Keep a copy of the point's value (after any edit, as the rest of the forward sees it).
  void record(const std::string& name) { names_.insert(name); }
  void record_all() { all_ = true; }
  // Run EDIT on the point's value (inference only: the tape would not see the change).
  // Edits at one point run in the order added.
  void edit(const std::string& name, ActivationEdit edit) { edits_.emplace_back(name, std::move(edit)); }

  // For the forward: does any reader want this point (recorded or edited), is it edited.
  bool wants(const std::string& name) const { return recorded(name) || edited(name); }
  bool edited(const std::string& name) const;
  // For the forward, at each point in turn: run the edits, then record.
  void at(const std::string& name, Tensor& value);
  // For the forward, at its end: an edit at a point the forward never reached (a layer the
  // model does not have, a misspelt name) is an InternalError, not a silent no-op.
  void check_edits_reached() const;

  // The recorded values, by name. InternalError when a point was not recorded.
  const Tensor& operator[](const std::string& name) const;
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  // Forget the recorded values (keeps what to record and the edits) for another forward.
  void clear_values() { values_.clear(); reached_.clear(); }

 private:
  bool recorded(const std::string& name) const { return all_ || names_.count(name) > 0; }

  bool all_ = false;
  std::set<std::string> names_;
  std::vector<std::pair<std::string, ActivationEdit>> edits_;
  std::set<std::string> reached_;
  std::map<std::string, Tensor> values_;
};

// One head's output (w @ v, [d] per position) replaced before the out projection: by
// zeros, or by a fixed vector (mean-ablation: the head's mean output over some texts).
struct HeadAblation {
  int64_t layer = 0, head = 0;
  std::vector<float> value;  // [d], or empty for zeros
};

// The edit that writes ablation.value (or zeros) into head ablation.head of every row of
// hook_z [B,H,T,d]; a head out of range or a value not [d] is an InternalError.
void add_ablation(ForwardHooks& hooks, const HeadAblation& ablation);
ForwardHooks ablation_hooks(std::span<const HeadAblation> ablations);

// Patching edits: copy from SOURCE (the same point recorded on another text of the same
// shape) head HEAD of hook_z [B,H,T,d] at POSITION (every position when -1), or position
// POSITION (every position when -1) of a [B,T,D] stream.
ActivationEdit copy_head(int64_t head, Tensor source, int64_t position = -1);
ActivationEdit copy_position(int64_t position, Tensor source);

}  // namespace mg

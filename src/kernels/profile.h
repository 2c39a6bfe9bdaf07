// A cheap, opt-in profile of where a training step's time goes, per op family.
// The scopes sit at the kernels' dispatch boundary, not in the ops: each kernel of
// kernels/cpu_kernels.h's list is timed by its entry point under the family the list names,
// the GEMM dispatcher (kernels/runtime.cpp) as `gemm`, oneDNN's GELU and LayerNorm and the
// embedding kernels by their own entry points; the training loop adds `data` and
// `optimizer` around its own stages. While profiling is off a scope is one load of a global
// flag and nothing else. While on, time is charged exclusively: a scope opened inside
// another (the AdamW kernel inside the optimizer stage) pauses its parent, so the families
// add up to the wall time recorded, with whatever no scope claimed (allocation, the graph,
// the element-wise sums and re-layouts) going to `other`. Only scopes opened outside an
// OpenMP parallel region record (the main thread's); one opened inside a region does nothing.
// Library code never prints the profile; the caller formats the ProfileReport.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace mg {

enum class OpFamily : int {
  gemm,        // every mg::gemm call, whichever op issued it
  attention,   // the fused attention kernel (its softmax too), RoPE, the QKV rows to heads and back
  softmax,     // the causal softmax of the op-by-op attention (dropout's path, inspection)
  layernorm,
  gelu,
  embedding,   // the embedding lookup and its scatter-add
  loss,        // cross-entropy forward and backward
  optimizer,   // gradient clipping and the AdamW update
  data,        // drawing the batch
  other,       // the rest: allocation, the backward engine, residual adds, bias sums, re-layouts
};
constexpr int kOpFamilyCount = 10;
std::string_view op_family_name(OpFamily family);

struct ProfileReport {
  struct Family {
    double seconds = 0.0;  // exclusive time charged to the family
    int64_t calls = 0;     // scopes opened
  };
  std::array<Family, kOpFamilyCount> families{};
  double total_seconds = 0.0;  // time profiled: the sum of the families
  double gemm_flops = 0.0;     // 2*M*N*K*batch summed over every GEMM
  double attention_flops = 0.0;  // the fused attention kernel's, counted as the dense products it replaces
  int64_t steps = 0;           // profile_count_step calls
};

// Turns recording on or off; enabling clears what was recorded.
void set_profiling(bool enabled);
bool profiling();

// Forgets what was recorded so far (the training job drops its warm-up step this way).
void profile_clear();
// Stops and restarts the clock: evaluations and checkpoints between steps are not charged.
// Recording starts running when enabled.
void profile_pause();
void profile_resume();
void profile_count_step();
// What was recorded since enabling or the last profile_clear, the running time included.
ProfileReport profile_snapshot();

// Adds a GEMM's multiply-adds (x2) to the report; called by the GEMM dispatcher.
void profile_add_gemm_flops(double flops);
// Adds the fused attention's FLOPs; called by its entry points (kernels/cpu_dispatch.cpp).
void profile_add_attention_flops(double flops);

namespace profile_detail {
extern bool g_enabled;
// Starts charging `family`; false (and nothing done) inside a parallel region.
bool enter(OpFamily family, OpFamily& previous);
void leave(OpFamily previous);
}  // namespace profile_detail

// Charges the time until its destruction to `family` (exclusive of nested scopes).
class ProfileScope {
 public:
  explicit ProfileScope(OpFamily family)
      : active_(profile_detail::g_enabled && profile_detail::enter(family, previous_)) {}
  ~ProfileScope() {
    if (active_) profile_detail::leave(previous_);
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  bool active_;
  OpFamily previous_ = OpFamily::other;
};

}  // namespace mg

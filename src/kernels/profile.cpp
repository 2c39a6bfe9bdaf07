// The op-family profile (see profile.h). One clock reading per scope boundary: the time
// since the last boundary goes to the family that was running, then the new one runs.
#include "kernels/profile.h"

#include <omp.h>

#include <chrono>

namespace mg {
namespace {

using Clock = std::chrono::steady_clock;

struct ProfileState {
  ProfileReport report;
  OpFamily current = OpFamily::other;
  Clock::time_point last{};
  bool paused = false;  // enabled, but between steps
};

ProfileState g_state;

// Charges the time since the last boundary to the running family.
void charge_until(Clock::time_point now) {
  g_state.report.families[static_cast<int>(g_state.current)].seconds +=
      std::chrono::duration<double>(now - g_state.last).count();
  g_state.last = now;
}

}  // namespace

namespace profile_detail {

bool g_enabled = false;  // true while recording (enabled and not paused)

bool enter(OpFamily family, OpFamily& previous) {
  if (omp_get_level() > 0) return false;  // a worker of a region (or the region's own thread)
  charge_until(Clock::now());
  previous = g_state.current;
  g_state.current = family;
  ++g_state.report.families[static_cast<int>(family)].calls;
  return true;
}

void leave(OpFamily previous) {
  charge_until(Clock::now());
  g_state.current = previous;
}

}  // namespace profile_detail

std::string_view op_family_name(OpFamily family) {
  switch (family) {
    case OpFamily::gemm: return "GEMM";
    case OpFamily::attention: return "attention";
    case OpFamily::softmax: return "softmax";
    case OpFamily::layernorm: return "LayerNorm";
    case OpFamily::gelu: return "GELU";
    case OpFamily::embedding: return "embedding";
    case OpFamily::loss: return "loss";
    case OpFamily::optimizer: return "optimizer";
    case OpFamily::data: return "data";
    case OpFamily::other: return "other";
  }
  return "?";
}

void set_profiling(bool enabled) {
  g_state = ProfileState{};
  g_state.last = Clock::now();
  profile_detail::g_enabled = enabled;
}

bool profiling() { return profile_detail::g_enabled || g_state.paused; }

void profile_clear() {
  g_state.report = ProfileReport{};
  g_state.current = OpFamily::other;
  g_state.last = Clock::now();
}

void profile_pause() {
  if (!profile_detail::g_enabled) return;
  charge_until(Clock::now());
  profile_detail::g_enabled = false;
  g_state.paused = true;
}

void profile_resume() {
  if (!g_state.paused) return;
  g_state.paused = false;
  g_state.current = OpFamily::other;
  g_state.last = Clock::now();
  profile_detail::g_enabled = true;
}

void profile_count_step() {
  if (profiling()) ++g_state.report.steps;
}

void profile_add_attention_flops(double flops) {
  if (profile_detail::g_enabled) g_state.report.attention_flops += flops;
}

void profile_add_gemm_flops(double flops) {
  if (profile_detail::g_enabled) g_state.report.gemm_flops += flops;
}

ProfileReport profile_snapshot() {
  if (profile_detail::g_enabled) charge_until(Clock::now());
  ProfileReport report = g_state.report;
  report.total_seconds = 0.0;
  for (const auto& f : report.families) report.total_seconds += f.seconds;
  return report;
}

}  // namespace mg

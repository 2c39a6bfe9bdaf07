// The activation points' names, the record of their values, and the edits that ablation
// and patching apply through them (nn/hooks.h).
#include "nn/hooks.h"

#include <cstring>

#include "autograd/var.h"
#include "core/error.h"

namespace mg {

namespace hook {
namespace {
std::string block(int64_t layer, const char* point) { return "blocks." + std::to_string(layer) + "." + point; }
}  // namespace
std::string resid_pre(int64_t layer) { return block(layer, "hook_resid_pre"); }
std::string pattern(int64_t layer) { return block(layer, "attn.hook_pattern"); }
std::string z(int64_t layer) { return block(layer, "attn.hook_z"); }
std::string attn_out(int64_t layer) { return block(layer, "hook_attn_out"); }
std::string resid_mid(int64_t layer) { return block(layer, "hook_resid_mid"); }
std::string mlp_out(int64_t layer) { return block(layer, "hook_mlp_out"); }
std::string resid_post(int64_t layer) { return block(layer, "hook_resid_post"); }
}  // namespace hook

bool ForwardHooks::edited(const std::string& name) const {
  for (const auto& [point, edit] : edits_)
    if (point == name) return true;
  return false;
}

void ForwardHooks::at(const std::string& name, Tensor& value) {
  reached_.insert(name);
  for (const auto& [point, edit] : edits_) {
    if (point != name) continue;
    // With the tape on, the backward would differentiate the unedited value.
    MG_CHECK(!grad_enabled(), "activation edits are for inference only (" + name + ")");
    edit(value);
  }
  if (recorded(name)) values_[name] = value.clone();  // later in-place work must not reach the copy
}

void ForwardHooks::check_edits_reached() const {
  for (const auto& [point, edit] : edits_)
    MG_CHECK(reached_.count(point) > 0, "an edit at \"" + point + "\", a point this forward does not have");
}

const Tensor& ForwardHooks::operator[](const std::string& name) const {
  const auto found = values_.find(name);
  MG_CHECK(found != values_.end(), "activation \"" + name + "\" was not recorded");
  return found->second;
}

void add_ablation(ForwardHooks& hooks, const HeadAblation& ablation) {
  hooks.edit(hook::z(ablation.layer), [ablation](Tensor& z) {  // z [B,H,T,d]
    const int64_t B = z.dim(0), H = z.dim(1), T = z.dim(2), d = z.dim(3);
    MG_CHECK(ablation.head >= 0 && ablation.head < H, "head ablation: head out of range");
    MG_CHECK(ablation.value.empty() || static_cast<int64_t>(ablation.value.size()) == d,
             "head ablation: value is not [d]");
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) {
        float* row = z.data() + ((b * H + ablation.head) * T + t) * d;  // [d] of [B,H,T,d]
        if (ablation.value.empty()) std::memset(row, 0, sizeof(float) * d);
        else std::memcpy(row, ablation.value.data(), sizeof(float) * d);
      }
  });
}

ForwardHooks ablation_hooks(std::span<const HeadAblation> ablations) {
  ForwardHooks hooks;
  for (const HeadAblation& a : ablations) add_ablation(hooks, a);
  return hooks;
}

ActivationEdit copy_head(int64_t head, Tensor source, int64_t position) {
  return [head, source, position](Tensor& z) {  // z and source [B,H,T,d]
    MG_CHECK(z.shape() == source.shape(), "patching: the source is not the activation's shape");
    const int64_t B = z.dim(0), H = z.dim(1), T = z.dim(2), d = z.dim(3);
    MG_CHECK(head >= 0 && head < H, "patching: head out of range");
    MG_CHECK(position >= -1 && position < T, "patching: position out of range");
    // Every position: the head's whole [T,d] block; one position: its [d] row.
    const int64_t offset = position < 0 ? 0 : position * d, count = position < 0 ? T * d : d;
    for (int64_t b = 0; b < B; ++b)
      std::memcpy(z.data() + (b * H + head) * T * d + offset, source.data() + (b * H + head) * T * d + offset,
                  sizeof(float) * count);
  };
}

ActivationEdit copy_position(int64_t position, Tensor source) {
  return [position, source](Tensor& x) {  // x and source [B,T,D]
    MG_CHECK(x.shape() == source.shape(), "patching: the source is not the activation's shape");
    const int64_t B = x.dim(0), T = x.dim(1), D = x.dim(2);
    MG_CHECK(position >= -1 && position < T, "patching: position out of range");
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        if (position < 0 || t == position)
          std::memcpy(x.data() + (b * T + t) * D, source.data() + (b * T + t) * D, sizeof(float) * D);
  };
}

}  // namespace mg

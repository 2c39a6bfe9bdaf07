// Row- and element-wise ops: layer_norm (per row of the last axis), gelu and dropout.
// Backward lambdas capture input handles as `[x = x]`: a plain `[x]` copy of a `const Var&`
// stays const, and grad() (which allocates on first use) is non-const.
#include <string>

#include "autograd/ops.h"
#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/onednn_ops.h"
#include "kernels/profile.h"
#include "kernels/runtime.h"
#include "core/error.h"

namespace mg {
namespace {

constexpr int64_t kParallelWork = 1 << 15;

// With the oneDNN backend, LayerNorm's forward and GELU run on oneDNN's kernels too: the
// kernel benchmark measured them faster than ours on the model's shapes. The other
// backends keep the plain kernels, so --backend reference is plain C++ end to end.
bool use_onednn() { return gemm_backend() == GemmBackend::onednn; }

}  // namespace

Var layer_norm(const Var& x, const Var& weight, const Var& bias, float eps) {
  const Shape& s = x.shape();
  const int64_t D = s.empty() ? 0 : s.back();
  if (s.empty() || weight.shape() != Shape{D} || bias.shape() != Shape{D})
    throw ShapeError("layer_norm: x " + shape_str(s) + " needs weight and bias [" + std::to_string(D) +
                     "], found weight " + shape_str(weight.shape()) + " and bias " + shape_str(bias.shape()));
  const int64_t rows = D == 0 ? 0 : x.value().numel() / D;
  ProfileScope scope(OpFamily::layernorm);

  Tensor out = Tensor::empty(s);
  Tensor mean = Tensor::empty({rows});  // per-row statistics the backward reuses
  Tensor rstd = Tensor::empty({rows});
  (use_onednn() ? layernorm_forward_onednn : layernorm_forward)(out.data(), mean.data(), rstd.data(),
                                                                 x.value().data(), weight.value().data(),
                                                                 bias.value().data(), rows, D, eps);

  return make_result(out, {x, weight, bias}, [x = x, weight = weight, bias = bias, mean, rstd, rows, D](const Tensor& dout) mutable {
    ProfileScope scope(OpFamily::layernorm);
    // Null pointers tell the kernel to skip a gradient nobody asked for.
    // The plain backward on every backend: on [2048,64] it takes half oneDNN's time.
    layernorm_backward(x.requires_grad() ? x.grad().data() : nullptr,
                       weight.requires_grad() ? weight.grad().data() : nullptr,
                       bias.requires_grad() ? bias.grad().data() : nullptr, dout.data(), x.value().data(),
                       weight.value().data(), mean.data(), rstd.data(), rows, D);
  });
}

Var gelu(const Var& x) {
  ProfileScope scope(OpFamily::gelu);
  Tensor out = Tensor::empty(x.shape());
  (use_onednn() ? gelu_forward_onednn : gelu_forward)(out.data(), x.value().data(), out.numel());
  return make_result(out, {x}, [x = x](const Tensor& dout) mutable {
    ProfileScope scope(OpFamily::gelu);
    bool accumulate = false;
    float* dx = x.grad_sink(accumulate);
    if (accumulate)
      (use_onednn() ? gelu_backward_onednn : gelu_backward)(dx, dout.data(), x.value().data(), dout.numel());
    else
      (use_onednn() ? gelu_backward_onednn_overwrite : gelu_backward_overwrite)(dx, dout.data(), x.value().data(),
                                                                                dout.numel());
  });
}

Var dropout(const Var& x, float p, Rng& rng) {
  if (!(p >= 0.0f && p < 1.0f)) throw InputError("dropout: probability must be in [0, 1), found " + std::to_string(p));
  if (p == 0.0f) return x;  // the identity: no new node, no random draws
  ProfileScope scope(OpFamily::other);

  // mask [same shape as x]: 0 for a dropped element, 1/(1-p) for a survivor, so the
  // expected value of every element is unchanged. Drawn in element order from rng.
  const int64_t n = x.value().numel();
  Tensor mask = Tensor::empty(x.shape());
  const float keep_scale = 1.0f / (1.0f - p);
  for (int64_t i = 0; i < n; ++i) mask[i] = rng.uniform() < p ? 0.0f : keep_scale;

  Tensor out = Tensor::empty(x.shape());
  const float* px = x.value().data();
#pragma omp parallel for if (n > kParallelWork)
  for (int64_t i = 0; i < n; ++i) out[i] = px[i] * mask[i];

  return make_result(out, {x}, [x = x, mask](const Tensor& dout) mutable {
    float* dx = x.grad().data();  // out = x * mask, so dx += dout * mask
    for (int64_t i = 0; i < dout.numel(); ++i) dx[i] += dout[i] * mask[i];
  });
}

}  // namespace mg

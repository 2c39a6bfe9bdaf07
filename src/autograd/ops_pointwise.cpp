// Row- and element-wise ops: layer_norm (per row of the last axis), gelu and dropout.
// The kernels pick their backend themselves (oneDNN's or the plain ones, cpu_dispatch.cpp).
#include <string>

#include "autograd/ops.h"
#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/elementwise.h"
#include "core/error.h"

namespace mg {

Var layer_norm(const Var& x, const Var& weight, const Var& bias, float eps) {
  const Shape& s = x.shape();
  const int64_t D = s.empty() ? 0 : s.back();
  if (s.empty() || weight.shape() != Shape{D} || bias.shape() != Shape{D})
    throw ShapeError("layer_norm: x " + shape_str(s) + " needs weight and bias [" + std::to_string(D) +
                     "], found weight " + shape_str(weight.shape()) + " and bias " + shape_str(bias.shape()));
  const int64_t rows = D == 0 ? 0 : x.value().numel() / D;

  Tensor out = Tensor::empty(s);
  Tensor mean = Tensor::empty({rows});  // per-row statistics the backward reuses
  Tensor rstd = Tensor::empty({rows});
  layernorm_forward_on_backend(out.data(), mean.data(), rstd.data(), x.value().data(), weight.value().data(),
                               bias.value().data(), rows, D, eps);

  return make_result(out, {x, weight, bias}, [x, weight, bias, mean, rstd, rows, D](const Tensor& dout) {
    // The kernel adds; null pointers tell it to skip a gradient nobody asked for.
    auto added_to = [](const Var& v) { return v.requires_grad() ? v.grad_out().for_adding() : nullptr; };
    layernorm_backward(added_to(x), added_to(weight), added_to(bias), dout.data(), x.value().data(),
                       weight.value().data(), mean.data(), rstd.data(), rows, D);
  });
}

Var gelu(const Var& x) {
  Tensor out = Tensor::empty(x.shape());
  gelu_forward_on_backend(out.data(), x.value().data(), out.numel());
  return make_result(out, {x}, [x](const Tensor& dout) {
    const GradOut dx = x.grad_out();
    gelu_backward_on_backend(dx.data, dout.data(), x.value().data(), dout.numel(), dx.accumulate);
  });
}

Var dropout(const Var& x, float p, Rng& rng) {
  if (!(p >= 0.0f && p < 1.0f)) throw InputError("dropout: probability must be in [0, 1), found " + std::to_string(p));
  if (p == 0.0f) return x;  // the identity: no new node, no random draws

  // mask [same shape as x]: 0 for a dropped element, 1/(1-p) for a survivor, so the
  // expected value of every element is unchanged. Drawn in element order from rng.
  const int64_t n = x.value().numel();
  Tensor mask = Tensor::empty(x.shape());
  const float keep_scale = 1.0f / (1.0f - p);
  for (int64_t i = 0; i < n; ++i) mask[i] = rng.uniform() < p ? 0.0f : keep_scale;

  Tensor out = Tensor::empty(x.shape());
  multiply(out.data(), x.value().data(), mask.data(), n, false);

  return make_result(out, {x}, [x, mask](const Tensor& dout) {
    const GradOut dx = x.grad_out();  // out = x * mask, so dx (+)= dout * mask
    multiply(dx.data, dout.data(), mask.data(), dout.numel(), dx.accumulate);
  });
}

}  // namespace mg

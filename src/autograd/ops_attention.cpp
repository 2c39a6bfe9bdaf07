// The attention-specific ops: split_heads / merge_heads (pure re-layouts), rope and
// causal_softmax. The re-layouts move whole head vectors of d floats; their backward is
// the opposite re-layout, accumulated.
// Backward lambdas capture input handles as `[x = x]`: a plain `[x]` copy of a `const Var&`
// stays const, and grad() (which allocates on first use) is non-const.
#include <cstring>
#include <string>

#include "autograd/ops.h"
#include "kernels/softmax.h"
#include "tensor/error.h"

namespace mg {
namespace {

constexpr int64_t kParallelWork = 1 << 15;

// in [outer, n1, n2, d] -> out [outer, n2, n1, d]: swaps the two middle axes, moving
// vectors of d floats. accumulate: out += instead of out =.
void swap_middle_axes(float* out, const float* in, int64_t outer, int64_t n1, int64_t n2, int64_t d,
                      bool accumulate) {
#pragma omp parallel for collapse(2) if (outer * n1 * n2 * d > kParallelWork)
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < n1; ++i) {
      for (int64_t j = 0; j < n2; ++j) {
        const float* src = in + ((o * n1 + i) * n2 + j) * d;
        float* dst = out + ((o * n2 + j) * n1 + i) * d;
        if (accumulate) {
          for (int64_t k = 0; k < d; ++k) dst[k] += src[k];
        } else {
          std::memcpy(dst, src, sizeof(float) * d);
        }
      }
    }
  }
}

}  // namespace

Var split_heads(const Var& x, int64_t n_head) {
  const Shape& s = x.shape();
  if (s.size() != 3) throw ShapeError("split_heads: expected x [B,T,D], found " + shape_str(s));
  const int64_t B = s[0], T = s[1], D = s[2];
  if (n_head <= 0 || D % n_head != 0)
    throw ShapeError("split_heads: width D=" + std::to_string(D) + " is not divisible by H=" +
                     std::to_string(n_head) + " heads");
  const int64_t H = n_head, d = D / H;

  // x [B,T,D] is [B,T,H,d] in memory; swapping T and H gives [B,H,T,d].
  Tensor out = Tensor::empty({B, H, T, d});
  swap_middle_axes(out.data(), x.value().data(), B, T, H, d, false);

  return make_result(out, {x}, [x = x, B, T, H, d](const Tensor& dout) mutable {
    // A pure re-layout: each coordinate's gradient goes back where the coordinate came from.
    swap_middle_axes(x.grad().data(), dout.data(), B, H, T, d, true);
  });
}

Var merge_heads(const Var& x) {
  const Shape& s = x.shape();
  if (s.size() != 4) throw ShapeError("merge_heads: expected x [B,H,T,d], found " + shape_str(s));
  const int64_t B = s[0], H = s[1], T = s[2], d = s[3];

  // [B,H,T,d] -> [B,T,H,d], which is [B,T,D] in memory with D = H*d.
  Tensor out = Tensor::empty({B, T, H * d});
  swap_middle_axes(out.data(), x.value().data(), B, H, T, d, false);

  return make_result(out, {x}, [x = x, B, T, H, d](const Tensor& dout) mutable {
    swap_middle_axes(x.grad().data(), dout.data(), B, T, H, d, true);
  });
}

Var rope(const Var& x, const RopeTable& table, int64_t position_offset) {
  const Shape& s = x.shape();
  if (s.size() < 2) throw ShapeError("rope: expected x [...,T,d], found " + shape_str(s));
  const int64_t T = s[s.size() - 2], d = s.back();
  if (d != table.head_width || position_offset < 0 || position_offset + T > table.positions)
    throw ShapeError("rope: x " + shape_str(s) + " at offset " + std::to_string(position_offset) +
                     " needs a table of head width " + std::to_string(d) + " and " +
                     std::to_string(position_offset + T) + " positions, found width " +
                     std::to_string(table.head_width) + " and " + std::to_string(table.positions) + " positions");
  const int64_t rows = T * d == 0 ? 0 : x.value().numel() / (T * d);  // B*H

  Tensor out = Tensor::empty(s);
  rope_forward(out.data(), x.value().data(), table, rows, T, d, position_offset);

  // The backward keeps its own copy of the table (a few kB), so the caller's table need
  // not outlive the graph; no copy when nothing will be recorded.
  if (!grad_enabled() || !x.requires_grad()) return make_result(out, {x}, nullptr);
  return make_result(out, {x}, [x = x, table, rows, T, d, position_offset](const Tensor& dout) mutable {
    rope_backward(x.grad().data(), dout.data(), table, rows, T, d, position_offset);
  });
}

Var causal_softmax(const Var& scores) {
  const Shape& s = scores.shape();
  if (s.size() < 2) throw ShapeError("causal_softmax: expected scores [...,Tq,Tk], found " + shape_str(s));
  const int64_t Tq = s[s.size() - 2], Tk = s.back();
  if (Tq > Tk)
    throw ShapeError("causal_softmax: scores " + shape_str(s) + " have more queries (" + std::to_string(Tq) +
                     ") than keys (" + std::to_string(Tk) + ")");
  const int64_t batch = Tq * Tk == 0 ? 0 : scores.value().numel() / (Tq * Tk);

  Tensor weights = Tensor::empty(s);
  causal_softmax_forward(weights.data(), scores.value().data(), batch, Tq, Tk);

  // The backward needs only the weights it produced (see the kernel for the formula).
  return make_result(weights, {scores}, [scores = scores, weights, batch, Tq, Tk](const Tensor& dout) mutable {
    causal_softmax_backward(scores.grad().data(), dout.data(), weights.data(), batch, Tq, Tk);
  });
}

}  // namespace mg

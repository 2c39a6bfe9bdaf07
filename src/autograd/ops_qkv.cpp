// The fused attention input projection (qkv_heads) and the view op that takes its parts
// apart (select). One [rows,3D] GEMM replaces three [rows,D] ones in each direction, and
// the split into heads and RoPE happen in the copy out of the GEMM's output, so neither
// the three projections nor the un-rotated heads are ever stored.
// Backward lambdas capture input handles as `[x = x]`: a plain `[x]` copy of a `const Var&`
// stays const, and grad() (which allocates on first use) is non-const.
#include <algorithm>
#include <cstring>
#include <string>

#include "autograd/ops.h"
#include "kernels/gemm.h"
#include "kernels/profile.h"
#include "core/error.h"

namespace mg {
namespace {

constexpr int64_t kParallelWork = 1 << 15;

// y [B,T,3,H,d] (the GEMM's [rows,3D] output) <-> heads [3,B,H,T,d]. to_heads picks the
// direction; either way whole head vectors of d floats move.
void relayout_qkv(float* heads, float* y, int64_t B, int64_t T, int64_t H, int64_t d, bool to_heads) {
  const int64_t D = H * d;
#pragma omp parallel for collapse(2) if (3 * B * T * D > kParallelWork)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t part = 0; part < 3; ++part) {
        for (int64_t h = 0; h < H; ++h) {
          float* head_vec = heads + (((part * B + b) * H + h) * T + t) * d;  // [3,B,H,T,d]
          float* y_vec = y + (b * T + t) * 3 * D + part * D + h * d;       // [B,T,3D]
          if (to_heads) std::memcpy(head_vec, y_vec, sizeof(float) * d);
          else std::memcpy(y_vec, head_vec, sizeof(float) * d);
        }
      }
    }
  }
}

}  // namespace

Var qkv_heads(const Var& x, const Var& wq, const Var& wk, const Var& wv, int64_t n_head, const RopeTable* rope_table,
              int64_t position_offset) {
  const Shape& s = x.shape();
  if (s.size() != 3) throw ShapeError("qkv_heads: expected x [B,T,D], found " + shape_str(s));
  const int64_t B = s[0], T = s[1], D = s[2];
  for (const Var* w : {&wq, &wk, &wv})
    if (w->shape() != Shape{D, D})
      throw ShapeError("qkv_heads: x " + shape_str(s) + " needs weights [" + std::to_string(D) + "," +
                       std::to_string(D) + "], found " + shape_str(w->shape()));
  if (n_head <= 0 || D % n_head != 0)
    throw ShapeError("qkv_heads: width D=" + std::to_string(D) + " is not divisible by H=" + std::to_string(n_head) +
                     " heads");
  const int64_t H = n_head, d = D / H, rows = B * T;
  if (rope_table && (rope_table->head_width != d || position_offset < 0 ||
                     position_offset + T > rope_table->positions))
    throw ShapeError("qkv_heads: a RoPE table of head width " + std::to_string(rope_table->head_width) + " and " +
                     std::to_string(rope_table->positions) + " positions does not cover d=" + std::to_string(d) +
                     " at positions " + std::to_string(position_offset) + ".." + std::to_string(position_offset + T));
  const int64_t part = B * H * T * d;  // one of q, k, v

  // w_packed [3D,D] = [Wq; Wk; Wv], then y [rows,3D] = x w_packed^T in one GEMM.
  Tensor w_packed = Tensor::empty({3 * D, D});
  Tensor y = Tensor::empty({B, T, 3 * D});
  {
    ProfileScope scope(OpFamily::attention);
    std::memcpy(w_packed.data(), wq.value().data(), sizeof(float) * D * D);
    std::memcpy(w_packed.data() + D * D, wk.value().data(), sizeof(float) * D * D);
    std::memcpy(w_packed.data() + 2 * D * D, wv.value().data(), sizeof(float) * D * D);
  }
  matmul_2d(x.value().data(), w_packed.data(), y.data(), rows, 3 * D, D, false, true);

  Tensor out = Tensor::empty({3, B, H, T, d});
  {
    ProfileScope scope(OpFamily::attention);
    relayout_qkv(out.data(), y.data(), B, T, H, d, true);
    y = Tensor();  // back to the pool before the next op asks for one
    // q and k, [2*B*H, T, d] in a row, rotate in place.
    if (rope_table) rope_forward(out.data(), out.data(), *rope_table, 2 * B * H, T, d, position_offset);
  }

  if (!grad_enabled()) return make_result(out, {x, wq, wk, wv}, nullptr);
  RopeTable table = rope_table ? *rope_table : RopeTable{};  // a few kB: the graph may outlive the caller's
  return make_result(out, {x, wq, wk, wv},
                     [x = x, wq = wq, wk = wk, wv = wv, w_packed, table, B, T, H, d, D, rows, part,
                      position_offset](const Tensor& dout) mutable {
    // Undo the forward's steps in reverse: rotate q, k back (R(-angle)), gather the heads
    // into dy [rows,3D], then dx = dy w_packed and dw_packed = dy^T x.
    Tensor dy = Tensor::empty({B, T, 3 * D});
    {
      ProfileScope scope(OpFamily::attention);
      Tensor unrotated = Tensor::empty({3, B, H, T, d});
      if (table.positions > 0) {
        rope_backward_overwrite(unrotated.data(), dout.data(), table, 2 * B * H, T, d, position_offset);
        std::memcpy(unrotated.data() + 2 * part, dout.data() + 2 * part, sizeof(float) * part);
      } else {
        std::memcpy(unrotated.data(), dout.data(), sizeof(float) * 3 * part);
      }
      relayout_qkv(unrotated.data(), dy.data(), B, T, H, d, false);
    }
    bool accumulate = false;
    if (x.requires_grad()) {  // dx [rows,D] (+)= dy [rows,3D] @ w_packed [3D,D]
      float* dx = x.grad_sink(accumulate);
      matmul_2d(dy.data(), w_packed.data(), dx, rows, D, 3 * D, false, false, accumulate ? 1.0f : 0.0f);
    }
    if (!wq.requires_grad() && !wk.requires_grad() && !wv.requires_grad()) return;
    Tensor dw_packed = Tensor::empty({3 * D, D});  // [3D,D] = dy^T [3D,rows] @ x [rows,D]
    matmul_2d(dy.data(), x.value().data(), dw_packed.data(), 3 * D, D, rows, true, false);
    ProfileScope scope(OpFamily::attention);
    Var* weights[3] = {&wq, &wk, &wv};
    for (int64_t i = 0; i < 3; ++i) {
      if (!weights[i]->requires_grad()) continue;
      float* dw = weights[i]->grad_sink(accumulate);
      const float* src = dw_packed.data() + i * D * D;
      for (int64_t j = 0; j < D * D; ++j) dw[j] = (accumulate ? dw[j] : 0.0f) + src[j];
    }
  });
}

Var select(const Var& x, int64_t index) {
  const Shape& s = x.shape();
  if (s.empty() || index < 0 || index >= s[0])
    throw ShapeError("select: index " + std::to_string(index) + " out of range for " + shape_str(s));
  const Shape part_shape(s.begin() + 1, s.end());
  const int64_t n = shape_numel(part_shape);
  Tensor view = x.value().view(index * n, part_shape);
  return make_result(view, {x}, [x = x, index, n](const Tensor& dout) mutable {
    // x[index] receives dout; the other parts of x's gradient are left as they are, so
    // the buffer must start at zero (grad(), not grad_sink).
    ProfileScope scope(OpFamily::attention);
    float* dx = x.grad().data() + index * n;
    const float* g = dout.data();
#pragma omp parallel for simd if (n > kParallelWork)
    for (int64_t i = 0; i < n; ++i) dx[i] += g[i];
  });
}

}  // namespace mg

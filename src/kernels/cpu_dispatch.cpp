// The public entry points of the kernels compiled per CPU variant. Each kernel of
// kernels/cpu_kernels.h's list gets one here, generated from the list: one call through the
// active variant's table, timed under the list's op family while profiling is on (while it
// is off, a ProfileScope is one load of a flag). Below them, written out, the entry points
// that need more than one call: argument checks, scratch buffers held in std::vector (which
// must not be compiled per variant), sums in row order, and the choice of a kernel by the
// GEMM backend in force (oneDNN's GELU and LayerNorm forward).
#include <vector>

#include "kernels/cpu_kernels.h"
#include "kernels/cross_entropy.h"
#include "kernels/fused_attention.h"
#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/onednn_ops.h"
#include "kernels/optimizer.h"
#include "kernels/parallel.h"
#include "kernels/profile.h"
#include "kernels/runtime.h"
#include "kernels/rope.h"
#include "kernels/softmax.h"
#include "core/error.h"

namespace mg {

#define MG_DEFINE_ENTRY(family, name, result, parameters, arguments) \
  result name parameters {                                            \
    ProfileScope scope(OpFamily::family);                             \
    return cpu_kernels().name arguments;                              \
  }
MG_CPU_KERNELS(MG_DEFINE_ENTRY)
#undef MG_DEFINE_ENTRY

// With the oneDNN GEMM backend, GELU and LayerNorm's forward run on oneDNN's kernels too:
// the kernel benchmark measured them faster than ours on the model's shapes. The other
// backends keep the plain kernels, so --backend reference is plain C++ end to end.
// LayerNorm's backward is the plain one everywhere: on [2048,64] it takes half oneDNN's time.
namespace {
bool onednn_backend() { return gemm_backend() == GemmBackend::onednn; }
}  // namespace

void gelu_forward_on_backend(float* out, const float* x, int64_t n) {
  (onednn_backend() ? gelu_forward_onednn : gelu_forward)(out, x, n);
}

void gelu_backward_on_backend(float* dx, const float* dout, const float* x, int64_t n, bool accumulate) {
  (onednn_backend() ? gelu_backward_onednn : gelu_backward)(dx, dout, x, n, accumulate);
}

void layernorm_forward_on_backend(float* out, float* mean, float* rstd, const float* x, const float* weight,
                                  const float* bias, int64_t rows, int64_t D, float eps) {
  (onednn_backend() ? layernorm_forward_onednn : layernorm_forward)(out, mean, rstd, x, weight, bias, rows, D, eps);
}

// dweight and dbias are sums over rows: per fixed block of kRowBlock rows into partials,
// added here in block order, so the bits do not depend on the thread count.
void layernorm_backward(float* dx, float* dweight, float* dbias, const float* dout, const float* x,
                        const float* weight, const float* mean, const float* rstd, int64_t rows, int64_t D) {
  constexpr int64_t kRowBlock = 32;
  const int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
  const bool want_params = dweight != nullptr || dbias != nullptr;
  std::vector<float> dweight_part(want_params ? blocks * D : 0, 0.0f);  // [blocks, D]
  std::vector<float> dbias_part(want_params ? blocks * D : 0, 0.0f);    // [blocks, D]
  layernorm_backward_blocks(dx, want_params ? dweight_part.data() : nullptr,
                            want_params ? dbias_part.data() : nullptr, dout, x, weight, mean, rstd, rows, D,
                            kRowBlock);
  for (int64_t blk = 0; blk < blocks && want_params; ++blk) {
    for (int64_t j = 0; j < D; ++j) {
      if (dweight) dweight[j] += dweight_part[blk * D + j];
      if (dbias) dbias[j] += dbias_part[blk * D + j];
    }
  }
}

namespace {

// How rope() rotates, named at each call: rope(..., {.inverse = true, .accumulate = a}).
struct Rotation {
  bool inverse = false;     // by R(-angle), the backward's
  bool accumulate = false;  // out += the rotated x, not out =
};

void rope(float* out, const float* x, const RopeTable& table, int64_t rows, int64_t T, int64_t d, int64_t offset,
          Rotation how) {
  MG_CHECK(table.head_width == d && offset >= 0 && offset + T <= table.positions,
           "RoPE table does not cover the input");
  const int64_t half = d / 2;
  rope_rotate(out, x, table.cos.data() + offset * half, table.sin.data() + offset * half, rows, T, d,
              how.inverse, how.accumulate);
}

}  // namespace

void rope_forward(float* out, const float* x, const RopeTable& table, int64_t rows, int64_t T, int64_t d,
                  int64_t offset) {
  rope(out, x, table, rows, T, d, offset, {});
}

void rope_shift(float* out, const float* x, const RopeTable& table, int64_t rows, int64_t d, int64_t shift) {
  rope(out, x, table, rows, 1, d, shift, {.inverse = true});  // every row by R(-angle at shift)
}

void relayout_qkv(float* out, const float* in, const RopeTable* table, int64_t B, int64_t T, int64_t H, int64_t d,
                  int64_t offset, bool to_heads) {
  MG_CHECK(!table || (table->head_width == d && offset >= 0 && offset + T <= table->positions),
           "RoPE table does not cover the input");
  const int64_t half = d / 2;
  relayout_qkv_cos_sin(out, in, table ? table->cos.data() + offset * half : nullptr,
                       table ? table->sin.data() + offset * half : nullptr, B, T, H, d, to_heads);
}

void rope_backward(float* dx, const float* dout, const RopeTable& table, int64_t rows, int64_t T, int64_t d,
                   int64_t offset, bool accumulate) {
  rope(dx, dout, table, rows, T, d, offset, {.inverse = true, .accumulate = accumulate});
}

// Per-row losses are summed in double, in row order, so the mean does not depend on the
// thread count. The buffer is kept between calls: a training step of the same shape
// reuses it instead of allocating one.
double cross_entropy_forward(float* probs, const float* logits, const int32_t* targets, int64_t rows,
                             int64_t V) {
  thread_local std::vector<double> row_loss;
  row_loss.resize(static_cast<size_t>(rows));
  cross_entropy_rows(row_loss.data(), probs, logits, targets, rows, V);
  double total = 0.0;
  for (double loss : row_loss) total += loss;
  return rows > 0 ? total / static_cast<double>(rows) : 0.0;
}

// Each thread works on its own head in its own scratch, kept between calls (a training step
// of the same shape reuses it instead of allocating).
AttentionWorkspace attention_workspace(const AttentionShape& s, const RopeTable* table, int dense_products) {
  MG_CHECK(s.B >= 0 && s.T >= 1 && s.H >= 1 && s.d >= 1, "causal attention: empty shape");
  MG_CHECK(!table || (table->head_width == s.d && s.T <= table->positions), "RoPE table does not cover the input");
  const double product = 2.0 * static_cast<double>(s.B * s.H) * s.T * s.T * s.d;  // one dense T x T x d product
  profile_add_attention_flops(dense_products * product);
  AttentionWorkspace work;
  if (table) {
    work.cos_pairs = table->cos_pairs.data();
    work.sin_pairs = table->sin_pairs.data();
  }
  work.threads = 2 * product < kParallelFlops ? 1 : num_threads();
  thread_local std::vector<float> scratch;
  scratch.resize(static_cast<size_t>(work.threads * attention_scratch_floats(s.T, s.d)));
  work.scratch = scratch.data();
  return work;
}

}  // namespace mg

// oneDNN layer normalization, exact GELU and causal softmax, forward and backward, with the
// plain kernels' contracts. oneDNN's primitives overwrite their outputs, while our
// backward kernels accumulate (dx +=): each backward writes into a scratch buffer held by
// its cached primitive and adds that into dx. Also home of the one engine and stream that
// every oneDNN kernel of the process shares.
#include "kernels/onednn_ops.h"

#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "core/error.h"

namespace mg {

namespace onednn_detail {

// Never destroyed, like the caches below, so no primitive outlives its engine at exit.
dnnl::engine& engine() {
  static auto* cpu = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *cpu;
}
dnnl::stream& stream() {
  static auto* in_order = new dnnl::stream(engine());
  return *in_order;
}
std::mutex& mutex() {
  static std::mutex lock;
  return lock;
}

namespace {
std::atomic<size_t> primitives_created{0};
}
void count_primitive() { ++primitives_created; }

}  // namespace onednn_detail

size_t onednn_cached_primitive_count() { return onednn_detail::primitives_created; }

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto f32 = memory::data_type::f32;

// One cached primitive with its argument memories (data handles set per call) and the
// scratch its op needs.
struct CachedOp {
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
  std::vector<float> scratch;

  void bind(int arg, const float* data) { args.at(arg).set_data_handle(const_cast<float*>(data)); }
  void run() {
    primitive.execute(onednn_detail::stream(), args);
    onednn_detail::stream().wait();
  }
};

enum class Op : int64_t { layernorm_fwd, layernorm_bwd, gelu_fwd, gelu_bwd, softmax_fwd, softmax_bwd };
using OpKey = std::array<int64_t, 5>;  // {op, sizes..., eps bits or flags}

struct OpKeyHash {
  size_t operator()(const OpKey& k) const {
    size_t h = 0;
    for (int64_t v : k) h = h * 0x9E3779B97F4A7C15ull + std::hash<int64_t>{}(v);
    return h;
  }
};

// The cached primitive for key, made by make() on first use. Caller holds the mutex.
CachedOp& cached(const OpKey& key, const std::function<CachedOp()>& make) {
  static auto* entries = new std::unordered_map<OpKey, CachedOp, OpKeyHash>;
  auto it = entries->find(key);
  if (it == entries->end()) {
    it = entries->emplace(key, make()).first;
    onednn_detail::count_primitive();
  }
  return it->second;
}

memory unbound(const memory::desc& md) { return memory(md, onednn_detail::engine(), DNNL_MEMORY_NONE); }

// dst[i] += src[i]; split over the pool only when there is enough work to pay for it.
void add_into(float* dst, const float* src, int64_t n) {
#pragma omp parallel for simd if (n >= (1 << 15))
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}

void check_causal_shape(int64_t Tq, int64_t Tk) {
  MG_CHECK(Tq <= Tk,
           "causal softmax: more queries (" + std::to_string(Tq) + ") than keys (" + std::to_string(Tk) + ")");
}

// Keys a query row i of the causal softmax sees: s < visible_keys(i).
inline int64_t visible_keys(int64_t i, int64_t Tq, int64_t Tk) { return Tk - Tq + i + 1; }

}  // namespace

// ---- LayerNorm: out = (x - mean) * rstd * weight + bias over rows of width D ----------

void layernorm_forward_onednn(float* out, float* mean, float* rstd, const float* x, const float* weight,
                              const float* bias, int64_t rows, int64_t D, float eps) {
  if (rows == 0 || D == 0) return;
  auto flags = dnnl::normalization_flags::none;
  if (weight) flags |= dnnl::normalization_flags::use_scale;
  if (bias) flags |= dnnl::normalization_flags::use_shift;
  std::lock_guard<std::mutex> lock(onednn_detail::mutex());
  CachedOp& op = cached({int64_t(Op::layernorm_fwd), rows, D, std::bit_cast<uint32_t>(eps), int64_t(flags)}, [&] {
    memory::desc data({rows, D}, f32, Tag::ab), stat({rows}, f32, Tag::a), param({D}, f32, Tag::a);
    dnnl::layer_normalization_forward::primitive_desc pd(
        {dnnl::prop_kind::forward_training, data, stat, eps, flags}, onednn_detail::engine());
    CachedOp made{dnnl::layer_normalization_forward(pd), {}, {}};
    made.args = {{DNNL_ARG_SRC, unbound(data)}, {DNNL_ARG_DST, unbound(data)}, {DNNL_ARG_MEAN, unbound(stat)},
                 {DNNL_ARG_VARIANCE, unbound(stat)}};
    if (weight) made.args.emplace(DNNL_ARG_SCALE, unbound(param));
    if (bias) made.args.emplace(DNNL_ARG_SHIFT, unbound(param));
    return made;
  });
  op.bind(DNNL_ARG_SRC, x);
  op.bind(DNNL_ARG_DST, out);
  op.bind(DNNL_ARG_MEAN, mean);
  op.bind(DNNL_ARG_VARIANCE, rstd);  // oneDNN saves the variance; turned into rstd below
  if (weight) op.bind(DNNL_ARG_SCALE, weight);
  if (bias) op.bind(DNNL_ARG_SHIFT, bias);
  op.run();
  for (int64_t r = 0; r < rows; ++r) rstd[r] = 1.0f / std::sqrt(rstd[r] + eps);
}

// The backward signature carries rstd, not eps, so oneDNN gets variance = 1/rstd^2 with
// eps = 0: it recomputes 1/sqrt(variance + 0), the very rstd of the forward.
// dxhat = dout * weight; dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat));
// dweight = sum over rows of dout * xhat; dbias = sum over rows of dout.
void layernorm_backward_onednn(float* dx, float* dweight, float* dbias, const float* dout, const float* x,
                               const float* weight, const float* mean, const float* rstd, int64_t rows,
                               int64_t D) {
  if (rows == 0 || D == 0) return;
  std::lock_guard<std::mutex> lock(onednn_detail::mutex());
  // scratch: variance [rows] | dx [rows,D] | dweight [D] | dbias [D] | ones [D] (null weight)
  CachedOp& op = cached({int64_t(Op::layernorm_bwd), rows, D, 0, 0}, [&] {
    memory::desc data({rows, D}, f32, Tag::ab), stat({rows}, f32, Tag::a), param({D}, f32, Tag::a);
    auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
    dnnl::layer_normalization_forward::primitive_desc hint(
        {dnnl::prop_kind::forward_training, data, stat, 0.0f, flags}, onednn_detail::engine());
    dnnl::layer_normalization_backward::primitive_desc pd(
        {dnnl::prop_kind::backward, data, data, stat, 0.0f, flags}, onednn_detail::engine(), hint);
    CachedOp made{dnnl::layer_normalization_backward(pd), {}, std::vector<float>(rows + rows * D + 3 * D)};
    std::fill(made.scratch.end() - D, made.scratch.end(), 1.0f);
    made.args = {{DNNL_ARG_SRC, unbound(data)},        {DNNL_ARG_MEAN, unbound(stat)},
                 {DNNL_ARG_VARIANCE, unbound(stat)},   {DNNL_ARG_DIFF_DST, unbound(data)},
                 {DNNL_ARG_SCALE, unbound(param)},     {DNNL_ARG_SHIFT, unbound(param)},
                 {DNNL_ARG_DIFF_SRC, unbound(data)},
                 {DNNL_ARG_DIFF_SCALE, unbound(param)}, {DNNL_ARG_DIFF_SHIFT, unbound(param)}};
    return made;
  });
  float* variance = op.scratch.data();
  float* dx_new = variance + rows;
  float* dweight_new = dx_new + rows * D;
  float* dbias_new = dweight_new + D;
  const float* ones = dbias_new + D;
  for (int64_t r = 0; r < rows; ++r) variance[r] = 1.0f / (rstd[r] * rstd[r]);
  op.bind(DNNL_ARG_SRC, x);
  op.bind(DNNL_ARG_MEAN, mean);
  op.bind(DNNL_ARG_VARIANCE, variance);
  op.bind(DNNL_ARG_DIFF_DST, dout);
  op.bind(DNNL_ARG_SCALE, weight ? weight : ones);
  op.bind(DNNL_ARG_SHIFT, ones);  // demanded by use_shift, though dx does not depend on it
  op.bind(DNNL_ARG_DIFF_SRC, dx_new);
  op.bind(DNNL_ARG_DIFF_SCALE, dweight_new);
  op.bind(DNNL_ARG_DIFF_SHIFT, dbias_new);
  op.run();
  if (dx) add_into(dx, dx_new, rows * D);
  if (dweight) add_into(dweight, dweight_new, D);
  if (dbias) add_into(dbias, dbias_new, D);
}

// ---- GELU (erf): out = x * Phi(x) --------------------------------------------------------

void gelu_forward_onednn(float* out, const float* x, int64_t n) {
  if (n == 0) return;
  std::lock_guard<std::mutex> lock(onednn_detail::mutex());
  CachedOp& op = cached({int64_t(Op::gelu_fwd), n, 0, 0, 0}, [&] {
    memory::desc data({n}, f32, Tag::a);
    dnnl::eltwise_forward::primitive_desc pd(
        {dnnl::prop_kind::forward_training, dnnl::algorithm::eltwise_gelu_erf, data}, onednn_detail::engine());
    return CachedOp{dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, unbound(data)}, {DNNL_ARG_DST, unbound(data)}}, {}};
  });
  op.bind(DNNL_ARG_SRC, x);
  op.bind(DNNL_ARG_DST, out);
  op.run();
}

namespace {

// d/dx [x Phi(x)] = Phi(x) + x phi(x); oneDNN computes dout times it straight into
// dx_overwrite, or else into scratch that is then added into dx.
void gelu_backward_into(float* dx, float* dx_overwrite, const float* dout, const float* x, int64_t n) {
  if (n == 0) return;
  std::lock_guard<std::mutex> lock(onednn_detail::mutex());
  CachedOp& op = cached({int64_t(Op::gelu_bwd), n, 0, 0, 0}, [&] {
    memory::desc data({n}, f32, Tag::a);
    dnnl::eltwise_forward::primitive_desc hint(
        {dnnl::prop_kind::forward_training, dnnl::algorithm::eltwise_gelu_erf, data}, onednn_detail::engine());
    dnnl::eltwise_backward::primitive_desc pd({dnnl::algorithm::eltwise_gelu_erf, data, data},
                                              onednn_detail::engine(), hint);
    return CachedOp{dnnl::eltwise_backward(pd),
                    {{DNNL_ARG_SRC, unbound(data)},
                     {DNNL_ARG_DIFF_DST, unbound(data)},
                     {DNNL_ARG_DIFF_SRC, unbound(data)}},
                    std::vector<float>(n)};
  });
  op.bind(DNNL_ARG_SRC, x);
  op.bind(DNNL_ARG_DIFF_DST, dout);
  op.bind(DNNL_ARG_DIFF_SRC, dx_overwrite ? dx_overwrite : op.scratch.data());
  op.run();
  if (!dx_overwrite) add_into(dx, op.scratch.data(), n);
}

}  // namespace

void gelu_backward_onednn(float* dx, const float* dout, const float* x, int64_t n) {
  gelu_backward_into(dx, nullptr, dout, x, n);
}

void gelu_backward_onednn_overwrite(float* dx, const float* dout, const float* x, int64_t n) {
  gelu_backward_into(nullptr, dx, dout, x, n);
}

// ---- Causal softmax over scores [batch,Tq,Tk] ------------------------------------------

// The mask goes in as -inf scores, so oneDNN's row max and sum see only visible keys; the
// masked weights are then set to exactly 0 rather than trusting exp(-inf) to be exact.
void causal_softmax_forward_onednn(float* weights, const float* scores, int64_t batch, int64_t Tq, int64_t Tk) {
  if (batch == 0 || Tq == 0) return;
  check_causal_shape(Tq, Tk);
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const int64_t rows = batch * Tq;
#pragma omp parallel for if (rows * Tk >= (1 << 15))
  for (int64_t r = 0; r < rows; ++r) {
    int64_t seen = visible_keys(r % Tq, Tq, Tk);
    const float* s = scores + r * Tk;
    float* w = weights + r * Tk;
    for (int64_t k = 0; k < Tk; ++k) w[k] = k < seen ? s[k] : neg_inf;
  }
  std::lock_guard<std::mutex> lock(onednn_detail::mutex());
  CachedOp& op = cached({int64_t(Op::softmax_fwd), batch, Tq, Tk, 0}, [&] {
    memory::desc data({batch, Tq, Tk}, f32, Tag::abc);
    dnnl::softmax_forward::primitive_desc pd({dnnl::prop_kind::forward_training, data, 2}, onednn_detail::engine());
    return CachedOp{dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, unbound(data)}, {DNNL_ARG_DST, unbound(data)}}, {}};
  });
  op.bind(DNNL_ARG_SRC, weights);  // in place: the masked copy becomes the weights
  op.bind(DNNL_ARG_DST, weights);
  op.run();
  for (int64_t r = 0; r < rows; ++r) {
    float* w = weights + r * Tk;
    for (int64_t k = visible_keys(r % Tq, Tq, Tk); k < Tk; ++k) w[k] = 0.0f;
  }
}

// w = softmax(s) row by row, so ds = w * (dw - sum_k w_k dw_k); masked entries get nothing.
void causal_softmax_backward_onednn(float* dscores, const float* dweights, const float* weights, int64_t batch,
                                    int64_t Tq, int64_t Tk) {
  if (batch == 0 || Tq == 0) return;
  check_causal_shape(Tq, Tk);
  std::lock_guard<std::mutex> lock(onednn_detail::mutex());
  CachedOp& op = cached({int64_t(Op::softmax_bwd), batch, Tq, Tk, 0}, [&] {
    memory::desc data({batch, Tq, Tk}, f32, Tag::abc);
    dnnl::softmax_forward::primitive_desc hint({dnnl::prop_kind::forward_training, data, 2},
                                               onednn_detail::engine());
    dnnl::softmax_backward::primitive_desc pd({data, data, 2}, onednn_detail::engine(), hint);
    return CachedOp{dnnl::softmax_backward(pd),
                    {{DNNL_ARG_DST, unbound(data)},
                     {DNNL_ARG_DIFF_DST, unbound(data)},
                     {DNNL_ARG_DIFF_SRC, unbound(data)}},
                    std::vector<float>(batch * Tq * Tk)};
  });
  op.bind(DNNL_ARG_DST, weights);
  op.bind(DNNL_ARG_DIFF_DST, dweights);
  op.bind(DNNL_ARG_DIFF_SRC, op.scratch.data());
  op.run();
  const int64_t rows = batch * Tq;
  const float* ds_new = op.scratch.data();
#pragma omp parallel for if (rows * Tk >= (1 << 15))
  for (int64_t r = 0; r < rows; ++r) {
    int64_t seen = visible_keys(r % Tq, Tq, Tk);
    for (int64_t k = 0; k < seen; ++k) dscores[r * Tk + k] += ds_new[r * Tk + k];
  }
}

}  // namespace mg

// oneDNN layer normalization (forward) and exact GELU, with the plain kernels' contracts.
// oneDNN's primitives overwrite their outputs: an accumulating GELU backward writes into
// a scratch buffer held by its cached primitive and adds that into dx. Also home of the
// one engine and stream that every oneDNN kernel of the process shares.
#include "kernels/onednn_ops.h"

#include <omp.h>

#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <functional>
#include <optional>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "core/error.h"
#include "kernels/elementwise.h"
#include "kernels/parallel.h"
#include "kernels/profile.h"

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
int primitive_threads() { return omp_get_max_threads(); }

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

enum class Op : int64_t { layernorm_fwd, gelu_fwd, gelu_bwd };
using OpKey = std::array<int64_t, 6>;  // {op, sizes..., eps bits or flags, threads (cached() sets it)}

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
  OpKey keyed = key;
  keyed.back() = onednn_detail::primitive_threads();
  auto it = entries->find(keyed);
  if (it == entries->end()) {
    it = entries->emplace(keyed, make()).first;
    onednn_detail::count_primitive();
  }
  return it->second;
}

memory unbound(const memory::desc& md) { return memory(md, onednn_detail::engine(), DNNL_MEMORY_NONE); }

}  // namespace

// ---- LayerNorm: out = (x - mean) * rstd * weight + bias over rows of width D ----------

void layernorm_forward_onednn(float* out, float* mean, float* rstd, const float* x, const float* weight,
                              const float* bias, int64_t rows, int64_t D, float eps) {
  ProfileScope scope(OpFamily::layernorm);
  if (rows == 0 || D == 0) return;
  auto flags = dnnl::normalization_flags::none;
  if (weight) flags |= dnnl::normalization_flags::use_scale;
  if (bias) flags |= dnnl::normalization_flags::use_shift;
  std::optional<OneThreadScope> small;
  if (rows * D <= kParallelWork) small.emplace();
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

// ---- GELU (erf): out = x * Phi(x) --------------------------------------------------------

void gelu_forward_onednn(float* out, const float* x, int64_t n) {
  ProfileScope scope(OpFamily::gelu);
  if (n == 0) return;
  std::optional<OneThreadScope> small;
  if (n <= kParallelWork) small.emplace();
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

// d/dx [x Phi(x)] = Phi(x) + x phi(x); oneDNN computes dout times it straight into dx
// when overwriting, or else into scratch that is then added into dx.
void gelu_backward_onednn(float* dx, const float* dout, const float* x, int64_t n, bool accumulate) {
  ProfileScope scope(OpFamily::gelu);
  if (n == 0) return;
  std::optional<OneThreadScope> small;
  if (n <= kParallelWork) small.emplace();
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
  op.bind(DNNL_ARG_DIFF_SRC, accumulate ? op.scratch.data() : dx);
  op.run();
  if (accumulate) add_scaled(dx, op.scratch.data(), 1.0f, n, true);
}


}  // namespace mg

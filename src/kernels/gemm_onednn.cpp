// oneDNN backend: every distinct GEMM (shape, transposes, leading dimensions, batch
// strides, alpha, beta, which epilogue terms, thread count) becomes one matmul primitive,
// created on first use and cached.
//   C = (alpha * op(A) op(B) + beta * C + bias + addend) * multiplier
// alpha is the output scale, bias the matmul's own bias, and then the post-ops in order:
// beta the sum post-op (dst = beta * dst_old + alpha * acc), the addend a binary add and
// the multiplier a binary multiply, each of a full [M,N] tensor. With beta == 0 there is
// no sum post-op, so C's old contents (even NaN) are never read.
// A transpose is only a memory descriptor: op(A) [M,K] stored as [K,M] with row stride lda
// has strides {1, lda}. The batched form is one 3-D matmul [batch,M,K] x [batch,K,N] with
// the batch strides when oneDNN has an optimised kernel for them (a batch stride of 0 is a
// broadcast dimension of size 1), else a loop over one 2-D primitive.
#include <bit>
#include <cstring>
#include <functional>
#include <unordered_map>

#include "kernels/gemm.h"
#include "kernels/onednn_ops.h"
#include "kernels/parallel.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "core/error.h"

namespace mg {
namespace {

using dnnl::memory;

struct GemmKey {
  bool trans_a, trans_b;
  int64_t M, N, K, lda, ldb, ldc, batch, stride_a, stride_b, stride_c;
  uint32_t alpha_bits, beta_bits;  // compared bit for bit: -0.0 and NaN are distinct keys
  bool bias, addend, multiplier;   // which epilogue terms are present
  int threads;                     // onednn_detail::primitive_threads() at creation
  bool operator==(const GemmKey&) const = default;
};

struct GemmKeyHash {
  size_t operator()(const GemmKey& k) const {
    size_t h = (size_t{k.trans_a} << 4) | (size_t{k.trans_b} << 3) | (size_t{k.bias} << 2) |
               (size_t{k.addend} << 1) | size_t{k.multiplier};
    for (int64_t v : {k.M, k.N, k.K, k.lda, k.ldb, k.ldc, k.batch, k.stride_a, k.stride_b, k.stride_c,
                      int64_t{k.alpha_bits}, int64_t{k.beta_bits}, int64_t{k.threads}})
      h = h * 0x9E3779B97F4A7C15ull + std::hash<int64_t>{}(v);
    return h;
  }
};

struct CachedGemm {
  dnnl::matmul matmul;
  memory a, b, c, bias, addend, multiplier;  // descriptors fixed; data handles set per call
  std::unordered_map<int, memory> args;  // the same handles, keyed by argument
  bool per_batch_loop = false;           // the primitive is 2-D and runs once per batch entry
};

// Never destroyed: primitives must not outlive the engine in static destruction order.
std::unordered_map<GemmKey, CachedGemm, GemmKeyHash>& cache() {
  static auto* entries = new std::unordered_map<GemmKey, CachedGemm, GemmKeyHash>;
  return *entries;
}

// op(X) [rows,cols], stored row-major as [rows, ld] or, when transposed, as [cols, ld].
// batched: [batch, rows, cols] with entry i at batch_stride * i; stride 0 broadcasts.
memory::desc operand_desc(bool batched, int64_t batch, int64_t batch_stride, int64_t rows, int64_t cols,
                          int64_t ld, bool transposed) {
  memory::dims strides = transposed ? memory::dims{1, ld} : memory::dims{ld, 1};
  if (!batched) return memory::desc({rows, cols}, memory::data_type::f32, strides);
  // A broadcast entry's stride is never stepped; any positive value past the matrix will do.
  int64_t footprint = (transposed ? cols : rows) * ld;
  if (batch_stride == 0)
    return memory::desc({1, rows, cols}, memory::data_type::f32, {footprint, strides[0], strides[1]});
  return memory::desc({batch, rows, cols}, memory::data_type::f32, {batch_stride, strides[0], strides[1]});
}

// user_scratchpad: the caller passes the primitive's scratchpad (gemm_onednn_one_thread's
// threads, each its own) instead of the library keeping one.
dnnl::matmul::primitive_desc matmul_pd(const GemmKey& k, bool batched, bool user_scratchpad = false) {
  memory::desc a = operand_desc(batched, k.batch, k.stride_a, k.M, k.K, k.lda, k.trans_a);
  memory::desc b = operand_desc(batched, k.batch, k.stride_b, k.K, k.N, k.ldb, k.trans_b);
  memory::desc c = operand_desc(batched, k.batch, k.stride_c, k.M, k.N, k.ldc, false);
  dnnl::primitive_attr attr;
  if (user_scratchpad) attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  float alpha = std::bit_cast<float>(k.alpha_bits), beta = std::bit_cast<float>(k.beta_bits);
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  dnnl::post_ops ops;
  if (beta != 0.0f) ops.append_sum(beta);
  if (k.addend) ops.append_binary(dnnl::algorithm::binary_add, c);
  if (k.multiplier) ops.append_binary(dnnl::algorithm::binary_mul, c);
  attr.set_post_ops(ops);
  if (!k.bias) return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr, onednn_detail::engine());
  memory::desc bias({1, k.N}, memory::data_type::f32, memory::dims{k.N, 1});  // broadcast over rows
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, bias, c), attr, onednn_detail::engine());
}

CachedGemm make_gemm(const GemmKey& k) {
  CachedGemm entry;
  dnnl::matmul::primitive_desc pd;
  bool have_3d = false;
  // The 3-D form needs a real batch stride for C (0 would make entries overwrite each
  // other) and an optimised kernel: the reference one would be slower than the loop.
  if (k.batch > 1 && k.stride_c != 0) {
    try {
      pd = matmul_pd(k, true);
      have_3d = std::strncmp(pd.impl_info_str(), "ref", 3) != 0;
    } catch (const dnnl::error&) {
      have_3d = false;
    }
  }
  if (!have_3d) pd = matmul_pd(k, false);
  entry.per_batch_loop = k.batch > 1 && !have_3d;
  entry.matmul = dnnl::matmul(pd);
  onednn_detail::count_primitive();
  dnnl::engine& eng = onednn_detail::engine();
  entry.a = memory(pd.src_desc(), eng, DNNL_MEMORY_NONE);
  entry.b = memory(pd.weights_desc(), eng, DNNL_MEMORY_NONE);
  entry.c = memory(pd.dst_desc(), eng, DNNL_MEMORY_NONE);
  entry.args = {{DNNL_ARG_SRC, entry.a}, {DNNL_ARG_WEIGHTS, entry.b}, {DNNL_ARG_DST, entry.c}};
  // A binary post-op's operand is argument (its index in the post-op chain) | SRC_1.
  int post_op = std::bit_cast<float>(k.beta_bits) != 0.0f ? 1 : 0;
  if (k.bias) {
    entry.bias = memory(pd.bias_desc(), eng, DNNL_MEMORY_NONE);
    entry.args.emplace(DNNL_ARG_BIAS, entry.bias);
  }
  if (k.addend) {
    entry.addend = memory(pd.dst_desc(), eng, DNNL_MEMORY_NONE);
    entry.args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_op++) | DNNL_ARG_SRC_1, entry.addend);
  }
  if (k.multiplier) {
    entry.multiplier = memory(pd.dst_desc(), eng, DNNL_MEMORY_NONE);
    entry.args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_op++) | DNNL_ARG_SRC_1, entry.multiplier);
  }
  return entry;
}

// K == 0: the product is empty, so C = beta * C (beta == 0 writes zeros over anything).
void scale_only(const GemmArgs& g) {
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t i = 0; i < g.M; ++i) {
      float* row = g.C + b * g.stride_c + i * g.ldc;
      for (int64_t j = 0; j < g.N; ++j) row[j] = g.beta == 0.0f ? 0.0f : g.beta * row[j];
    }
}

GemmKey key_of(const GemmArgs& g, int threads) {
  GemmKey key{g.trans_a, g.trans_b, g.M, g.N, g.K, g.lda, g.ldb, g.ldc, g.batch, g.stride_a,
              g.stride_b, g.stride_c, std::bit_cast<uint32_t>(g.alpha), std::bit_cast<uint32_t>(g.beta),
              g.bias != nullptr, g.addend != nullptr, g.multiplier != nullptr, threads};
  if (g.batch == 1) key.stride_a = key.stride_b = key.stride_c = 0;  // unused, so not part of the identity
  return key;
}

// A 2-D primitive made for one thread, shared by every thread that runs it
// (gemm_onednn_one_thread): oneDNN's primitives may run on several threads at once, its
// memory objects and streams may not, so those are each thread's own (ThreadBinding).
struct OneThreadGemm {
  dnnl::matmul matmul;
  memory::desc a, b, c, bias, addend, multiplier, scratchpad;
};

// Never destroyed, like cache().
std::unordered_map<GemmKey, OneThreadGemm, GemmKeyHash>& one_thread_cache() {
  static auto* entries = new std::unordered_map<GemmKey, OneThreadGemm, GemmKeyHash>;
  return *entries;
}

OneThreadGemm make_one_thread_gemm(const GemmKey& k) {
  OneThreadScope one_thread;  // oneDNN sizes a primitive's partition by the thread count at creation
  const dnnl::matmul::primitive_desc pd = matmul_pd(k, false, true);
  onednn_detail::count_primitive();
  return {dnnl::matmul(pd),       pd.src_desc(),     pd.weights_desc(), pd.dst_desc(),
          k.bias ? pd.bias_desc() : memory::desc(), pd.dst_desc(), pd.dst_desc(), pd.scratchpad_desc()};
}

// One thread's memory objects for one OneThreadGemm: handles set per call; the scratchpad
// is the thread's own, allocated by oneDNN once.
struct ThreadBinding {
  memory a, b, c, bias, addend, multiplier, scratchpad;
  std::unordered_map<int, memory> args;
};

ThreadBinding bind(const OneThreadGemm& gemm, const GemmKey& k) {
  dnnl::engine& eng = onednn_detail::engine();
  ThreadBinding t;
  t.a = memory(gemm.a, eng, DNNL_MEMORY_NONE);
  t.b = memory(gemm.b, eng, DNNL_MEMORY_NONE);
  t.c = memory(gemm.c, eng, DNNL_MEMORY_NONE);
  t.args = {{DNNL_ARG_SRC, t.a}, {DNNL_ARG_WEIGHTS, t.b}, {DNNL_ARG_DST, t.c}};
  if (gemm.scratchpad.get_size() > 0) {
    t.scratchpad = memory(gemm.scratchpad, eng);
    t.args.emplace(DNNL_ARG_SCRATCHPAD, t.scratchpad);
  }
  int post_op = std::bit_cast<float>(k.beta_bits) != 0.0f ? 1 : 0;  // as make_gemm numbers them
  if (k.bias) {
    t.bias = memory(gemm.bias, eng, DNNL_MEMORY_NONE);
    t.args.emplace(DNNL_ARG_BIAS, t.bias);
  }
  if (k.addend) {
    t.addend = memory(gemm.addend, eng, DNNL_MEMORY_NONE);
    t.args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_op++) | DNNL_ARG_SRC_1, t.addend);
  }
  if (k.multiplier) {
    t.multiplier = memory(gemm.multiplier, eng, DNNL_MEMORY_NONE);
    t.args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_op++) | DNNL_ARG_SRC_1, t.multiplier);
  }
  return t;
}

}  // namespace

void gemm_onednn_one_thread(const GemmArgs& g) {
  MG_CHECK(g.M >= 0 && g.N >= 0 && g.K >= 0 && g.batch == 1, "gemm_onednn_one_thread: a 2-D product");
  check_gemm_epilogue(g);
  if (g.M == 0 || g.N == 0) return;
  if (g.K == 0) {
    scale_only(g);
    return apply_gemm_epilogue(g);
  }
  const GemmKey key = key_of(g, 1);
  const OneThreadGemm* gemm = nullptr;
  {
    std::lock_guard<std::mutex> lock(onednn_detail::mutex());
    auto it = one_thread_cache().find(key);
    if (it == one_thread_cache().end()) it = one_thread_cache().emplace(key, make_one_thread_gemm(key)).first;
    gemm = &it->second;  // a node's address: stable while the map grows
  }
  thread_local std::unordered_map<const OneThreadGemm*, ThreadBinding> bindings;
  thread_local dnnl::stream stream(onednn_detail::engine());
  auto bound = bindings.find(gemm);
  if (bound == bindings.end()) bound = bindings.emplace(gemm, bind(*gemm, key)).first;
  ThreadBinding& t = bound->second;
  t.a.set_data_handle(const_cast<float*>(g.A));
  t.b.set_data_handle(const_cast<float*>(g.B));
  t.c.set_data_handle(g.C);
  if (g.bias) t.bias.set_data_handle(const_cast<float*>(g.bias));
  if (g.addend) t.addend.set_data_handle(const_cast<float*>(g.addend));
  if (g.multiplier) t.multiplier.set_data_handle(const_cast<float*>(g.multiplier));
  gemm->matmul.execute(stream, t.args);
  stream.wait();
}

void gemm_onednn(const GemmArgs& g) {
  MG_CHECK(g.M >= 0 && g.N >= 0 && g.K >= 0 && g.batch >= 0, "gemm_onednn: negative size");
  check_gemm_epilogue(g);
  if (g.M == 0 || g.N == 0 || g.batch == 0) return;
  if (g.K == 0) {
    scale_only(g);
    return apply_gemm_epilogue(g);
  }
  const GemmKey key = key_of(g, onednn_detail::primitive_threads());

  std::lock_guard<std::mutex> lock(onednn_detail::mutex());
  auto it = cache().find(key);
  if (it == cache().end()) it = cache().emplace(key, make_gemm(key)).first;
  CachedGemm& entry = it->second;
  dnnl::stream& stream = onednn_detail::stream();
  // oneDNN takes non-const handles for every argument; A and B are only read.
  int64_t runs = entry.per_batch_loop ? g.batch : 1;
  for (int64_t b = 0; b < runs; ++b) {
    entry.a.set_data_handle(const_cast<float*>(g.A + b * g.stride_a));
    entry.b.set_data_handle(const_cast<float*>(g.B + b * g.stride_b));
    entry.c.set_data_handle(g.C + b * g.stride_c);
    // The epilogue comes only with batch 1, so b is 0 here whenever it is set.
    if (g.bias) entry.bias.set_data_handle(const_cast<float*>(g.bias));
    if (g.addend) entry.addend.set_data_handle(const_cast<float*>(g.addend));
    if (g.multiplier) entry.multiplier.set_data_handle(const_cast<float*>(g.multiplier));
    entry.matmul.execute(stream, entry.args);
  }
  stream.wait();
}

}  // namespace mg

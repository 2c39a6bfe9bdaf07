// Kernel micro-benchmarks, to choose the default GEMM backend (runtime.cpp) and to decide
// whether the oneDNN element-wise kernels earn their place over the plain ones.
//   gemm/<backend>/<case>/threads:<n>      one GEMM of the model, GFLOP/s counter
//   gemm_step/<backend>/threads:<n>        every GEMM of one training step, in its counts
//   gemm_square/<backend>/<s>/threads:<n>  C = A B on s x s squares (s = 1024, 2048): the
//                                          machine's sgemm peak as each backend reaches it
//                                          (scripts/benchmark.py takes oneDNN's from here)
//   <op>/<plain|onednn>/threads:<n>        LayerNorm [2048,64], GELU [2048,256],
//                                          causal softmax [64,64,64], forward and backward
//   packed_linear/<out>x<in>/rows:<n>      the decoder's packed product (one thread): one
//                                          row is a generation step, 64 a rebuilt window
// Shapes are the defaults: B = 32, T = 64 (so B*T = 2048 rows), D = 64, H = 2, d = 32,
// 4 blocks, MLP width 256, V = 79. Linear weights are [out,in]: y = x W^T.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kernels/fused_attention.h"
#include "kernels/gelu.h"
#include "kernels/gemm.h"
#include "kernels/layernorm.h"
#include "kernels/onednn_ops.h"
#include "kernels/packed_linear.h"
#include "kernels/runtime.h"
#include "kernels/softmax.h"
#include "core/random.h"

namespace {

using mg::GemmArgs;

struct GemmCase {
  std::string name;
  GemmArgs shape;     // pointers unset
  int per_step;       // how many times one training step runs it
};

GemmArgs dense(int64_t M, int64_t N, int64_t K, bool trans_a, bool trans_b, float beta = 0.0f) {
  GemmArgs g = mg::tight_gemm_args({.trans_a = trans_a, .trans_b = trans_b}, M, N, K);
  g.beta = beta;
  return g;
}

GemmArgs batched(int64_t batch, int64_t M, int64_t N, int64_t K, bool trans_a, bool trans_b) {
  GemmArgs g = dense(M, N, K, trans_a, trans_b);
  g.batch = batch;
  g.stride_a = M * K;
  g.stride_b = K * N;
  g.stride_c = M * N;
  return g;
}

// Per linear y = x W^T: forward x W^T (B^T), dx = dy W, dW += dy^T x (A^T, K = 2048, beta 1);
// q, k and v come from one [3D,D] GEMM.
// Attention per block, 64 = B*H heads: s = q k^T and dw = do v^T ([64,32]x[32,64]^T form),
// o = w v and dq = ds k, dk = ds^T q and dv = w^T do.
std::vector<GemmCase> model_cases() {
  const int64_t rows = 2048, D = 64, F = 256, V = 79, heads = 64, T = 64, d = 32;
  const int blocks = 4;
  return {
      {"qkv_fwd_2048x192x64", dense(rows, 3 * D, D, false, true), blocks},
      {"qkv_dx_2048x64x192", dense(rows, D, 3 * D, false, false), blocks},
      {"qkv_dW_192x64x2048", dense(3 * D, D, rows, true, false, 1.0f), blocks},
      {"o_fwd_2048x64x64", dense(rows, D, D, false, true), blocks},
      {"o_dx_2048x64x64", dense(rows, D, D, false, false), blocks},
      {"o_dW_64x64x2048", dense(D, D, rows, true, false, 1.0f), blocks},
      {"fc_fwd_2048x256x64", dense(rows, F, D, false, true), blocks},
      {"fc_dx_2048x64x256", dense(rows, D, F, false, false), blocks},
      {"fc_dW_256x64x2048", dense(F, D, rows, true, false, 1.0f), blocks},
      {"proj_fwd_2048x64x256", dense(rows, D, F, false, true), blocks},
      {"proj_dx_2048x256x64", dense(rows, F, D, false, false), blocks},
      {"proj_dW_64x256x2048", dense(D, F, rows, true, false, 1.0f), blocks},
      {"head_fwd_2048x79x64", dense(rows, V, D, false, true), 1},
      {"head_dx_2048x64x79", dense(rows, D, V, false, false), 1},
      {"head_dW_79x64x2048", dense(V, D, rows, true, false, 1.0f), 1},
      {"att_qkT_64x(64x64x32)", batched(heads, T, T, d, false, true), 2 * blocks},
      {"att_wv_64x(64x32x64)", batched(heads, T, d, T, false, false), 2 * blocks},
      {"att_wTdo_64x(64x32x64)", batched(heads, T, d, T, true, false), 2 * blocks},
  };
}

double flops(const GemmArgs& g) { return 2.0 * g.batch * g.M * g.N * g.K; }

// Operand buffers for one case, filled with small random values.
struct GemmBuffers {
  std::vector<float> a, b, c;
  GemmArgs args;
  explicit GemmBuffers(const GemmArgs& shape) : args(shape) {
    mg::Rng rng(1);
    auto fill = [&](std::vector<float>& v, int64_t n) {
      v.resize(n);
      for (float& x : v) x = static_cast<float>(rng.uniform() - 0.5);
    };
    fill(a, shape.batch * shape.M * shape.K);
    fill(b, shape.batch * shape.K * shape.N);
    fill(c, shape.batch * shape.M * shape.N);
    args.A = a.data();
    args.B = b.data();
    args.C = c.data();
  }
};

using GemmFn = void (*)(const GemmArgs&);

void bench_gemm(benchmark::State& state, GemmFn fn, GemmArgs shape, int threads) {
  mg::set_num_threads(threads);
  GemmBuffers buf(shape);
  fn(buf.args);  // first call builds any cached primitive
  for (auto _ : state) {
    fn(buf.args);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(flops(shape) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void bench_gemm_step(benchmark::State& state, GemmFn fn, int threads) {
  mg::set_num_threads(threads);
  std::vector<GemmCase> cases = model_cases();
  std::vector<GemmBuffers> bufs;
  double step_flops = 0.0;
  for (const GemmCase& c : cases) {
    bufs.emplace_back(c.shape);
    step_flops += c.per_step * flops(c.shape);
    fn(bufs.back().args);
  }
  for (auto _ : state) {
    for (size_t i = 0; i < cases.size(); ++i)
      for (int r = 0; r < cases[i].per_step; ++r) fn(bufs[i].args);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(step_flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ---- Element-wise kernels: plain against oneDNN -------------------------------------

struct Tensors {
  std::vector<float> x, y, dy, dx, w, b, dw, db, mean, rstd;
  Tensors(int64_t n, int64_t rows, int64_t D) {
    mg::Rng rng(2);
    auto fill = [&](std::vector<float>& v, int64_t count) {
      v.resize(count);
      for (float& e : v) e = static_cast<float>(2.0 * rng.uniform() - 1.0);
    };
    fill(x, n), fill(dy, n), fill(w, D), fill(b, D);
    y.assign(n, 0.0f), dx.assign(n, 0.0f), dw.assign(D, 0.0f), db.assign(D, 0.0f);
    mean.assign(rows, 0.0f), rstd.assign(rows, 0.0f);
  }
};

enum class Impl { plain, onednn };

template <typename Body>
void run_timed(benchmark::State& state, int threads, Body body) {
  mg::set_num_threads(threads);
  body();  // warm-up, builds any cached primitive
  for (auto _ : state) {
    body();
    benchmark::ClobberMemory();
  }
}

void bench_layernorm(benchmark::State& state, Impl impl, bool backward, int threads) {
  const int64_t rows = 2048, D = 64;
  Tensors t(rows * D, rows, D);
  auto fwd = impl == Impl::plain ? mg::layernorm_forward : mg::layernorm_forward_onednn;
  fwd(t.y.data(), t.mean.data(), t.rstd.data(), t.x.data(), t.w.data(), t.b.data(), rows, D, 1e-5f);
  run_timed(state, threads, [&] {
    if (!backward)
      fwd(t.y.data(), t.mean.data(), t.rstd.data(), t.x.data(), t.w.data(), t.b.data(), rows, D, 1e-5f);
    else
      mg::layernorm_backward(t.dx.data(), t.dw.data(), t.db.data(), t.dy.data(), t.x.data(), t.w.data(),
                             t.mean.data(), t.rstd.data(), rows, D);
  });
}

void bench_gelu(benchmark::State& state, Impl impl, bool backward, int threads) {
  const int64_t n = 2048 * 256;
  Tensors t(n, 1, 1);
  auto fwd = impl == Impl::plain ? mg::gelu_forward : mg::gelu_forward_onednn;
  auto bwd = impl == Impl::plain ? mg::gelu_backward : mg::gelu_backward_onednn;
  run_timed(state, threads, [&] {
    if (!backward)
      fwd(t.y.data(), t.x.data(), n);
    else
      bwd(t.dx.data(), t.dy.data(), t.x.data(), n, true);
  });
}

// The plain kernels only: oneDNN's softmax measured slower both ways
// (docs/performance.md, "Backends") and is gone.
// The fused MLP's forward: GELU and its slope in one pass, in place over the input.
void bench_gelu_with_slope(benchmark::State& state, int threads) {
  const int64_t n = 2048 * 256;
  Tensors t(n, 1, 1);
  run_timed(state, threads, [&] { mg::gelu_forward_with_slope(t.y.data(), t.dx.data(), t.x.data(), n); });
}

// The fused attention kernel as the causal_attention op calls it (autograd/ops_attention.cpp),
// scale 0.17.
void fused_forward(float* merged, float* weights, const float* qkv, const mg::RopeTable& table,
                   const mg::AttentionShape& s) {
  const mg::AttentionWorkspace work = mg::attention_workspace(s, &table, 2);
  mg::attention_heads_forward(merged, weights, qkv, work.cos_pairs, work.sin_pairs, 0.17f, s.B, s.T, s.H, s.d,
                              work.scratch, work.threads);
}
void fused_backward(float* dqkv, const float* dmerged, const float* qkv, const float* weights,
                    const mg::RopeTable& table, const mg::AttentionShape& s, bool accumulate) {
  const mg::AttentionWorkspace work = mg::attention_workspace(s, &table, 4);
  mg::attention_heads_backward(dqkv, dmerged, qkv, weights, work.cos_pairs, work.sin_pairs, 0.17f, s.B, s.T, s.H,
                               s.d, accumulate, work.scratch, work.threads);
}

// The fused attention at the default model's shape (B 32, T 64, H 2, d 32), with RoPE, as
// training runs it (no weights written; the backward makes them again) or, `kept`, writing
// the weights and reading them back (a reader's forward; training's before issue 34).
void bench_attention(benchmark::State& state, bool backward, bool kept, int threads) {
  const mg::AttentionShape s{32, 64, 2, 32};
  const int64_t rows = s.B * s.T, D = s.H * s.d;
  const mg::RopeTable table = mg::make_rope_table(s.T, s.d, 10000.0);
  Tensors qkv(rows * 3 * D, 1, 1), merged(rows * D, 1, 1), weights(s.B * s.H * s.T * s.T, 1, 1);
  float* w = kept ? weights.y.data() : nullptr;
  fused_forward(merged.y.data(), weights.y.data(), qkv.x.data(), table, s);
  run_timed(state, threads, [&] {
    if (!backward)
      fused_forward(merged.y.data(), w, qkv.x.data(), table, s);
    else
      fused_backward(qkv.dx.data(), merged.dy.data(), qkv.x.data(), w, table, s, false);
  });
}

void bench_softmax(benchmark::State& state, bool backward, int threads) {
  const int64_t batch = 32 * 2, T = 64;
  Tensors t(batch * T * T, 1, 1);
  mg::causal_softmax_forward(t.y.data(), t.x.data(), batch, T, T);
  run_timed(state, threads, [&] {
    if (!backward)
      mg::causal_softmax_forward(t.y.data(), t.x.data(), batch, T, T);
    else
      mg::causal_softmax_backward(t.dx.data(), t.dy.data(), t.y.data(), batch, T, T, 1.0f, true);
  });
}

// Benchmark names joined from parts by appending (GCC 12 warns falsely on "a" + string).
std::string join(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

// y[rows, out] = x[rows, in] W^T + b through the packed panels, on the calling thread.
void bench_packed_linear(benchmark::State& state, int64_t out, int64_t in, int64_t rows) {
  mg::Rng rng(3);
  std::vector<float> w(out * in), b(out), x(rows * in), y(rows * out);
  for (float& v : w) v = static_cast<float>(rng.uniform() - 0.5);
  for (float& v : x) v = static_cast<float>(rng.uniform() - 0.5);
  const mg::PackedLinear layer(w.data(), b.data(), out, in);
  for (auto _ : state) {
    layer.forward(y.data(), out, x.data(), in, rows, false);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * rows * out * in * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  const std::pair<const char*, GemmFn> backends[] = {{"openblas", mg::gemm_openblas}, {"onednn", mg::gemm_onednn}};
  // The peak squares at 1, 2 and every core's thread count.
  std::set<int> peak_threads = {1, 2};
  peak_threads.insert(std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
  for (int threads : peak_threads)
    for (auto [name, fn] : backends)
      for (int64_t n : {1024, 2048})
        benchmark::RegisterBenchmark(
            join({"gemm_square/", name, "/", std::to_string(n), "/threads:", std::to_string(threads)}).c_str(),
            bench_gemm, fn, dense(n, n, n, false, false), threads)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
  for (auto [out, in] : {std::pair<int64_t, int64_t>{192, 64}, {256, 64}, {64, 256}})
    for (int64_t rows : {1, 64})
      benchmark::RegisterBenchmark(
          join({"packed_linear/", std::to_string(out), "x", std::to_string(in), "/rows:", std::to_string(rows)})
              .c_str(),
          bench_packed_linear, out, in, rows)
          ->Unit(benchmark::kMicrosecond);
  for (int threads : {1, 2}) {
    const std::string suffix = join({"/threads:", std::to_string(threads)});
    for (auto [name, fn] : backends) {
      for (const GemmCase& c : model_cases())
        benchmark::RegisterBenchmark(join({"gemm/", name, "/", c.name, suffix}).c_str(), bench_gemm, fn, c.shape,
                                     threads)
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
      benchmark::RegisterBenchmark(join({"gemm_step/", name, suffix}).c_str(), bench_gemm_step, fn, threads)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
    for (auto [impl, impl_name] : {std::pair{Impl::plain, "plain"}, std::pair{Impl::onednn, "onednn"}})
      for (auto [backward, dir] : {std::pair{false, "fwd"}, std::pair{true, "bwd"}}) {
        const std::string tail = join({"/", impl_name, suffix});
        if (impl == Impl::plain || !backward)  // LayerNorm's backward is the plain one on every backend
          benchmark::RegisterBenchmark(join({"layernorm_", dir, "_2048x64", tail}).c_str(), bench_layernorm, impl,
                                       backward, threads)
              ->Unit(benchmark::kMicrosecond)
              ->UseRealTime();
        benchmark::RegisterBenchmark(join({"gelu_", dir, "_2048x256", tail}).c_str(), bench_gelu, impl, backward,
                                     threads)
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
        if (impl == Impl::plain && !backward)
          benchmark::RegisterBenchmark(join({"gelu_fwd_with_slope_2048x256", tail}).c_str(), bench_gelu_with_slope,
                                       threads)
              ->Unit(benchmark::kMicrosecond)
              ->UseRealTime();
        if (impl == Impl::plain)
          for (bool kept : {false, true})
            benchmark::RegisterBenchmark(join({"attention_", dir, kept ? "_kept" : "", "_32x64x2x32", tail}).c_str(),
                                         bench_attention, backward, kept, threads)
                ->Unit(benchmark::kMicrosecond)
                ->UseRealTime();
        if (impl == Impl::plain)
          benchmark::RegisterBenchmark(join({"softmax_", dir, "_64x64x64", tail}).c_str(), bench_softmax, backward,
                                       threads)
              ->Unit(benchmark::kMicrosecond)
              ->UseRealTime();
      }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

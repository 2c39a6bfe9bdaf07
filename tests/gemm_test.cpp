// The fast GEMM backends (OpenBLAS, oneDNN) held against gemm_reference, which
// accumulates in double: the model's real shapes (forward and backward transposes, the
// batched attention products), odd sizes, every transpose combination, padded leading
// dimensions, alpha, beta (0 over NaN, 1 accumulating) and batch strides.
//
// Tolerance, per element: |C - C_ref| <= (K + 2) * FLT_EPSILON * bound, where
// bound = |alpha| * ||row i of op(A)|| * ||column j of op(B)|| + |beta| |c_ij| bounds
// |alpha| sum_k |a_ik| |b_kj| + |beta| |c_ij|. That is twice the textbook float32 error
// bound of a length-K dot product (K u, u = FLT_EPSILON / 2) plus the final scale and add,
// and it holds in any summation order.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/cpu_variant.h"
#include "kernels/gemm.h"
#include "kernels/onednn_ops.h"
#include "kernels/runtime.h"
#include "core/random.h"

namespace mg {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kPadSentinel = 12345.0f;  // in C's padding, which no backend may write

using GemmFn = void (*)(const GemmArgs&);
struct Backend {
  const char* name;
  GemmFn run;
};
void PrintTo(const Backend& backend, std::ostream* os) { *os << backend.name; }

enum class CStart { random, nan };

// Buffers for one (possibly batched, padded) problem. Elements outside the logical
// matrices are NaN in A and B (a backend that reads them poisons its result) and a
// sentinel in C (a backend that writes them is caught).
struct Problem {
  GemmArgs args;
  std::vector<float> a, b, c;
};

// Stored extent of op(X) [rows,cols]: [rows, ld] or, transposed, [cols, ld].
int64_t stored_rows(int64_t rows, int64_t cols, bool trans) { return trans ? cols : rows; }

std::vector<float> filled_operand(Rng& rng, int64_t batch, int64_t stride, int64_t rows, int64_t cols, int64_t ld,
                                  bool trans, float padding, bool nan_values = false) {
  int64_t r_stored = stored_rows(rows, cols, trans), c_stored = trans ? rows : cols;
  std::vector<float> data((batch - 1) * stride + r_stored * ld, padding);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < r_stored; ++r)
      for (int64_t c = 0; c < c_stored; ++c)
        data[b * stride + r * ld + c] = nan_values ? kNaN : static_cast<float>(2.0 * rng.uniform() - 1.0);
  return data;
}

Problem make_problem(const GemmArgs& shape, uint64_t seed, CStart c_start = CStart::random) {
  Rng rng(seed);
  Problem p{shape, {}, {}, {}};
  const GemmArgs& g = shape;
  p.a = filled_operand(rng, g.batch, g.stride_a, g.M, g.K, g.lda, g.trans_a, kNaN);
  p.b = filled_operand(rng, g.batch, g.stride_b, g.K, g.N, g.ldb, g.trans_b, kNaN);
  p.c = filled_operand(rng, g.batch, g.stride_c, g.M, g.N, g.ldc, false, kPadSentinel, c_start == CStart::nan);
  p.args.A = p.a.data();
  p.args.B = p.b.data();
  p.args.C = p.c.data();
  return p;
}

// Dense shape helper: tight leading dimensions for the stored layouts.
GemmArgs dense(int64_t M, int64_t N, int64_t K, bool trans_a, bool trans_b, float alpha = 1.0f, float beta = 0.0f) {
  GemmArgs g = tight_gemm_args({.trans_a = trans_a, .trans_b = trans_b}, M, N, K);
  g.alpha = alpha;
  g.beta = beta;
  return g;
}

// Same, batched with tight batch strides.
GemmArgs batched(int64_t batch, int64_t M, int64_t N, int64_t K, bool trans_a, bool trans_b, float beta = 0.0f) {
  GemmArgs g = tight_gemm_args({.trans_a = trans_a, .trans_b = trans_b}, M, N, K, batch);
  g.beta = beta;
  return g;
}

std::string describe(const GemmArgs& g) {
  return "batch " + std::to_string(g.batch) + " M " + std::to_string(g.M) + " N " + std::to_string(g.N) + " K " +
         std::to_string(g.K) + (g.trans_a ? " A^T" : "") + (g.trans_b ? " B^T" : "") + " lda " +
         std::to_string(g.lda) + " ldb " + std::to_string(g.ldb) + " ldc " + std::to_string(g.ldc) + " alpha " +
         std::to_string(g.alpha) + " beta " + std::to_string(g.beta);
}

// op(X)(r, c) of a stored operand, batch entry `entry`.
float element(const std::vector<float>& x, int64_t entry, int64_t stride, int64_t ld, bool trans, int64_t r,
              int64_t c) {
  return trans ? x[entry * stride + c * ld + r] : x[entry * stride + r * ld + c];
}

// The reference result for a problem, computed once and shared by every backend's test.
const std::vector<float>& reference_result(const GemmArgs& shape, uint64_t seed, CStart c_start) {
  static std::map<std::string, std::vector<float>> results;
  std::string key = describe(shape) + " seed " + std::to_string(seed) + (c_start == CStart::nan ? " nan" : "");
  auto it = results.find(key);
  if (it == results.end()) {
    Problem ref = make_problem(shape, seed, c_start);
    gemm_reference(ref.args);
    it = results.emplace(key, std::move(ref.c)).first;
  }
  return it->second;
}

// Runs `backend` on a problem and checks every element of C (padding included) against
// the reference. The error bound uses sum_k |a_ik| |b_kj| <= ||a_i|| ||b_j|| (Cauchy-Schwarz).
void expect_matches_reference(const Backend& backend, const GemmArgs& shape, uint64_t seed,
                              CStart c_start = CStart::random) {
  SCOPED_TRACE(std::string(backend.name) + ": " + describe(shape));
  Problem fast = make_problem(shape, seed, c_start);
  const std::vector<float> c_old = fast.c;
  const std::vector<float>& ref = reference_result(shape, seed, c_start);
  backend.run(fast.args);

  const GemmArgs& g = shape;
  int64_t bad = 0;
  std::vector<bool> logical(fast.c.size(), false);
  for (int64_t e = 0; e < g.batch; ++e) {
    std::vector<double> row_norm(g.M, 0.0), col_norm(g.N, 0.0);
    for (int64_t i = 0; i < g.M; ++i)
      for (int64_t k = 0; k < g.K; ++k)
        row_norm[i] += std::pow(element(fast.a, e, g.stride_a, g.lda, g.trans_a, i, k), 2);
    for (int64_t j = 0; j < g.N; ++j)
      for (int64_t k = 0; k < g.K; ++k)
        col_norm[j] += std::pow(element(fast.b, e, g.stride_b, g.ldb, g.trans_b, k, j), 2);
    for (int64_t i = 0; i < g.M; ++i)
      for (int64_t j = 0; j < g.N; ++j) {
        int64_t at = e * g.stride_c + i * g.ldc + j;
        logical[at] = true;
        double bound = std::fabs(g.alpha) * std::sqrt(row_norm[i] * col_norm[j]) +
                       (g.beta == 0.0f ? 0.0 : std::fabs(g.beta * c_old[at]));
        double tol = (g.K + 2) * FLT_EPSILON * bound;
        bool ok = std::isfinite(fast.c[at]) && std::fabs(fast.c[at] - ref[at]) <= tol;
        if (!ok && bad++ == 0)
          ADD_FAILURE() << "C[" << e << "][" << i << "][" << j << "] = " << fast.c[at] << ", reference " << ref[at]
                        << ", tolerance " << tol;
      }
  }
  for (size_t at = 0; at < fast.c.size(); ++at)
    if (!logical[at] && fast.c[at] != kPadSentinel && bad++ == 0) ADD_FAILURE() << "padding of C written at " << at;
  EXPECT_EQ(bad, 0) << "elements of C out of tolerance";
}

class GemmBackendTest : public ::testing::TestWithParam<Backend> {};

TEST_P(GemmBackendTest, ModelLinearShapesForwardAndBackward) {
  // Linear y[2048,out] = x[2048,in] W^T, W stored [out,in]; backward dx = dy W,
  // dW += dy^T x (K = 2048 rows summed, beta 1 as the gradient accumulates).
  const int64_t rows = 2048;
  for (auto [in, out] : {std::pair<int64_t, int64_t>{64, 64}, {64, 256}, {256, 64}, {64, 79}}) {
    expect_matches_reference(GetParam(), dense(rows, out, in, false, false), 1);  // x @ W as [in,out]
    expect_matches_reference(GetParam(), dense(rows, out, in, false, true), 2);   // x @ W^T
    expect_matches_reference(GetParam(), dense(rows, in, out, false, false), 3);  // dx = dy @ W
    expect_matches_reference(GetParam(), dense(out, in, rows, true, false, 1.0f, 1.0f), 4);  // dW += dy^T x
  }
}

TEST_P(GemmBackendTest, ModelAttentionBatchedShapes) {
  // 64 = B*H heads; q, k, v [64,T=64,d=32]. s = q k^T, o = w v and their gradients:
  // dq = ds k, dk = ds^T q, dw = do v^T, dv = w^T do.
  expect_matches_reference(GetParam(), batched(64, 64, 64, 32, false, true), 5);   // s = q k^T
  expect_matches_reference(GetParam(), batched(64, 64, 32, 64, false, false), 6);  // o = w v, dq = ds k
  expect_matches_reference(GetParam(), batched(64, 64, 32, 64, true, false), 7);   // dk = ds^T q, dv = w^T do
  expect_matches_reference(GetParam(), batched(64, 64, 64, 32, false, true, 1.0f), 8);  // dw (+)= do v^T
  expect_matches_reference(GetParam(), batched(64, 64, 32, 32, false, false), 9);  // 64x[64,32]x[32,32]
}

TEST_P(GemmBackendTest, OddSizesAllTransposeCombinations) {
  uint64_t seed = 100;
  for (int64_t M : {1, 3, 7, 65})
    for (int64_t N : {1, 3, 7, 65})
      for (int64_t K : {1, 3, 7, 65})
        for (int t = 0; t < 4; ++t) expect_matches_reference(GetParam(), dense(M, N, K, t & 1, t & 2), seed++);
}

TEST_P(GemmBackendTest, PaddedLeadingDimensionsAreRespected) {
  // Leading dimensions wider than the rows: NaN padding in A, B must never be read, the
  // sentinel in C's padding never written.
  uint64_t seed = 300;
  for (int64_t M : {3, 65, 300})  // 300: more than one block of rows for gemm_split's tiles
    for (int64_t K : {7, 65})
      for (int t = 0; t < 4; ++t) {
        GemmArgs g = dense(M, 7, K, t & 1, t & 2);
        g.lda += 5;
        g.ldb += 3;
        g.ldc += 9;
        expect_matches_reference(GetParam(), g, seed++);
      }
}

TEST_P(GemmBackendTest, AlphaScalesTheProduct) {
  for (float alpha : {0.37f, -2.5f, 0.0f}) {
    expect_matches_reference(GetParam(), dense(65, 7, 65, false, false, alpha), 400);
    expect_matches_reference(GetParam(), dense(7, 65, 3, true, true, alpha), 401);
  }
}

TEST_P(GemmBackendTest, BetaZeroIgnoresNaNInC) {
  for (int t = 0; t < 4; ++t) {
    expect_matches_reference(GetParam(), dense(65, 7, 65, t & 1, t & 2, 1.0f, 0.0f), 500 + t, CStart::nan);
    expect_matches_reference(GetParam(), dense(7, 3, 65, t & 1, t & 2, -0.5f, 0.0f), 510 + t, CStart::nan);
  }
}

TEST_P(GemmBackendTest, BetaAccumulatesIntoC) {
  for (int t = 0; t < 4; ++t) {
    expect_matches_reference(GetParam(), dense(65, 7, 65, t & 1, t & 2, 1.0f, 1.0f), 600 + t);
    expect_matches_reference(GetParam(), dense(3, 65, 7, t & 1, t & 2, 2.0f, -0.5f), 610 + t);
  }
  // A known answer, so the reference is not the only judge: [1 2] @ [3; 4] + 1 * 5 = 16.
  float a[2] = {1, 2}, b[2] = {3, 4}, c[1] = {5};
  GemmArgs g = dense(1, 1, 2, false, false, 1.0f, 1.0f);
  g.A = a;
  g.B = b;
  g.C = c;
  GetParam().run(g);
  EXPECT_FLOAT_EQ(c[0], 16.0f);
}

TEST_P(GemmBackendTest, BatchedWithPaddedStridesAndBroadcast) {
  uint64_t seed = 700;
  for (int t = 0; t < 4; ++t) {
    GemmArgs g = batched(5, 7, 65, 3, t & 1, t & 2, t == 3 ? 1.0f : 0.0f);
    g.stride_a += 11;  // gaps between batch entries
    g.stride_b += 2;
    g.stride_c += 13;
    expect_matches_reference(GetParam(), g, seed++);
    GemmArgs shared_b = batched(4, 65, 7, 3, t & 1, t & 2);
    shared_b.stride_b = 0;  // one B for every entry, as a weight shared across the batch
    expect_matches_reference(GetParam(), shared_b, seed++);
    GemmArgs shared_a = batched(3, 7, 3, 65, t & 1, t & 2);
    shared_a.stride_a = 0;
    shared_a.alpha = 0.5f;
    expect_matches_reference(GetParam(), shared_a, seed++);
    GemmArgs sliding_a = batched(6, 7, 5, 9, t & 1, t & 2);
    sliding_a.stride_a = sliding_a.lda;  // overlapping entries: each A is the last shifted one row
    expect_matches_reference(GetParam(), sliding_a, seed++);
  }
}

// The epilogue (bias, addend, multiplier) against the reference, which applies it in double:
// every combination the model uses, on padded C, with a tolerance that adds the epilogue
// terms' own rounding to the product's bound.
TEST_P(GemmBackendTest, EpilogueAddsBiasAndAddendAndMultiplies) {
  struct Case {
    bool bias, addend, multiplier;
    float beta;
  };
  uint64_t seed = 900;
  for (const Case& c : {Case{true, false, false, 0.0f}, Case{true, true, false, 0.0f}, Case{false, true, false, 1.0f},
                        Case{false, false, true, 0.0f}, Case{true, true, true, 0.0f}}) {
    for (int t = 0; t < 8; ++t) {
      // 300 rows: gemm_split's tiles each get their rows of addend and multiplier.
      GemmArgs shape = dense(t < 4 ? 65 : 300, 19, 33, t & 1, t & 2, 1.0f, c.beta);
      shape.ldc += 5;  // padded rows: addend and multiplier share C's leading dimension
      Rng rng(seed++);
      std::vector<float> bias(shape.N), addend(shape.M * shape.ldc, kNaN), multiplier(shape.M * shape.ldc, kNaN);
      for (float& v : bias) v = static_cast<float>(2.0 * rng.uniform() - 1.0);
      for (int64_t i = 0; i < shape.M; ++i)
        for (int64_t j = 0; j < shape.N; ++j) {
          addend[i * shape.ldc + j] = static_cast<float>(4.0 * rng.uniform() - 2.0);
          multiplier[i * shape.ldc + j] = static_cast<float>(2.0 * rng.uniform() - 1.0);
        }
      shape.bias = c.bias ? bias.data() : nullptr;
      shape.addend = c.addend ? addend.data() : nullptr;
      shape.multiplier = c.multiplier ? multiplier.data() : nullptr;
      SCOPED_TRACE(describe(shape) + (c.bias ? " bias" : "") + (c.addend ? " addend" : "") +
                   (c.multiplier ? " multiplier" : ""));
      Problem ref = make_problem(shape, seed), fast = make_problem(shape, seed);
      gemm_reference(ref.args);
      GetParam().run(fast.args);
      int64_t bad = 0;
      for (int64_t i = 0; i < shape.M; ++i) {
        for (int64_t j = 0; j < shape.N; ++j) {
          const int64_t at = i * shape.ldc + j;
          // |product| <= K (|a| |b| <= 1 each); C started in [-1, 1]; bias and addend as drawn.
          const double terms = static_cast<double>(shape.K) + std::fabs(c.beta) + (c.bias ? std::fabs(bias[j]) : 0.0) +
                               (c.addend ? std::fabs(addend[at]) : 0.0);
          const double tol = (shape.K + 4) * FLT_EPSILON * terms;
          if (!(std::fabs(fast.c[at] - ref.c[at]) <= tol) && bad++ == 0)
            ADD_FAILURE() << "C[" << i << "][" << j << "] = " << fast.c[at] << ", reference " << ref.c[at];
        }
        for (int64_t j = shape.N; j < shape.ldc; ++j)
          if (fast.c[i * shape.ldc + j] != kPadSentinel && bad++ == 0) ADD_FAILURE() << "padding of C written";
      }
      EXPECT_EQ(bad, 0);
    }
  }
  // A known answer: ([1 2] @ [3; 4] + bias 1 + addend 2) * 0.5 = 7.
  float a[2] = {1, 2}, b[2] = {3, 4}, c[1] = {kNaN}, bias[1] = {1}, addend[1] = {2}, multiplier[1] = {0.5f};
  GemmArgs g = dense(1, 1, 2, false, false);
  g.A = a, g.B = b, g.C = c, g.bias = bias, g.addend = addend, g.multiplier = multiplier;
  GetParam().run(g);
  EXPECT_FLOAT_EQ(c[0], 7.0f);
}

TEST_P(GemmBackendTest, EpilogueRulesAreChecked) {
  Problem p = make_problem(dense(4, 3, 2, false, false), 950);
  float bias[3] = {1, 2, 3};
  GemmArgs scaled = p.args;
  scaled.alpha = 0.5f;  // oneDNN would scale the bias too
  scaled.bias = bias;
  EXPECT_ANY_THROW(GetParam().run(scaled));
  GemmArgs accumulating = p.args;
  accumulating.beta = 1.0f;  // (C + AB) * m is not what a gradient's multiplier means
  accumulating.multiplier = p.c.data();
  EXPECT_ANY_THROW(GetParam().run(accumulating));
  GemmArgs many = tight_gemm_args({}, 4, 3, 2, 2);
  many.A = p.a.data(), many.B = p.b.data(), many.C = p.c.data(), many.bias = bias;
  EXPECT_ANY_THROW(GetParam().run(many));
}

// gemm_split over oneDNN's one-thread products: every shape above in its tiles (K in
// chunks, rows in blocks, entries one by one), its chunks added and its epilogue applied by
// gemm_split; and the one-thread product alone on the 2-D shapes.
void onednn_split(const GemmArgs& g) { gemm_split(g, gemm_onednn_one_thread); }

INSTANTIATE_TEST_SUITE_P(Backends, GemmBackendTest,
                         ::testing::Values(Backend{"openblas", gemm_openblas}, Backend{"onednn", gemm_onednn},
                                           Backend{"onednn_split", onednn_split}),
                         [](const ::testing::TestParamInfo<Backend>& info) { return std::string(info.param.name); });

// gemm_split's tiles are fixed by the shape, so its bits are the same on 1, 2 and 3 threads:
// a K that is no whole number of chunks, rows past one block, alpha, beta and an epilogue,
// and a batch of entries with a long K; over oneDNN's one-thread products and OpenBLAS's
// (gemm_openblas is gemm_split over them).
TEST(GemmSplitTest, SameBitsOnAnyThreadCount) {
  const int threads_before = num_threads();
  GemmArgs long_k = dense(300, 70, 1300, true, false, 0.5f, 1.0f);
  GemmArgs with_epilogue = dense(300, 70, 700, false, true);
  std::vector<float> bias(70, 0.25f);
  with_epilogue.bias = bias.data();
  GemmArgs entries = batched(5, 33, 40, 700, false, false);
  for (const GemmArgs& shape : {long_k, with_epilogue, entries}) {
    SCOPED_TRACE(describe(shape));
    for (GemmFn split : {onednn_split, gemm_openblas}) {
      std::vector<std::vector<float>> results;
      for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        Problem p = make_problem(shape, 1000);
        split(p.args);
        results.push_back(p.c);
      }
      const char* name = split == gemm_openblas ? "openblas" : "onednn";
      EXPECT_EQ(results[1], results[0]) << name << ", 2 threads against 1";
      EXPECT_EQ(results[2], results[0]) << name << ", 3 threads against 1";
    }
  }
  set_num_threads(threads_before);
}

TEST(GemmOnednnCache, RepeatedCallsOnOneShapeCreateOnePrimitive) {
  Problem p = make_problem(dense(13, 17, 19, true, false, 0.75f, 0.25f), 800);
  size_t before = onednn_cached_primitive_count();
  for (int i = 0; i < 100; ++i) gemm_onednn(p.args);
  EXPECT_EQ(onednn_cached_primitive_count(), before + 1);
  // A different beta is a different primitive (the sum post-op is baked in).
  p.args.beta = 0.5f;
  for (int i = 0; i < 10; ++i) gemm_onednn(p.args);
  EXPECT_EQ(onednn_cached_primitive_count(), before + 2);
  // The batched form is one primitive too, whether it runs as 3-D or as a loop.
  Problem q = make_problem(batched(64, 64, 64, 32, false, true), 801);
  before = onednn_cached_primitive_count();
  for (int i = 0; i < 100; ++i) gemm_onednn(q.args);
  EXPECT_EQ(onednn_cached_primitive_count(), before + 1);
}

// oneDNN fixes a primitive's thread count when it creates it: after set_num_threads the
// same GEMM needs a primitive of its own (one made at 1 thread and reused at 2 ran on one
// core: the kernel benchmark's 2-thread GEMMs at 1-thread speed), and going back reuses the
// first. Either way the result is the product.
TEST(GemmOnednnCache, EachThreadCountHasItsOwnPrimitive) {
  const int threads_before = num_threads();
  const GemmArgs shape = dense(96, 80, 72, false, true);
  set_num_threads(1);
  expect_matches_reference(Backend{"onednn", gemm_onednn}, shape, 802);
  const size_t after_one = onednn_cached_primitive_count();
  set_num_threads(2);
  expect_matches_reference(Backend{"onednn", gemm_onednn}, shape, 802);
  EXPECT_EQ(onednn_cached_primitive_count(), after_one + 1);
  set_num_threads(1);
  expect_matches_reference(Backend{"onednn", gemm_onednn}, shape, 802);
  EXPECT_EQ(onednn_cached_primitive_count(), after_one + 1);
  set_num_threads(threads_before);
}

TEST(GemmDispatch, MatmulTwoDRunsTheSelectedBackend) {
  // matmul_2d through gemm(): [2,3] @ [3,2] with a known answer, on every backend.
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1};
  GemmBackend saved = gemm_backend();
  for (GemmBackend backend : {GemmBackend::reference, GemmBackend::openblas, GemmBackend::onednn}) {
    set_gemm_backend(backend);
    float c[4] = {kNaN, kNaN, kNaN, kNaN};
    matmul_2d(a, b, c, 2, 2, 3, {});
    EXPECT_FLOAT_EQ(c[0], 4.0f) << backend_name(backend);
    EXPECT_FLOAT_EQ(c[1], 5.0f) << backend_name(backend);
    EXPECT_FLOAT_EQ(c[2], 10.0f) << backend_name(backend);
    EXPECT_FLOAT_EQ(c[3], 11.0f) << backend_name(backend);
  }
  set_gemm_backend(saved);
}

// OpenBLAS's kernels are named by the CPU they were written for; a CPU newer than the
// library is taken for an old one. The advice names the widest core the CPU runs, and only
// when OpenBLAS has none of AVX2.
TEST(OpenBlasCoreTest, ACoreWithoutAvx2OnAWiderCpuIsToldTheCoreToSet) {
  EXPECT_EQ(openblas_core_to_set("Prescott", CpuVariant::avx512), "SkylakeX");
  EXPECT_EQ(openblas_core_to_set("Prescott", CpuVariant::avx2), "Haswell");
  EXPECT_EQ(openblas_core_to_set("Sandybridge", CpuVariant::avx512), "SkylakeX");  // AVX, no AVX2
  EXPECT_EQ(openblas_core_to_set("Nehalem", CpuVariant::avx2), "Haswell");
  EXPECT_EQ(openblas_core_to_set("Prescott", CpuVariant::baseline), "");  // nothing wider to run
  for (const char* wide : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "skylakex", "HASWELL"})
    EXPECT_EQ(openblas_core_to_set(wide, CpuVariant::avx512), "") << wide;
  EXPECT_FALSE(openblas_core().empty()) << "openblas_get_corename() named no core";
}

}  // namespace
}  // namespace mg

// Every CPU variant of the kernels (kernels/cpu_variant.h) that this machine runs gives
// the baseline build's results: the same inputs through each variant's table, compared
// element by element. They may differ in the last bits, because wider vectors add a
// row's sums in another order and x86-64-v3 and up fuse multiply-adds (g++ contracts
// a * b + c in C++ by default). So the tolerance, stated per kernel, is a few float32
// ulps of the terms that are added (atol: where terms of size ~1 cancel) plus a few ulps
// of the result (rtol). On a CPU without AVX2 only the baseline runs, and these tests
// compare it with itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/cpu_variant.h"
#include "kernels/cross_entropy.h"
#include "kernels/fused_attention.h"
#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/optimizer.h"
#include "kernels/packed_linear.h"
#include "kernels/parallel.h"
#include "kernels/rope.h"
#include "kernels/softmax.h"
#include "autograd/ops.h"
#include "autograd/var.h"
#include "nn/gpt.h"
#include "core/error.h"
#include "core/random.h"
#include "kernel_reference.h"
#include "model_support.h"

namespace mg {
namespace {

// The fused attention kernel as the causal_attention op calls it (autograd/ops_attention.cpp),
// scale 0.17.
void fused_forward(float* merged, float* weights, const float* qkv, const RopeTable& table, const AttentionShape& s) {
  const AttentionWorkspace work = attention_workspace(s, &table, 2);
  attention_heads_forward(merged, weights, qkv, work.cos_pairs, work.sin_pairs, 0.17f, s.B, s.T, s.H, s.d, work.scratch,
                          work.threads);
}
void fused_backward(float* dqkv, const float* dmerged, const float* qkv, const float* weights, const RopeTable& table,
                    const AttentionShape& s, bool accumulate) {
  const AttentionWorkspace work = attention_workspace(s, &table, 4);
  attention_heads_backward(dqkv, dmerged, qkv, weights, work.cos_pairs, work.sin_pairs, 0.17f, s.B, s.T, s.H, s.d,
                           accumulate, work.scratch, work.threads);
}

std::vector<float> normal_values(int64_t n, uint64_t seed, double scale = 1.0) {
  Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(scale * rng.normal());
  return v;
}

// A float's bits, for results that must be identical, not merely close.
uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

// Restores the variant in use when a test ends, whatever it set.
struct VariantGuard {
  CpuVariant saved = cpu_variant();
  ~VariantGuard() { set_cpu_variant(saved); }
};

// Runs `compute` (which fills and returns its outputs) on the baseline, then on every
// other variant this CPU runs, and holds each output within atol + rtol |baseline|.
void expect_variants_agree(const std::function<std::vector<float>()>& compute, double atol, double rtol,
                           const char* what) {
  VariantGuard guard;
  set_cpu_variant(CpuVariant::baseline);
  const std::vector<float> baseline = compute();
  for (CpuVariant variant : supported_cpu_variants()) {
    set_cpu_variant(variant);
    const std::vector<float> got = compute();
    ASSERT_EQ(got.size(), baseline.size());
    double worst = 0.0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double diff = std::abs(double(got[i]) - double(baseline[i]));
      worst = std::max(worst, diff / (atol + rtol * std::abs(double(baseline[i]))));
      ASSERT_LE(diff, atol + rtol * std::abs(double(baseline[i])))
          << what << ", " << cpu_variant_name(variant) << " vs baseline, element " << i << ": " << got[i] << " vs "
          << baseline[i];
    }
    std::printf("%-28s %-8s worst difference %.3f of the tolerance\n", what,
                std::string(cpu_variant_name(variant)).c_str(), worst);
  }
}

std::vector<float> concat(std::initializer_list<const std::vector<float>*> parts) {
  std::vector<float> all;
  for (const auto* p : parts) all.insert(all.end(), p->begin(), p->end());
  return all;
}

TEST(CpuVariantTest, TheBaselineAlwaysRunsAndTheBestIsTheLastSupported) {
  const std::vector<CpuVariant> supported = supported_cpu_variants();
  ASSERT_FALSE(supported.empty());
  EXPECT_EQ(supported.front(), CpuVariant::baseline);
  EXPECT_EQ(supported.back(), best_cpu_variant());
  EXPECT_EQ(cpu_variant(), best_cpu_variant());  // nothing chose another
}

TEST(CpuVariantTest, NamesRoundTripAndAnUnknownOneIsRefused) {
  for (CpuVariant v : {CpuVariant::baseline, CpuVariant::avx2, CpuVariant::avx512})
    EXPECT_EQ(parse_cpu_variant(cpu_variant_name(v)), v);
  EXPECT_THROW(parse_cpu_variant("avx1024"), InputError);
}

TEST(CpuVariantTest, AVariantTheCpuCannotRunIsRefusedNotRun) {
  VariantGuard guard;
  for (CpuVariant v : {CpuVariant::avx2, CpuVariant::avx512}) {
    const auto supported = supported_cpu_variants();
    if (std::find(supported.begin(), supported.end(), v) == supported.end()) {
      EXPECT_THROW(set_cpu_variant(v), InputError);
    } else {
      EXPECT_NO_THROW(set_cpu_variant(v));
      EXPECT_EQ(cpu_variant(), v);
    }
  }
}

// Sizes with ragged tails: no vector width divides them.
constexpr int64_t kN = 3 * 4096 + 13;

TEST(CpuVariantTest, GeluForwardAndBothBackwards) {
  const auto x = normal_values(kN, 1, 3.0), dout = normal_values(kN, 2);
  expect_variants_agree(
      [&] {
        std::vector<float> y(kN), dx(kN, 0.5f), dx_over(kN, 0.0f);
        gelu_forward(y.data(), x.data(), kN);
        gelu_backward(dx.data(), dout.data(), x.data(), kN, true);
        gelu_backward(dx_over.data(), dout.data(), x.data(), kN, false);
        std::vector<float> fused(kN), slope(kN);
        gelu_forward_with_slope(fused.data(), slope.data(), x.data(), kN);
        return concat({&y, &dx, &dx_over, &fused, &slope});
      },
      1e-6, 4e-7, "gelu");  // x ~ 3 N(0,1): terms up to ~10
}

// The fused attention at the model's shape and at one whose T and d fill no vector, with
// RoPE, forward and both backwards (written, added). In every variant, the forward without
// weights and the backward that makes them again give the bits of the forward and backward
// that keep them (training keeps none).
TEST(CpuVariantTest, CausalAttentionForwardAndBackwards) {
  for (const AttentionShape s : {AttentionShape{2, 64, 2, 32}, AttentionShape{3, 23, 3, 6}}) {
    const RopeTable table = make_rope_table(s.T, s.d, 10000.0);
    const int64_t rows = s.B * s.T, D = s.H * s.d;
    const auto qkv = normal_values(rows * 3 * D, 30), dmerged = normal_values(rows * D, 31);
    expect_variants_agree(
        [&] {
          std::vector<float> merged(rows * D), weights(s.B * s.H * s.T * s.T), dqkv(rows * 3 * D, 0.0f),
              dqkv_added(rows * 3 * D, 0.5f);
          fused_forward(merged.data(), weights.data(), qkv.data(), table, s);
          fused_backward(dqkv.data(), dmerged.data(), qkv.data(), weights.data(), table, s, false);
          fused_backward(dqkv_added.data(), dmerged.data(), qkv.data(), weights.data(), table, s, true);
          std::vector<float> merged_alone(rows * D), dqkv_remade(rows * 3 * D, 0.0f),
              dqkv_remade_added(rows * 3 * D, 0.5f);
          fused_forward(merged_alone.data(), nullptr, qkv.data(), table, s);
          fused_backward(dqkv_remade.data(), dmerged.data(), qkv.data(), nullptr, table, s, false);
          fused_backward(dqkv_remade_added.data(), dmerged.data(), qkv.data(), nullptr, table, s, true);
          for (int64_t i = 0; i < rows * D; ++i) EXPECT_EQ(bits(merged_alone[i]), bits(merged[i])) << "merged " << i;
          for (int64_t i = 0; i < rows * 3 * D; ++i) {
            EXPECT_EQ(bits(dqkv_remade[i]), bits(dqkv[i])) << "dqkv " << i;
            EXPECT_EQ(bits(dqkv_remade_added[i]), bits(dqkv_added[i])) << "dqkv added " << i;
          }
          return concat({&merged, &weights, &dqkv, &dqkv_added});
        },
        2e-6, 1e-5, "causal attention");  // sums of up to 64 terms of ~1
  }
}

TEST(CpuVariantTest, CausalSoftmaxForwardAndBackwards) {
  const int64_t batch = 3, Tq = 37, Tk = 41;
  const auto scores = normal_values(batch * Tq * Tk, 3, 4.0), dw = normal_values(batch * Tq * Tk, 4);
  expect_variants_agree(
      [&] {
        std::vector<float> w(scores.size()), ds(scores.size(), 0.25f), ds_scaled(scores.size(), 9.0f);
        causal_softmax_forward(w.data(), scores.data(), batch, Tq, Tk);
        causal_softmax_backward(ds.data(), dw.data(), w.data(), batch, Tq, Tk, 1.0f, true);
        causal_softmax_backward(ds_scaled.data(), dw.data(), w.data(), batch, Tq, Tk, 0.125f, false);
        return concat({&w, &ds, &ds_scaled});
      },
      1e-7, 4e-6, "causal softmax");
}

TEST(CpuVariantTest, LayerNormForwardBackwardAndOneRow) {
  const int64_t rows = 77, D = 67;
  const auto x = normal_values(rows * D, 5, 2.0), dout = normal_values(rows * D, 6);
  auto weight = normal_values(D, 7), bias = normal_values(D, 8);
  expect_variants_agree(
      [&] {
        std::vector<float> y(rows * D), mean(rows), rstd(rows), dx(rows * D, 0.0f), dweight(D, 0.0f), dbias(D, 0.0f),
            row(D);
        layernorm_forward(y.data(), mean.data(), rstd.data(), x.data(), weight.data(), bias.data(), rows, D, 1e-5f);
        layernorm_backward(dx.data(), dweight.data(), dbias.data(), dout.data(), x.data(), weight.data(), mean.data(),
                           rstd.data(), rows, D);
        layernorm_row(row.data(), x.data() + 5 * D, weight.data(), bias.data(), D, 1e-5f);
        return concat({&y, &mean, &rstd, &dx, &dweight, &dbias, &row});
      },
      1e-6, 1e-5, "layernorm");
}

TEST(CpuVariantTest, RopeForwardAndBothBackwards) {
  const int64_t rows = 6, T = 29, d = 32, offset = 7;
  const RopeTable table = make_rope_table(64, d, 10000.0);
  const auto x = normal_values(rows * T * d, 9), dout = normal_values(rows * T * d, 10);
  expect_variants_agree(
      [&] {
        std::vector<float> y(x.size()), dx(x.size(), 1.0f), dx_over(x.size());
        rope_forward(y.data(), x.data(), table, rows, T, d, offset);
        rope_backward(dx.data(), dout.data(), table, rows, T, d, offset, true);
        rope_backward(dx_over.data(), dout.data(), table, rows, T, d, offset, false);
        return concat({&y, &dx, &dx_over});
      },
      1e-6, 1e-6, "rope");  // x0 c - x1 s: terms ~1 that cancel
}

TEST(CpuVariantTest, CrossEntropyForwardAndBackward) {
  const int64_t rows = 93, V = 79;
  const auto logits = normal_values(rows * V, 11, 5.0);
  std::vector<int32_t> targets(rows);
  for (int64_t r = 0; r < rows; ++r) targets[r] = static_cast<int32_t>((r * 31) % V);
  expect_variants_agree(
      [&] {
        std::vector<float> probs(rows * V), dlogits(rows * V, 0.0f);
        const double loss = cross_entropy_forward(probs.data(), logits.data(), targets.data(), rows, V);
        cross_entropy_backward(dlogits.data(), probs.data(), targets.data(), rows, V, 1.0f);
        std::vector<float> all = concat({&probs, &dlogits});
        all.push_back(static_cast<float>(loss));
        return all;
      },
      1e-8, 4e-6, "cross-entropy");
}

TEST(CpuVariantTest, AdamWUpdate) {
  const auto grad = normal_values(kN, 12, 0.1), start = normal_values(kN, 13);
  const AdamWStep step{3e-3, 0.9, 0.99, 1e-8, 0.1, 1.0 - 0.9 * 0.9 * 0.9, 1.0 - 0.99 * 0.99 * 0.99};
  expect_variants_agree(
      [&] {
        std::vector<float> param = start, m(kN, 0.01f), v(kN, 0.002f);
        for (int i = 0; i < 3; ++i) adamw_update(param.data(), m.data(), v.data(), grad.data(), kN, step);
        return concat({&param, &m, &v});
      },
      1e-7, 2e-6, "adamw");
}

// Above kParallelWork the update runs in chunks over the threads; below it in one loop.
// Each element's update is its own, so the two give the same bits, on every variant.
TEST(CpuVariantTest, AdamWOverTheThreadsEqualsTheUpdateInSmallPieces) {
  const int64_t n = 2 * kParallelWork + 77, piece = 1000;
  const auto grad = normal_values(n, 15, 0.1), start = normal_values(n, 16);
  const AdamWStep step{3e-3, 0.9, 0.99, 1e-8, 0.1, 1.0 - 0.9, 1.0 - 0.99};
  for (const CpuVariant variant : supported_cpu_variants()) {
    SCOPED_TRACE(std::string(cpu_variant_name(variant)));
    const CpuVariant previous = cpu_variant();
    set_cpu_variant(variant);
    std::vector<float> whole = start, whole_m(n, 0.01f), whole_v(n, 0.002f);
    std::vector<float> pieces = start, pieces_m(n, 0.01f), pieces_v(n, 0.002f);
    adamw_update(whole.data(), whole_m.data(), whole_v.data(), grad.data(), n, step);
    for (int64_t i = 0; i < n; i += piece)
      adamw_update(pieces.data() + i, pieces_m.data() + i, pieces_v.data() + i, grad.data() + i,
                   std::min(piece, n - i), step);
    set_cpu_variant(previous);
    ASSERT_EQ(whole, pieces);
    ASSERT_EQ(whole_m, pieces_m);
    ASSERT_EQ(whole_v, pieces_v);
  }
}

TEST(CpuVariantTest, PackedMatrixVectorProductsForEveryPanelWidth) {
  const int64_t in = 67, rows = 5;
  const auto x = normal_values(rows * in, 14);
  expect_variants_agree(
      [&] {
        std::vector<float> all;
        for (int64_t out : {1, 7, 8, 9, 63, 64, 65, 130, 192}) {
          const auto w = normal_values(out * in, 15 + out), b = normal_values(out, 16 + out);
          const PackedLinear layer(w.data(), b.data(), out, in);
          std::vector<float> y(rows * out, 0.5f);
          layer.forward(y.data(), out, x.data(), in, rows, /*accumulate=*/true);
          all.insert(all.end(), y.begin(), y.end());
        }
        // vector_matrix on a strided [in, 70] matrix, reading 72 floats a row.
        const auto a = normal_values(in * 72, 17);
        std::vector<float> y(70);
        vector_matrix(y.data(), x.data(), a.data(), 72, in, 70);
        all.insert(all.end(), y.begin(), y.end());
        return all;
      },
      1e-5, 2e-6, "packed matrix-vector");  // 67 products ~1: sums ~8
}

// End to end: a small model's loss and every parameter's gradient, per variant.
TEST(CpuVariantTest, AWholeForwardAndBackwardOfASmallModel) {
  for (const char* position : {"rope", "learned"}) {
    expect_variants_agree(
        [&] {
          Gpt model(test::config_of(2, 32, 2, 16, 79, position));
          Rng rng(42);
          model.initialize(rng);
          std::vector<int32_t> ids(2 * 16), targets(2 * 16);
          for (size_t i = 0; i < ids.size(); ++i) {
            ids[i] = static_cast<int32_t>((i * 7) % 79);
            targets[i] = static_cast<int32_t>((i * 7 + 3) % 79);
          }
          const Var loss = cross_entropy(model.forward(ids, 2, 16), targets);
          backward(loss);
          std::vector<float> all{loss.value()[0]};
          for (NamedParameter& param : model.parameters().all()) {
            const Tensor& g = param.var.grad();
            all.insert(all.end(), g.data(), g.data() + g.numel());
          }
          return all;
        },
        1e-6, 1e-4, position);
  }
}

}  // namespace
}  // namespace mg

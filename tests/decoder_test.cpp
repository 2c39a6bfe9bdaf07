// The inference decoder (nn/decoder.h) against the training forward (Gpt::forward): its
// logits equal the forward's at every position of the block, fed one symbol at a time or
// many at once, and, rebuilt on a sliding window, past it, for both position types; the
// context shift turns cached keys to their new positions and leaves layer 0 as a fresh
// computation; and the packed matrix kernel equals a plain loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/runtime.h"
#include "nn/decoder.h"
#include "kernels/packed_linear.h"
#include "core/error.h"
#include "environment_support.h"
#include "kernel_reference.h"
#include "model_support.h"

namespace mg {
namespace {

using test::config_of;

// The documented init (std 0.02) leaves attention almost uniform, where a wrong rotation or a
// wrong key would barely move the logits. Weights of std 0.3 and LayerNorm gains and
// biases away from 1 and 0 make every head's weights sharp and every parameter matter.
Gpt sharp_model(const ModelConfig& config, uint64_t seed) {
  set_num_threads(1);  // the reference forwards are tiny: a second thread only adds waiting on a shared machine
  Gpt model(config);
  Rng rng(seed);
  for (auto& [name, var] : model.parameters().all()) {
    const bool gain = name.find("ln") != std::string::npos && name.ends_with(".weight");
    for (float& w : var.value().span()) w = static_cast<float>((gain ? 1.0 : 0.0) + 0.3 * rng.normal());
  }
  return model;
}

// Logits [T,V] of a full forward over ids at positions 0..T-1: row t is what the model
// predicts after ids[0..t], whatever follows (the mask is causal).
std::vector<float> forward_logits(const Gpt& model, const std::vector<int32_t>& ids) {
  NoGradGuard no_grad;
  const Tensor all = model.forward(ids, 1, static_cast<int64_t>(ids.size())).value();  // [1,T,V]
  return std::vector<float>(all.data(), all.data() + all.numel());
}

// Row t [V] of forward_logits.
std::vector<float> row(const std::vector<float>& logits, int64_t t, int64_t V) {
  return std::vector<float>(logits.begin() + t * V, logits.begin() + (t + 1) * V);
}

// Float32 sums in another order (oneDNN's GEMMs against the packed kernel): logits of
// magnitude up to ~10 agree to a few 1e-6.
constexpr float kLogitTolerance = 1e-5f;

void expect_logits_near(std::span<const float> got, const std::vector<float>& expected, const std::string& where) {
  ASSERT_EQ(got.size(), expected.size()) << where;
  for (size_t v = 0; v < expected.size(); ++v)
    ASSERT_NEAR(got[v], expected[v], kLogitTolerance * (1.0f + std::abs(expected[v]))) << where << " symbol " << v;
}

std::vector<int32_t> random_ids(int64_t n, int64_t vocab, uint64_t seed) {
  Rng rng(seed);
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int32_t& id : ids) id = static_cast<int32_t>(rng.uniform_int(static_cast<uint64_t>(vocab)));
  return ids;
}

// Shapes that exercise the kernel's edges: widths not a multiple of 8 (D 20, d 5 or 10),
// more than one 64-wide panel (MLP width 80, vocabulary 70), several heads.
struct Case {
  ModelConfig config;
  const char* name;
};

std::vector<Case> cases() {
  return {{config_of(2, 16, 2, 12, 13, "rope"), "rope D16 H2"},
          {config_of(2, 16, 2, 12, 13, "learned"), "learned D16 H2"},
          {config_of(3, 20, 2, 9, 70, "rope"), "rope D20 H2 V70"},
          {config_of(1, 20, 4, 7, 11, "learned"), "learned D20 H4 d5"}};
}

TEST(DecoderTest, OnePositionAtATimeEqualsTheTrainingForwardAtEveryPosition) {
  for (const Case& c : cases()) {
    Gpt model = sharp_model(c.config, 3);
    const int64_t T = c.config.block_size, V = c.config.vocab_size;
    const std::vector<int32_t> text = random_ids(T, V, 17);
    const std::vector<float> expected = forward_logits(model, text);
    Decoder decoder(model);
    for (int64_t t = 0; t < T; ++t) {
      std::span<const float> got = decoder.append(std::span<const int32_t>(&text[t], 1));
      EXPECT_EQ(decoder.length(), t + 1);
      expect_logits_near(got, row(expected, t, V), std::string(c.name) + " position " + std::to_string(t));
    }
  }
}

TEST(DecoderTest, ManyIdsAtOnceEqualTheTrainingForwardAtEveryPosition) {
  for (const Case& c : cases()) {
    Gpt model = sharp_model(c.config, 7);
    const int64_t T = c.config.block_size, V = c.config.vocab_size;
    const std::vector<int32_t> text = random_ids(T, V, 23);
    const std::vector<float> expected = forward_logits(model, text);
    Decoder decoder(model);
    for (int64_t n = 1; n <= T; ++n) {  // a prompt of n ids in one append ends at position n-1
      decoder.reset();
      std::span<const float> got = decoder.append(std::span<const int32_t>(text.data(), static_cast<size_t>(n)));
      expect_logits_near(got, row(expected, n - 1, V), std::string(c.name) + " prompt of " + std::to_string(n));
    }
    // A prompt of 3, then one at a time: the single rows read the keys the prompt wrote.
    decoder.reset();
    expect_logits_near(decoder.append(std::span<const int32_t>(text.data(), 3)), row(expected, 2, V),
                       std::string(c.name) + " prompt of 3");
    for (int64_t t = 3; t < T; ++t)
      expect_logits_near(decoder.append(std::span<const int32_t>(&text[t], 1)), row(expected, t, V),
                         std::string(c.name) + " after the prompt, position " + std::to_string(t));
  }
}

TEST(DecoderTest, RestartedOnASlidingWindowEqualsTheFullForwardPastTheBlock) {
  for (const Case& c : cases()) {
    Gpt model = sharp_model(c.config, 4);
    const int64_t T = c.config.block_size;
    const std::vector<int32_t> text = random_ids(3 * T, c.config.vocab_size, 18);
    Decoder decoder(model);
    for (int64_t end = T + 1; end <= 3 * T; ++end) {  // windows text[end-T, end)
      const std::vector<int32_t> window(text.begin() + (end - T), text.begin() + end);
      decoder.reset();
      std::span<const float> got = decoder.append(window);
      EXPECT_EQ(decoder.length(), T);
      expect_logits_near(got, row(forward_logits(model, window), T - 1, c.config.vocab_size),
                         std::string(c.name) + " window ending " + std::to_string(end));
    }
  }
}

// Window mode rebuilds the window all at once: it must give the bits of one position at a
// time (the per-row schedule it replaced computed exactly those), on every window.
TEST(DecoderTest, APromptAtOnceGivesTheSameBitsAsOneByOne) {
  for (const Case& c : cases()) {
    Gpt model = sharp_model(c.config, 5);
    const int64_t T = c.config.block_size;
    const std::vector<int32_t> text = random_ids(T, c.config.vocab_size, 19);
    Decoder one_by_one(model), chunked(model);
    for (int32_t id : text) one_by_one.append(std::span<const int32_t>(&id, 1));
    // A prompt of 3, then the rest in two pieces: later pieces read the cache the first wrote.
    const std::span<const int32_t> all(text);
    chunked.append(all.subspan(0, 3));
    chunked.append(all.subspan(3, 2));
    chunked.append(all.subspan(5));
    ASSERT_EQ(chunked.length(), T);
    for (int64_t v = 0; v < c.config.vocab_size; ++v)
      ASSERT_EQ(chunked.logits()[v], one_by_one.logits()[v]) << c.name << " symbol " << v;
    Decoder whole(model);
    whole.append(all);
    for (int64_t v = 0; v < c.config.vocab_size; ++v)
      ASSERT_EQ(whole.logits()[v], one_by_one.logits()[v]) << c.name << " whole window, symbol " << v;
  }
}

// An append of 16 rows or more is split over the threads (rows, and attention's pieces);
// the bits must not depend on it: windows of 16 to 40 rows, rebuilt on 1, 2 and 3 threads,
// equal feeding the same ids one by one on one thread.
TEST(DecoderTest, AWindowSplitOverThreadsGivesTheSameBitsAsOneThread) {
  if (const std::string why = test::use_test_environment(); !why.empty()) GTEST_SKIP() << why;
  for (const char* position : {"rope", "learned"}) {
    const ModelConfig config = config_of(3, 20, 2, 40, 17, position);
    Gpt model = sharp_model(config, 6);
    for (int64_t n : {16, 23, 40}) {
      const std::vector<int32_t> text = random_ids(n, config.vocab_size, 20 + n);
      set_num_threads(1);
      Decoder one_by_one(model);
      for (int32_t id : text) one_by_one.append(std::span<const int32_t>(&id, 1));
      for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        Decoder split(model);
        split.append(text);
        for (int64_t v = 0; v < config.vocab_size; ++v)
          ASSERT_EQ(split.logits()[v], one_by_one.logits()[v])
              << position << " n " << n << " threads " << threads << " symbol " << v;
      }
    }
  }
  set_num_threads(1);
}

TEST(DecoderTest, PositionsPastTheBlockAndUnknownIdsAreRefused) {
  Gpt model = sharp_model(config_of(1, 16, 2, 4, 13, "rope"), 6);
  Decoder decoder(model);
  const std::vector<int32_t> four = {1, 2, 3, 4}, one = {5}, unknown = {13};
  EXPECT_THROW(decoder.append(unknown), InternalError);
  decoder.reset();
  decoder.append(four);
  EXPECT_THROW(decoder.append(one), InternalError);
  decoder.reset();
  EXPECT_NO_THROW(decoder.append(one));
}

// ---- Context shift (Decoder::drop_oldest) ------------------------------------------------

// Keys before RoPE [T, D] (head h at columns h*d..h*d+d-1) of one layer, from the
// residual stream entering it [T, D]: k = LN1(x) Wk^T, in double.
std::vector<double> pre_rope_keys(const Gpt& model, int64_t layer, const Tensor& stream) {
  const ModelConfig& c = model.config();
  const int64_t T = stream.dim(1), D = c.n_embd;
  const std::string b = "blocks." + std::to_string(layer) + ".";
  const Tensor& gain = model.parameters().get(b + "ln1.weight").value();
  const Tensor& bias = model.parameters().get(b + "ln1.bias").value();
  const Tensor& wk = model.parameters().get(b + "attn.k_proj.weight").value();  // [D, D]
  std::vector<double> keys(static_cast<size_t>(T * D));
  std::vector<double> h(static_cast<size_t>(D));
  for (int64_t t = 0; t < T; ++t) {
    const float* x = stream.data() + t * D;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < D; ++j) mean += x[j] / static_cast<double>(D);
    for (int64_t j = 0; j < D; ++j) var += (x[j] - mean) * (x[j] - mean) / static_cast<double>(D);
    for (int64_t j = 0; j < D; ++j) h[j] = (x[j] - mean) / std::sqrt(var + c.norm_eps) * gain[j] + bias[j];
    for (int64_t o = 0; o < D; ++o) {
      double sum = 0;
      for (int64_t j = 0; j < D; ++j) sum += h[j] * wk[o * D + j];
      keys[t * D + o] = sum;
    }
  }
  return keys;
}

// Head vector k [d] rotated to position p, angles in double (docs/model.md, "RoPE").
std::vector<double> rotated(const double* k, int64_t d, int64_t p, double base) {
  std::vector<double> out(static_cast<size_t>(d));
  for (int64_t i = 0; i < d / 2; ++i) {
    const double angle = static_cast<double>(p) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
    out[2 * i] = k[2 * i] * std::cos(angle) - k[2 * i + 1] * std::sin(angle);
    out[2 * i + 1] = k[2 * i] * std::sin(angle) + k[2 * i + 1] * std::cos(angle);
  }
  return out;
}

std::vector<Case> rope_cases() {
  return {{config_of(2, 16, 2, 12, 13, "rope"), "rope D16 H2"},
          {config_of(3, 20, 2, 9, 70, "rope"), "rope D20 H2 V70"},
          {config_of(2, 24, 4, 16, 11, "rope"), "rope D24 H4 d6"}};
}

TEST(ContextShiftTest, ShiftedKeysEqualThePreRopeKeysRotatedToTheirNewPositions) {
  for (const Case& c : rope_cases()) {
    Gpt model = sharp_model(c.config, 8);
    const int64_t T = c.config.block_size, D = c.config.n_embd, d = c.config.head_width();
    const std::vector<int32_t> text = random_ids(T, c.config.vocab_size, 29);
    std::vector<Tensor> streams;  // entering each block, [1,T,D]
    {
      NoGradGuard no_grad;
      ForwardHooks hooks;
      for (int64_t layer = 0; layer < c.config.n_layer; ++layer) hooks.record(hook::resid_pre(layer));
      model.forward(text, 1, T, {.hooks = &hooks});
      for (int64_t layer = 0; layer < c.config.n_layer; ++layer) streams.push_back(hooks[hook::resid_pre(layer)]);
    }
    for (int64_t count : {int64_t{1}, T / 2, T - 1}) {
      Decoder decoder(model);
      decoder.append(text);
      decoder.drop_oldest(count);
      ASSERT_EQ(decoder.length(), T - count);
      for (int64_t layer = 0; layer < c.config.n_layer; ++layer) {
        const std::vector<double> keys = pre_rope_keys(model, layer, streams[layer]);  // [T, D]
        for (int64_t head = 0; head < c.config.n_head; ++head)
          for (int64_t t = 0; t < T - count; ++t) {  // symbol count + t, now at position t
            const std::vector<double> expected = rotated(&keys[(count + t) * D + head * d], d, t, c.config.rope_base);
            const std::vector<float> got = decoder.cached_key(layer, head, t);
            for (int64_t j = 0; j < d; ++j)
              ASSERT_NEAR(got[j], expected[j], 1e-5 * (1.0 + std::abs(expected[j])))
                  << c.name << " drop " << count << " layer " << layer << " head " << head << " position " << t
                  << " coordinate " << j;
          }
      }
    }
  }
}

TEST(ContextShiftTest, LayerZeroAfterAShiftIsAFreshComputationOfTheKeptSymbols) {
  for (const Case& c : rope_cases()) {
    Gpt model = sharp_model(c.config, 9);
    const int64_t T = c.config.block_size, count = T / 2, kept = T - count;
    const std::vector<int32_t> text = random_ids(T + 1, c.config.vocab_size, 31);
    Decoder shifted(model), fresh(model);
    shifted.append(std::span<const int32_t>(text.data(), static_cast<size_t>(T)));
    shifted.drop_oldest(count);
    fresh.append(std::span<const int32_t>(text.data() + count, static_cast<size_t>(kept)));
    // The next symbol goes to position kept in both.
    shifted.append(std::span<const int32_t>(&text[T], 1));
    fresh.append(std::span<const int32_t>(&text[T], 1));
    ASSERT_EQ(shifted.length(), kept + 1);
    for (int64_t head = 0; head < c.config.n_head; ++head)
      for (int64_t t = 0; t <= kept; ++t) {
        // Layer 0 reads only the symbol: its values move unchanged; its keys differ from a
        // fresh rotation by the rounding of turning twice (R(-count) R(count + t)).
        EXPECT_EQ(shifted.cached_value(0, head, t), fresh.cached_value(0, head, t)) << c.name << " position " << t;
        const std::vector<float> got = shifted.cached_key(0, head, t), expected = fresh.cached_key(0, head, t);
        for (size_t j = 0; j < got.size(); ++j)
          ASSERT_NEAR(got[j], expected[j], 1e-5f * (1.0f + std::abs(expected[j]))) << c.name << " position " << t;
      }
  }
}

TEST(ContextShiftTest, AOneLayerModelContinuesAsAFreshForwardOverTheKeptSymbols) {
  // With one layer every cached key and value is a layer-0 one, so after a shift the logits
  // are those of the training forward over the kept symbols and the new one.
  Gpt model = sharp_model(config_of(1, 16, 2, 10, 13, "rope"), 10);
  const int64_t T = 10, count = 5;
  const std::vector<int32_t> text = random_ids(T + 3, 13, 37);
  Decoder decoder(model);
  decoder.append(std::span<const int32_t>(text.data(), static_cast<size_t>(T)));
  decoder.drop_oldest(count);
  const std::vector<int32_t> kept_and_new(text.begin() + count, text.end());  // 8 symbols at positions 0..7
  const std::vector<float> expected = forward_logits(model, kept_and_new);
  for (int64_t t = T - count; t < static_cast<int64_t>(kept_and_new.size()); ++t)
    expect_logits_near(decoder.append(std::span<const int32_t>(&kept_and_new[t], 1)), row(expected, t, 13),
                       "position " + std::to_string(t));
}

TEST(ContextShiftTest, LearnedPositionsAndBadCountsAreRefused) {
  Gpt learned = sharp_model(config_of(1, 16, 2, 4, 13, "learned"), 11);
  Decoder decoder(learned);
  decoder.append(std::vector<int32_t>{1, 2, 3, 4});
  EXPECT_THROW(decoder.drop_oldest(2), InternalError);
  Gpt rope = sharp_model(config_of(1, 16, 2, 4, 13, "rope"), 11);
  Decoder shifting(rope);
  shifting.append(std::vector<int32_t>{1, 2});
  EXPECT_THROW(shifting.drop_oldest(3), InternalError);
  EXPECT_THROW(shifting.drop_oldest(0), InternalError);
  shifting.drop_oldest(2);
  EXPECT_EQ(shifting.length(), 0);
}

// At block_size 1 a shift drops the one cached position (issue 45: it used to turn the
// kept keys through a RoPE table that has no position 1, an internal check): the next
// symbol is then read alone, as a fresh forward over it.
TEST(ContextShiftTest, BlockSizeOneDropsItsOnePositionAndGoesOn) {
  Gpt model = sharp_model(config_of(1, 16, 2, 1, 13, "rope"), 12);
  Decoder decoder(model);
  decoder.append(std::vector<int32_t>{5});
  decoder.drop_oldest(1);
  EXPECT_EQ(decoder.length(), 0);
  const std::vector<int32_t> next = {7};
  expect_logits_near(decoder.append(std::span<const int32_t>(next)), forward_logits(model, next), "after the shift");
}

TEST(PackedLinearTest, EqualsThePlainLoopForEveryPanelWidthWithAndWithoutBias) {
  Rng rng(7);
  for (int64_t out : {1, 7, 8, 13, 64, 65, 79, 130, 192}) {
    for (int64_t in : {1, 5, 16, 64, 100}) {
      std::vector<float> weight(out * in), bias(out);
      for (float& w : weight) w = static_cast<float>(rng.uniform() * 2 - 1);
      for (float& b : bias) b = static_cast<float>(rng.uniform() * 2 - 1);
      for (bool with_bias : {false, true}) {
        const PackedLinear packed(weight.data(), with_bias ? bias.data() : nullptr, out, in);
        for (auto [rows, accumulate] : {std::pair<int64_t, bool>{3, false}, {3, true}, {13, false}, {13, true}}) {
          // 3 rows (one at a time) and 13 (register blocks of rows, then the rest), with row
          // strides wider than the data: the gaps must stay untouched.
          const int64_t ldx = in + 3, ldy = out + 5;
          std::vector<float> x(rows * ldx), y(rows * ldy), expected;
          for (float& v : x) v = static_cast<float>(rng.uniform() * 2 - 1);
          for (float& v : y) v = static_cast<float>(rng.uniform() * 2 - 1);
          expected = y;
          for (int64_t r = 0; r < rows; ++r)
            linear_reference(expected.data() + r * ldy, x.data() + r * ldx, weight.data(),
                             with_bias ? bias.data() : nullptr, out, in, accumulate);
          packed.forward(y.data(), ldy, x.data(), ldx, rows, accumulate);
          for (size_t i = 0; i < y.size(); ++i) {
            const bool gap = static_cast<int64_t>(i) % ldy >= out;
            // Each term is at most 1, so the sum's rounding error is below in * 2^-23 or so.
            const float tolerance = gap ? 0.0f : 1e-6f * static_cast<float>(in + 2);
            ASSERT_NEAR(y[i], expected[i], tolerance)
                << "out " << out << " in " << in << " rows " << rows << " bias " << with_bias << " accumulate "
                << accumulate << " at " << i;
          }
        }
      }
    }
  }
}

TEST(PackedLinearTest, VectorMatrixEqualsThePlainLoopForStridedMatrices) {
  Rng rng(8);
  for (int64_t width : {1, 5, 8, 32, 63, 64, 65, 150}) {
    for (int64_t in : {1, 7, 32, 64}) {
      const int64_t ld = width + 11;  // rows wider than the product: as the transposed key cache
      std::vector<float> a(in * ld + 8), x(in), y(width + 9, 42.0f);
      for (float& v : a) v = static_cast<float>(rng.uniform() * 2 - 1);
      for (float& v : x) v = static_cast<float>(rng.uniform() * 2 - 1);
      vector_matrix(y.data(), x.data(), a.data(), ld, in, width);
      for (int64_t c = 0; c < width; ++c) {
        float expected = 0.0f;
        for (int64_t i = 0; i < in; ++i) expected += x[i] * a[i * ld + c];
        ASSERT_NEAR(y[c], expected, 1e-6f * static_cast<float>(in + 1)) << "width " << width << " in " << in << " column " << c;
      }
      for (size_t c = static_cast<size_t>(width); c < y.size(); ++c) ASSERT_EQ(y[c], 42.0f) << "written past width " << width;
    }
  }
}

TEST(PackedLinearTest, PlainLoopKnownAnswer) {
  // W = [[1, 2], [3, 4], [5, 6]], b = [0.5, -1, 2], x = [1, -1]: y = [-0.5, -2, 1].
  const std::vector<float> weight = {1, 2, 3, 4, 5, 6}, bias = {0.5f, -1, 2}, x = {1, -1};
  std::vector<float> y(3, 10.0f);
  linear_reference(y.data(), x.data(), weight.data(), bias.data(), 3, 2, false);
  EXPECT_EQ(y, (std::vector<float>{-0.5f, -2, 1}));
  linear_reference(y.data(), x.data(), weight.data(), nullptr, 3, 2, true);  // += [-1, -1, -1]
  EXPECT_EQ(y, (std::vector<float>{-1.5f, -3, 0}));
  std::vector<float> packed_y(3, 10.0f);
  PackedLinear(weight.data(), bias.data(), 3, 2).forward(packed_y.data(), 3, x.data(), 2, 1, false);
  EXPECT_EQ(packed_y, (std::vector<float>{-0.5f, -2, 1}));
}

}  // namespace
}  // namespace mg

// The inference decoder (nn/decoder.h) against the autograd model: its logits equal the
// last-position logits of Gpt::forward at every position of the block and, restarted on a
// sliding window, past it, for both position types; and the packed matrix-vector kernel
// equals a plain loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/runtime.h"
#include "nn/decoder.h"
#include "kernels/packed_linear.h"
#include "tensor/error.h"
#include "test_support.h"

namespace mg {
namespace {

using test::config_of;

// SPEC's init (std 0.02) leaves attention almost uniform, where a wrong rotation or a
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

// Logits [V] of the last position of a full forward over ids (at positions 0..n-1).
std::vector<float> full_logits(Gpt& model, const std::vector<int32_t>& ids) {
  NoGradGuard no_grad;
  const int64_t T = static_cast<int64_t>(ids.size()), V = model.config().vocab_size;
  Tensor all = model.forward(ids, 1, T).value();
  return std::vector<float>(all.data() + (T - 1) * V, all.data() + T * V);
}

// Float32 sums in another order: logits of magnitude up to ~10 agree to a few 1e-6.
constexpr float kLogitTolerance = 2e-5f;

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

TEST(DecoderTest, OnePositionAtATimeEqualsTheFullForwardAtEveryPositionOfTheBlock) {
  for (const Case& c : cases()) {
    Gpt model = sharp_model(c.config, 3);
    const int64_t T = c.config.block_size;
    const std::vector<int32_t> text = random_ids(T, c.config.vocab_size, 17);
    Decoder decoder(model);
    for (int64_t n = 1; n <= T; ++n) {
      std::span<const float> got = decoder.append(std::span<const int32_t>(&text[n - 1], 1));
      EXPECT_EQ(decoder.length(), n);
      expect_logits_near(got, full_logits(model, {text.begin(), text.begin() + n}),
                         std::string(c.name) + " position " + std::to_string(n - 1));
    }
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
      expect_logits_near(got, full_logits(model, window), std::string(c.name) + " window ending " + std::to_string(end));
    }
  }
}

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
  }
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

TEST(PackedLinearTest, EqualsThePlainLoopForEveryPanelWidthWithAndWithoutBias) {
  Rng rng(7);
  for (int64_t out : {1, 7, 8, 13, 64, 65, 79, 130, 192}) {
    for (int64_t in : {1, 5, 16, 64, 100}) {
      std::vector<float> weight(out * in), bias(out);
      for (float& w : weight) w = static_cast<float>(rng.uniform() * 2 - 1);
      for (float& b : bias) b = static_cast<float>(rng.uniform() * 2 - 1);
      for (bool with_bias : {false, true}) {
        const PackedLinear packed(weight.data(), with_bias ? bias.data() : nullptr, out, in);
        for (bool accumulate : {false, true}) {
          // 3 rows, with row strides wider than the data: the gaps must stay untouched.
          const int64_t rows = 3, ldx = in + 3, ldy = out + 5;
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
                << "out " << out << " in " << in << " bias " << with_bias << " accumulate " << accumulate << " at " << i;
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

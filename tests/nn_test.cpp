// The model's parameter inventory and initialisation (docs/model.md), and the
// lesson's parameter count: 4*D^2 attention projection weights whatever the head count.
#include <gtest/gtest.h>

#include <cmath>

#include "nn/gpt.h"
#include "core/error.h"

namespace mg {
namespace {

int64_t attention_projection_count(const Gpt& model, int64_t layer) {
  int64_t n = 0;
  const std::string b = "blocks." + std::to_string(layer) + ".attn.";
  for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"})
    n += model.parameters().get(b + proj + ".weight").value().numel();
  return n;
}

TEST(GptTest, AttentionBlockHoldsFourDSquaredProjectionWeightsForAnyHeadCount) {
  for (int64_t heads : {1, 2, 4}) {
    ModelConfig c;
    c.n_head = heads;
    Gpt model(c);
    EXPECT_EQ(attention_projection_count(model, 0), 4 * 64 * 64) << heads << " heads";
  }
}

TEST(GptTest, DefaultModelHasTheReferenceParameterCount) {
  ModelConfig c;  // the documented defaults, vocabulary 79, RoPE
  Gpt model(c);
  // The reference's count: `/usr/bin/python3 scripts/torch_reference.py write-checkpoint
  // --config configs/default.json --out /tmp/default.safetensors` prints "params": 209152.
  EXPECT_EQ(model.parameters().element_count(), 209152);
  c.position = PositionType::learned;
  EXPECT_EQ(Gpt(c).parameters().element_count(), 209152 + 64 * 64);
}

TEST(GptTest, BadShapesAreConfigErrorsNamingTheKeys) {
  ModelConfig c;
  c.n_head = 3;  // 64 % 3 != 0
  try {
    Gpt model(c);
    FAIL() << "accepted n_embd 64 with 3 heads";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model.n_head"), std::string::npos) << e.what();
  }
  c.n_head = 64;  // head width 1: odd, RoPE cannot pair coordinates
  EXPECT_THROW(Gpt{c}, InputError);
}

TEST(GptTest, InitialisationFollowsTheSpec) {
  ModelConfig c;
  Gpt model(c);
  Rng rng(1);
  model.initialize(rng);
  auto stddev = [&](const std::string& name) {
    const Tensor& t = model.parameters().get(name).value();
    double sum = 0, sq = 0;
    for (float v : t.span()) {
      sum += v;
      sq += static_cast<double>(v) * v;
    }
    const double mean = sum / t.numel();
    return std::sqrt(sq / t.numel() - mean * mean);
  };
  EXPECT_NEAR(stddev("tok_emb.weight"), 0.02, 0.001);
  EXPECT_NEAR(stddev("blocks.0.attn.q_proj.weight"), 0.02, 0.001);
  EXPECT_NEAR(stddev("head.weight"), 0.02, 0.001);
  EXPECT_NEAR(stddev("blocks.1.attn.out_proj.weight"), 0.02 / std::sqrt(8.0), 0.0005);
  EXPECT_NEAR(stddev("blocks.3.mlp.proj.weight"), 0.02 / std::sqrt(8.0), 0.0005);
  EXPECT_EQ(model.parameters().get("blocks.0.ln1.weight").value()[5], 1.0f);
  EXPECT_EQ(model.parameters().get("blocks.0.mlp.fc.bias").value()[5], 0.0f);
  EXPECT_EQ(model.parameters().get("ln_f.bias").value()[0], 0.0f);
}

}  // namespace
}  // namespace mg

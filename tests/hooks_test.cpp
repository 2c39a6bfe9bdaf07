// The forward's named activation points (nn/hooks.h): each recorded point has its shape
// and holds what its name says (the stream is the sum of the branches, the attention
// branch is the heads through their slices of Wo, ln_final's scale is the stream's
// sigma), recording changes no logit, and edits patch what the rest of the forward sees.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "model_support.h"
#include "nn/gpt.h"
#include "nn/hooks.h"

namespace mg {
namespace {

// Every parameter drawn normal(0, 0.3), biases and LayerNorm weights included, so no term
// of a sum is zero by construction.
Gpt random_model(const std::string& position) {
  Gpt model = test::small_model(2, 16, 12, 11, 3, position);
  Rng rng(17);
  for (auto& p : model.parameters().all())
    for (float& w : p.var.value().span()) w = static_cast<float>(rng.normal() * 0.3);
  return model;
}

const std::vector<int32_t> kIds = {1, 4, 2, 9, 0, 3, 3, 7, 10, 5};  // B = 2, T = 5

Tensor run(const Gpt& model, ForwardHooks* hooks, const std::vector<int32_t>& ids = kIds) {
  NoGradGuard no_grad;
  return model.forward(ids, 2, 5, {.hooks = hooks}).value().clone();
}

void expect_near(const Tensor& a, const Tensor& b, double tolerance, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_NEAR(a.data()[i], b.data()[i], tolerance) << what << " [" << i << "]";
}

TEST(Hooks, EveryPointHasItsShapeAndRecordingChangesNoLogit) {
  for (const std::string position : {"rope", "learned"}) {
    Gpt model = random_model(position);
    const Tensor plain = run(model, nullptr);
    ForwardHooks hooks;
    hooks.record_all();
    const Tensor recorded = run(model, &hooks);
    expect_near(recorded, plain, 1e-5, "logits");  // the composed path equals the fused one
    const Shape stream{2, 5, 16};
    EXPECT_EQ(hooks[hook::embed].shape(), stream);
    EXPECT_EQ(hooks.has(hook::pos_embed), position == "learned");
    if (position == "learned") EXPECT_EQ(hooks[hook::pos_embed].shape(), (Shape{5, 16}));
    for (int64_t l = 0; l < 2; ++l) {
      for (const std::string& name : {hook::resid_pre(l), hook::attn_out(l), hook::resid_mid(l), hook::mlp_out(l),
                                      hook::resid_post(l)})
        EXPECT_EQ(hooks[name].shape(), stream) << name;
      EXPECT_EQ(hooks[hook::pattern(l)].shape(), (Shape{2, 2, 5, 5}));
      EXPECT_EQ(hooks[hook::z(l)].shape(), (Shape{2, 2, 5, 8}));
    }
    EXPECT_EQ(hooks[hook::ln_final_scale].shape(), (Shape{2, 5, 1}));
  }
}

TEST(Hooks, ThePointsHoldTheStreamAndItsBranches) {
  Gpt model = random_model("learned");
  ForwardHooks hooks;
  hooks.record_all();
  run(model, &hooks);
  // resid_pre(0) = embed + pos_embed; resid_mid = resid_pre + attn_out; resid_post = resid_mid + mlp_out.
  Tensor sum = hooks[hook::embed].clone();
  for (int64_t i = 0; i < sum.numel(); ++i) sum.data()[i] += hooks[hook::pos_embed].data()[i % (5 * 16)];
  expect_near(hooks[hook::resid_pre(0)], sum, 1e-6, "resid_pre(0)");
  for (int64_t l = 0; l < 2; ++l) {
    Tensor mid = hooks[hook::resid_pre(l)].clone(), post = hooks[hook::resid_mid(l)].clone();
    for (int64_t i = 0; i < mid.numel(); ++i) {
      mid.data()[i] += hooks[hook::attn_out(l)].data()[i];
      post.data()[i] += hooks[hook::mlp_out(l)].data()[i];
    }
    expect_near(hooks[hook::resid_mid(l)], mid, 1e-5, "resid_mid");
    expect_near(hooks[hook::resid_post(l)], post, 1e-5, "resid_post");
    if (l == 0) expect_near(hooks[hook::resid_pre(1)], hooks[hook::resid_post(0)], 0.0, "resid_pre(1)");
    // attn_out[b,t,:] = sum_h Wo[:, h*d..h*d+d-1] z[b,h,t,:]: the heads through their slices of Wo.
    const Tensor& wo = model.parameters().get("blocks." + std::to_string(l) + ".attn.out_proj.weight").value();
    const Tensor& z = hooks[hook::z(l)];
    Tensor out = Tensor::zeros({2, 5, 16});
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t t = 0; t < 5; ++t)
          for (int64_t i = 0; i < 16; ++i)
            for (int64_t j = 0; j < 8; ++j)
              out.data()[(b * 5 + t) * 16 + i] += wo[i * 16 + h * 8 + j] * z.data()[((b * 2 + h) * 5 + t) * 8 + j];
    expect_near(hooks[hook::attn_out(l)], out, 1e-5, "attn_out");
  }
  // ln_final.hook_scale = sqrt(var + eps) of each row of the final stream.
  const Tensor& final_stream = hooks[hook::resid_post(1)];
  for (int64_t r = 0; r < 10; ++r) {
    double mean = 0.0, var = 0.0;
    for (int64_t j = 0; j < 16; ++j) mean += final_stream.data()[r * 16 + j] / 16.0;
    for (int64_t j = 0; j < 16; ++j) var += std::pow(final_stream.data()[r * 16 + j] - mean, 2) / 16.0;
    EXPECT_NEAR(hooks[hook::ln_final_scale].data()[r], std::sqrt(var + 1e-5), 1e-5) << r;
  }
}

TEST(Hooks, PatchingTheWholeStreamGivesTheSourceTextsLogits) {
  Gpt model = random_model("rope");
  const std::vector<int32_t> other = {2, 2, 8, 1, 0, 6, 5, 4, 3, 9};
  ForwardHooks clean;
  clean.record(hook::resid_pre(1));
  clean.record(hook::z(0));
  const Tensor clean_logits = run(model, &clean, other);
  // The whole stream entering the last block: everything after it is the source's.
  ForwardHooks patched;
  patched.edit(hook::resid_pre(1), copy_position(-1, clean[hook::resid_pre(1)]));
  expect_near(run(model, &patched), clean_logits, 0.0, "stream patched");
  // One position only: the positions before it keep this text's logits (the mask).
  ForwardHooks one;
  one.edit(hook::resid_pre(1), copy_position(3, clean[hook::resid_pre(1)]));
  const Tensor own = run(model, nullptr), one_logits = run(model, &one);
  for (int64_t i = 0; i < 3 * 11; ++i) EXPECT_EQ(one_logits.data()[i], own.data()[i]);
  EXPECT_NE(one_logits.data()[3 * 11], own.data()[3 * 11]);
  // Both heads of layer 0 patched equal layer 0's attention from the source text.
  ForwardHooks heads;
  heads.record(hook::z(0));
  heads.edit(hook::z(0), copy_head(0, clean[hook::z(0)]));
  heads.edit(hook::z(0), copy_head(1, clean[hook::z(0)]));
  run(model, &heads);
  expect_near(heads[hook::z(0)], clean[hook::z(0)], 0.0, "z recorded after the edits");
}

TEST(Hooks, AnEditTheForwardNeverReachesOrWithTheTapeOnIsRefused) {
  Gpt model = random_model("rope");
  ForwardHooks missing;
  missing.edit(hook::z(2), [](Tensor&) {});  // the model has layers 0 and 1
  EXPECT_THROW(run(model, &missing), InternalError);
  ForwardHooks taped;
  taped.edit(hook::resid_pre(0), [](Tensor&) {});
  EXPECT_THROW(model.forward(kIds, 2, 5, {.hooks = &taped}), InternalError);
  ForwardHooks scale;
  scale.edit(hook::ln_final_scale, [](Tensor&) {});
  EXPECT_THROW(run(model, &scale), InternalError);
}

}  // namespace
}  // namespace mg

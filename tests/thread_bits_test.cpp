// Every op of a training step, forward and backward, gives the same bits on 1, 2 and 3
// threads, at the default model's shapes (configs/default.json: B 32, T 64, D 64, 2 heads,
// MLP 256, vocabulary 79), on oneDNN and on OpenBLAS; so do the gradient norm, AdamW, a
// whole step of the model (two steps, RoPE and learned positions) and the no-grad forward
// that eval and inspect-heads run. A sum whose order followed the thread count (a GEMM
// cutting its inner dimension K = B*T across the threads, a reduction over rows in
// per-thread partials) shows here as the op and the tensor whose bytes differ. Before
// gemm_split (kernels/gemm.h) this found one kind: oneDNN's weight gradients, the dW of
// every linear layer, the QKV projection and the MLP's first layer (its second, [64,256],
// oneDNN kept whole); every other sum was already in a fixed order.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "core/random.h"
#include "kernels/rope.h"
#include "kernels/runtime.h"
#include "model_support.h"
#include "optim/adamw.h"

namespace mg {
namespace {

constexpr int64_t B = 32, T = 64, D = 64, H = 2, F = 256, V = 79;
constexpr int kThreadCounts[] = {1, 2, 3};

// The tensors one run of a case produced, by name ("out", "dx", "dW", ...).
struct Named {
  std::string name;
  Tensor value;
};
using Outputs = std::vector<Named>;

Tensor random_tensor(const Shape& shape, Rng& rng, double scale = 1.0) {
  Tensor t = Tensor::empty(shape);
  for (float& v : t.span()) v = static_cast<float>(rng.normal() * scale);
  return t;
}

Var leaf(const Shape& shape, Rng& rng, double scale = 1.0) { return Var(random_tensor(shape, rng, scale), true); }

std::vector<int32_t> random_ids(int64_t n, int64_t bound, Rng& rng) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int32_t& id : ids) id = static_cast<int32_t>(rng.uniform_int(static_cast<uint64_t>(bound)));
  return ids;
}

// sum(out * weights) as a scalar Var, summed serially in double, so that backward(root)
// sends d out = weights into the op under test and nothing of the harness has threads.
Var weighted_sum(const Var& out, const Tensor& weights) {
  double total = 0.0;
  for (int64_t i = 0; i < out.value().numel(); ++i) total += double(out.value()[i]) * weights[i];
  Tensor value = Tensor::full({1}, static_cast<float>(total));
  return make_result(value, {out}, [out, weights](const Tensor& dout) {
    const GradOut g = out.grad_out();
    for (int64_t i = 0; i < g.numel; ++i) g.data[i] = (g.accumulate ? g.data[i] : 0.0f) + dout[0] * weights[i];
  });
}

// Runs OUT's backward from a random upstream gradient and returns out and every leaf's gradient.
Outputs backward_of(const Var& out, const std::vector<Named>& leaves_named, std::vector<Var>& leaves, Rng& rng) {
  Outputs result{{"out", out.value().clone()}};
  backward(weighted_sum(out, random_tensor(out.shape(), rng)));
  for (size_t i = 0; i < leaves.size(); ++i) result.push_back({leaves_named[i].name, leaves[i].grad().clone()});
  return result;
}

// One case: builds its inputs from a fixed seed and runs forward and backward.
struct Case {
  std::string name;
  std::function<Outputs()> run;
};

Outputs run_op(const std::function<Var(std::vector<Var>&, Rng&)>& op, const std::vector<std::pair<std::string, Shape>>& inputs) {
  Rng rng(42);
  std::vector<Var> leaves;
  std::vector<Named> names;
  for (const auto& [name, shape] : inputs) {
    leaves.push_back(leaf(shape, rng, name[0] == 'W' ? 0.1 : 1.0));
    names.push_back({name, Tensor()});
  }
  Var out = op(leaves, rng);
  return backward_of(out, names, leaves, rng);
}

std::vector<Case> op_cases() {
  static const RopeTable rope_table = make_rope_table(T, D / H, 10000.0);
  std::vector<Case> cases;
  cases.push_back({"linear (vocabulary head) [B*T,D]->[B*T,V]", [] {
    return run_op([](std::vector<Var>& in, Rng&) { return linear(in[0], in[1]); }, {{"dx", {B, T, D}}, {"dW", {V, D}}});
  }});
  cases.push_back({"linear with bias [B*T,D]->[B*T,D]", [] {
    return run_op([](std::vector<Var>& in, Rng&) { return linear(in[0], in[1], in[2]); },
                  {{"dx", {B, T, D}}, {"dW", {D, D}}, {"db", {D}}});
  }});
  cases.push_back({"linear_residual (out projection)", [] {
    return run_op([](std::vector<Var>& in, Rng&) { return linear_residual(in[0], in[1], in[2]); },
                  {{"dresidual", {B, T, D}}, {"dx", {B, T, D}}, {"dW", {D, D}}});
  }});
  cases.push_back({"qkv_projection [B*T,D]->[B*T,3D]", [] {
    return run_op([](std::vector<Var>& in, Rng&) { return qkv_projection(in[0], in[1], in[2], in[3]); },
                  {{"dx", {B, T, D}}, {"dWq", {D, D}}, {"dWk", {D, D}}, {"dWv", {D, D}}});
  }});
  cases.push_back({"mlp_residual D->F->D", [] {
    return run_op([](std::vector<Var>& in, Rng&) { return mlp_residual(in[0], in[1], in[2], in[3], in[4], in[5]); },
                  {{"dresidual", {B, T, D}}, {"dx", {B, T, D}}, {"dW1", {F, D}}, {"db1", {F}}, {"dW2", {D, F}},
                   {"db2", {D}}});
  }});
  cases.push_back({"layer_norm [B*T,D]", [] {
    return run_op([](std::vector<Var>& in, Rng&) { return layer_norm(in[0], in[1], in[2], 1e-5f); },
                  {{"dx", {B, T, D}}, {"dweight", {D}}, {"dbias", {D}}});
  }});
  cases.push_back({"embedding (tokens) [V,D]", [] {
    return run_op([](std::vector<Var>& in, Rng& rng) { return embedding(in[0], random_ids(B * T, V, rng), {B, T}); },
                  {{"dtable", {V, D}}});
  }});
  cases.push_back({"learned positions: x + embedding(positions) broadcast over B", [] {
    return run_op([](std::vector<Var>& in, Rng&) {
      std::vector<int32_t> positions(T);
      for (int64_t t = 0; t < T; ++t) positions[t] = static_cast<int32_t>(t);
      return add(in[0], embedding(in[1], positions, {T}));
    }, {{"dx", {B, T, D}}, {"dpos_table", {T, D}}});
  }});
  cases.push_back({"causal_attention (fused), RoPE", [] {
    return run_op([](std::vector<Var>& in, Rng&) { return causal_attention(in[0], H, &rope_table, 0.17677669f); },
                  {{"dqkv", {B, T, 3 * D}}});
  }});
  cases.push_back({"causal_attention (fused), no RoPE", [] {
    return run_op([](std::vector<Var>& in, Rng&) { return causal_attention(in[0], H, nullptr, 0.17677669f); },
                  {{"dqkv", {B, T, 3 * D}}});
  }});
  cases.push_back({"attention op by op: weights, matmul w v, merge_heads", [] {
    return run_op([](std::vector<Var>& in, Rng&) {
      Var heads = split_qkv_heads(in[0], H, &rope_table, 0);
      Var w = causal_attention_weights(select(heads, 0), select(heads, 1), 0.17677669f);
      return merge_heads(matmul(w, select(heads, 2)));
    }, {{"dqkv", {B, T, 3 * D}}});
  }});
  cases.push_back({"gelu [B*T,F]", [] {
    return run_op([](std::vector<Var>& in, Rng&) { return gelu(in[0]); }, {{"dx", {B, T, F}}});
  }});
  cases.push_back({"cross_entropy [B*T,V]", [] {
    return run_op([](std::vector<Var>& in, Rng& rng) { return cross_entropy(in[0], random_ids(B * T, V, rng)); },
                  {{"dlogits", {B, T, V}}});
  }});
  return cases;
}

// The default model (RoPE or learned positions): one training step's loss, gradients,
// gradient norm and AdamW update, and a no-grad forward's logits.
Outputs model_step(const std::string& position) {
  Gpt model = test::small_model(4, D, T, V, 1337, position);
  Rng rng(7);
  const std::vector<int32_t> ids = random_ids(B * T, V, rng), targets = random_ids(B * T, V, rng);
  Outputs result;
  {
    NoGradGuard no_grad;
    result.push_back({"no-grad logits", model.forward(ids, B, T).value().clone()});
  }
  AdamW optimizer(model.parameters(), {});
  for (int step = 0; step < 2; ++step) {
    model.parameters().zero_grad();
    Var loss = model.loss(ids, targets, B, T, {.training = true});
    result.push_back({"loss", loss.value().clone()});
    backward(loss);
    for (auto& p : model.parameters().all()) result.push_back({"grad " + p.name, p.var.grad().clone()});
    const double norm = clip_grad_norm(model.parameters(), 1.0);
    Tensor norm_bits = Tensor::empty({2});  // the double's 8 bytes
    std::memcpy(norm_bits.data(), &norm, sizeof(norm));
    result.push_back({"grad norm", norm_bits});
    optimizer.step(1e-3);
  }
  for (const auto& p : model.parameters().all()) result.push_back({"after AdamW " + p.name, p.var.value().clone()});
  return result;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.numel() == b.numel() && std::memcmp(a.data(), b.data(), sizeof(float) * a.numel()) == 0;
}

// Runs the case on each thread count and expects every tensor's bytes to be those of 1 thread.
void expect_same_bits_on_every_thread_count(const std::string& name, const std::function<Outputs()>& run) {
  std::vector<Outputs> runs;
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    runs.push_back(run());
  }
  set_num_threads(1);
  for (size_t r = 1; r < runs.size(); ++r) {
    ASSERT_EQ(runs[r].size(), runs[0].size());
    for (size_t i = 0; i < runs[0].size(); ++i)
      EXPECT_TRUE(same_bytes(runs[r][i].value, runs[0][i].value))
          << name << ": " << runs[0][i].name << " differs between 1 and " << kThreadCounts[r] << " threads on "
          << backend_name(gemm_backend());
  }
}

class ThreadBitsTest : public ::testing::TestWithParam<GemmBackend> {
 protected:
  void SetUp() override { set_gemm_backend(GetParam()); }
  void TearDown() override {
    set_gemm_backend(default_gemm_backend());
    set_num_threads(1);
  }
};

TEST_P(ThreadBitsTest, EveryOpForwardAndBackward) {
  for (const Case& c : op_cases()) expect_same_bits_on_every_thread_count(c.name, c.run);
}

TEST_P(ThreadBitsTest, ModelStepWithRope) {
  expect_same_bits_on_every_thread_count("model step, RoPE", [] { return model_step("rope"); });
}

TEST_P(ThreadBitsTest, ModelStepWithLearnedPositions) {
  expect_same_bits_on_every_thread_count("model step, learned positions", [] { return model_step("learned"); });
}

INSTANTIATE_TEST_SUITE_P(Backends, ThreadBitsTest,
                         ::testing::Values(GemmBackend::onednn, GemmBackend::openblas),
                         [](const auto& info) { return std::string(backend_name(info.param)); });

}  // namespace
}  // namespace mg

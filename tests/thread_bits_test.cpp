// Every op of a training step, forward and backward, gives the same bits on 1, 2 and 3
// threads, at the default model's shapes (configs/default.json: B 32, T 64, D 64, 2 heads,
// MLP 256, vocabulary 79), on oneDNN and on OpenBLAS; so do every product those ops hand to
// gemm(), the eigenvalues of inspect-heads' OV copy scores, the gradient norm, AdamW, a
// whole step of the model (two steps, RoPE and learned positions) and the no-grad forward
// that eval and inspect-heads run. A sum whose order followed the thread count (a GEMM
// cutting its inner dimension K = B*T across the threads, a reduction over rows in
// per-thread partials) shows here as the op and the tensor whose bytes differ. Before
// gemm_split (kernels/gemm.h) this found oneDNN's weight gradients, the dW of every linear
// layer, the QKV projection and the MLP's first layer (its second, [64,256], oneDNN kept
// whole); and on OpenBLAS, the products its own threads cut in other sums (every one under
// its Haswell and Zen cores, those with some row counts or a K between GEMM_Q and 2 GEMM_Q
// under the others) and dgeev's eigenvalues. ctest runs these tests again under each
// OpenBLAS core and each CPU variant of mini-gpt's kernels (tests/CMakeLists.txt;
// environment_support.h).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "core/random.h"
#include "environment_support.h"
#include "kernels/eigenvalues.h"
#include "kernels/gemm.h"
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

// The products those ops hand to gemm(), with the transposes, beta and epilogue each op gives
// (ops_linear.cpp, ops_attention.cpp; attention's heads on the op-by-op path), configs/
// tiny.json's, and other row counts: 1, 255, 256, 257 (the edges of gemm_split's tiles),
// 2,442 (a batch of texts of 37 symbols, which OpenBLAS's Prescott core cut in other sums
// on 2 threads, where 2,048 rows kept theirs) and 4,160 (an evaluation's 65 windows); a K
// past one chunk, and between OpenBLAS's GEMM_Q and 2 GEMM_Q (K 300 to 1,000), where its
// threaded and one-thread drivers cut K differently.
struct Product {
  std::string name;
  GemmArgs shape;
  bool bias = false, addend = false, multiplier = false;
};

GemmArgs product(int64_t M, int64_t N, int64_t K, GemmTranspose transpose, float beta = 0.0f, int64_t batch = 1) {
  GemmArgs g = tight_gemm_args(transpose, M, N, K, batch);
  g.beta = beta;
  return g;
}

std::vector<Product> products() {
  const int64_t rows = B * T;
  std::vector<Product> list = {
      {"qkv forward", product(rows, 3 * D, D, {.trans_b = true})},
      {"qkv dx", product(rows, D, 3 * D, {}, 1.0f)},
      {"qkv dW", product(3 * D, D, rows, {.trans_a = true})},
      {"out projection forward, bias and residual", product(rows, D, D, {.trans_b = true}), true, true},
      {"out projection dx", product(rows, D, D, {})},
      {"out projection dW, accumulated", product(D, D, rows, {.trans_a = true}, 1.0f)},
      {"MLP up forward, bias", product(rows, F, D, {.trans_b = true}), true},
      {"MLP up dx, accumulated", product(rows, D, F, {}, 1.0f)},
      {"MLP up dW", product(F, D, rows, {.trans_a = true})},
      {"MLP down forward, bias and residual", product(rows, D, F, {.trans_b = true}), true, true},
      {"MLP down dx times GELU's slope", product(rows, F, D, {}), false, false, true},
      {"MLP down dW", product(D, F, rows, {.trans_a = true})},
      {"vocabulary head forward", product(rows, V, D, {.trans_b = true})},
      {"vocabulary head dx", product(rows, D, V, {})},
      {"vocabulary head dW", product(V, D, rows, {.trans_a = true})},
      {"attention scores q k^T", product(T, T, D / H, {.trans_b = true}, 0.0f, B * H)},
      {"attention w v", product(T, D / H, T, {}, 0.0f, B * H)},
      {"attention dv = w^T do, accumulated", product(T, D / H, T, {.trans_a = true}, 1.0f, B * H)},
      {"tiny forward", product(8 * 16, 64, 16, {.trans_b = true}), true},
      {"tiny dW", product(64, 16, 8 * 16, {.trans_a = true})},
      {"an evaluation's 65 windows, MLP up", product(65 * T, F, D, {.trans_b = true}), true},
      {"2,442 rows (66 texts of 37 symbols), MLP up", product(66 * 37, F, D, {.trans_b = true}), true},
      {"2,442 rows, MLP down", product(66 * 37, D, F, {.trans_b = true}), true, true},
      {"one row", product(1, F, D, {.trans_b = true})},
  };
  for (int64_t M : {255, 256, 257})
    for (int t = 0; t < 4; ++t)
      list.push_back({"rows at a tile's edge", product(M, 70, 100, {.trans_a = (t & 1) != 0, .trans_b = (t & 2) != 0})});
  for (int64_t K : {300, 500, 700, 1000, 2085})
    for (int t = 0; t < 4; ++t)
      list.push_back({"K " + std::to_string(K), product(300, 70, K, {.trans_a = (t & 1) != 0, .trans_b = (t & 2) != 0})});
  return list;
}

// One product's operands, C as it starts, and its epilogue, drawn once from `seed`.
struct ProductInputs {
  Tensor a, b, c, bias, addend, multiplier;
  ProductInputs(const GemmArgs& g, uint64_t seed) {
    Rng rng(seed);
    auto uniform = [&](int64_t n) {
      Tensor t = Tensor::empty({n});
      for (float& v : t.span()) v = static_cast<float>(2.0 * rng.uniform() - 1.0);
      return t;
    };
    a = uniform(g.batch * g.M * g.K), b = uniform(g.batch * g.K * g.N), c = uniform(g.batch * g.M * g.N);
    bias = uniform(g.N), addend = uniform(g.M * g.N), multiplier = uniform(g.M * g.N);
  }
};

// The product through gemm(), as an op calls it: C's bytes.
Tensor run_product(const Product& p, const ProductInputs& in) {
  Tensor c = in.c.clone();
  GemmArgs args = p.shape;
  args.A = in.a.data();
  args.B = in.b.data();
  args.C = c.data();
  if (p.bias) args.bias = in.bias.data();
  if (p.addend) args.addend = in.addend.data();
  if (p.multiplier) args.multiplier = in.multiplier.data();
  gemm(args);
  return c;
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
          << backend_name(gemm_backend()) << " (" << test::test_environment() << ")";
  }
}

class ThreadBitsTest : public ::testing::TestWithParam<GemmBackend> {
 protected:
  void SetUp() override {
    if (const std::string why = test::use_test_environment(); !why.empty()) GTEST_SKIP() << why;
    set_gemm_backend(GetParam());
  }
  void TearDown() override {
    set_gemm_backend(default_gemm_backend());
    set_num_threads(1);
  }
};

TEST_P(ThreadBitsTest, EveryProductOfTheModel) {
  uint64_t seed = 1100;
  for (const Product& p : products()) {
    const ProductInputs inputs(p.shape, seed++);
    expect_same_bits_on_every_thread_count(p.name, [&] { return Outputs{{"C", run_product(p, inputs)}}; });
  }
}

TEST_P(ThreadBitsTest, EveryOpForwardAndBackward) {
  for (const Case& c : op_cases()) expect_same_bits_on_every_thread_count(c.name, c.run);
}

TEST_P(ThreadBitsTest, ModelStepWithRope) {
  expect_same_bits_on_every_thread_count("model step, RoPE", [] { return model_step("rope"); });
}

TEST_P(ThreadBitsTest, ModelStepWithLearnedPositions) {
  expect_same_bits_on_every_thread_count("model step, learned positions", [] { return model_step("learned"); });
}

// The one LAPACK call (inspect-heads' OV copy scores, kernels/eigenvalues.h) on a head width
// past dgeev's one-thread sizes: its products are OpenBLAS's, whatever the backend.
TEST(ThreadBitsLapackTest, EigenvaluesOnOneTwoThreeThreads) {
  if (const std::string why = test::use_test_environment(); !why.empty()) GTEST_SKIP() << why;
  constexpr int64_t n = 160;
  Rng rng(3);
  std::vector<double> m(n * n);
  for (double& v : m) v = rng.normal();
  std::vector<std::vector<double>> runs;
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    std::vector<double> values(2 * n);
    eigenvalues(values.data(), values.data() + n, m.data(), n);
    runs.push_back(values);
  }
  set_num_threads(1);
  for (size_t r = 1; r < runs.size(); ++r)
    EXPECT_EQ(0, std::memcmp(runs[r].data(), runs[0].data(), runs[0].size() * sizeof(double)))
        << "the eigenvalues differ between 1 and " << kThreadCounts[r] << " threads (" << test::test_environment()
        << ")";
}

INSTANTIATE_TEST_SUITE_P(Backends, ThreadBitsTest,
                         ::testing::Values(GemmBackend::onednn, GemmBackend::openblas),
                         [](const auto& info) { return std::string(backend_name(info.param)); });

}  // namespace
}  // namespace mg

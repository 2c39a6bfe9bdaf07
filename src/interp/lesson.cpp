// Lesson 12's examples on mini-gpt's ops (interp/lesson.h), section by section in the
// lesson's order; each section's numbers go into the list of checks beside the lesson's.
#include "interp/lesson.h"

#include <algorithm>
#include <cmath>

#include "autograd/ops.h"
#include "core/error.h"
#include "interp/torch_init.h"
#include "model_spec/parameter_shapes.h"
#include "nn/reference.h"

namespace mg {
namespace {

// 0, 1, 2, ... laid out as SHAPE: the lesson's labels, which show where each coordinate goes.
Tensor counting(const Shape& shape) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = static_cast<float>(i);
  return t;
}

// Element [0, h, t, :] of a [1,H,T,d] tensor.
std::vector<double> head_row(const Tensor& heads, int64_t h, int64_t t) {
  const int64_t T = heads.dim(2), d = heads.dim(3);
  const float* row = heads.data() + (h * T + t) * d;
  return {row, row + d};
}

LessonCheck exact(std::string what, std::vector<double> lesson, std::vector<double> ours) {
  return {std::move(what), std::move(lesson), std::move(ours), 0.0};
}

OneRowLimit one_row_limit() {
  OneRowLimit r;
  const double v00 = r.V[0], v11 = r.V[3];  // V = [[v00, 0], [0, v11]]
  // [a, 1-a] @ V = [a v00, (1-a) v11]: each coordinate alone fixes a.
  r.a_first = r.target[0] / v00;
  r.a_second = 1.0 - r.target[1] / v11;
  auto row_output = [&](double a) { return std::vector<double>{a * v00, (1.0 - a) * v11}; };
  r.with_a_first = row_output(r.a_first);
  r.with_a_second = row_output(r.a_second);
  // The nearest reachable point: minimise (a v00 - t0)^2 + ((1-a) v11 - t1)^2 over a, then clamp to [0,1].
  const double a = (v00 * r.target[0] + v11 * (v11 - r.target[1])) / (v00 * v00 + v11 * v11);
  r.nearest_a = std::clamp(a, 0.0, 1.0);
  r.nearest = row_output(r.nearest_a);
  r.nearest_distance = std::hypot(r.nearest[0] - r.target[0], r.nearest[1] - r.target[1]);

  // Two heads, each with its own row of ratios over its own coordinate of V.
  NoGradGuard no_grad;
  Var values(Tensor::from({1, 2, 2}, {1, 0, 0, 2}));  // [B,T,D]: the two value rows
  r.head_weights = Tensor::from({1, 2, 1, 2}, {0.8f, 0.2f, 0.2f, 0.8f});
  Var heads = matmul(Var(r.head_weights), split_heads(values, 2));  // [1,2,1,2] @ [1,2,2,1] -> [1,2,1,1]
  r.two_heads = merge_heads(heads).value().clone();                  // [1,1,2]
  return r;
}

SplitExample split_example() {
  SplitExample r;
  NoGradGuard no_grad;
  r.x = counting({1, 3, 4});
  Var heads = split_heads(Var(r.x), 2);
  r.heads = heads.value().clone();
  r.merged = merge_heads(heads).value().clone();
  r.round_trip = std::equal(r.x.span().begin(), r.x.span().end(), r.merged.span().begin());
  return r;
}

// Causal attention of one head in double: w[t][s] = softmax_{s<=t}(q_t . k_s / sqrt(d)).
std::vector<double> attention_weights_double(const std::vector<double>& q, const std::vector<double>& k, int64_t T,
                                             int64_t d) {
  std::vector<double> w(static_cast<size_t>(T * T), 0.0);
  for (int64_t t = 0; t < T; ++t) {
    std::vector<double> s(static_cast<size_t>(t + 1));
    for (int64_t j = 0; j <= t; ++j) {
      for (int64_t i = 0; i < d; ++i) s[j] += q[t * d + i] * k[j * d + i];
      s[j] /= std::sqrt(static_cast<double>(d));
    }
    softmax_in_place(s);
    std::copy(s.begin(), s.end(), w.begin() + t * T);
  }
  return w;
}

RandomProjections random_projections(const Tensor& x) {
  RandomProjections r;
  TorchCpuGenerator generator(r.seed);  // torch.manual_seed(42)
  r.bound = kaiming_uniform_bound(4, std::sqrt(5.0));
  r.q_proj = torch_linear_weight(generator, 4, 4);
  r.k_proj = torch_linear_weight(generator, 4, 4);
  r.v_proj = torch_linear_weight(generator, 4, 4);
  r.out_proj = torch_linear_weight(generator, 4, 4);

  NoGradGuard no_grad;
  const int64_t H = 2, T = 3, D = 4, d = D / H;
  Var input(x);
  Var q = split_heads(linear(input, Var(r.q_proj)), H);  // [1,2,3,2]
  Var k = split_heads(linear(input, Var(r.k_proj)), H);
  Var v = split_heads(linear(input, Var(r.v_proj)), H);
  r.q = q.value().clone();
  r.k = k.value().clone();
  r.v = v.value().clone();
  r.scale = 1.0f / std::sqrt(static_cast<float>(d));
  Var w = causal_attention_weights(q, k, r.scale);  // [1,2,3,3]
  r.weights = w.value().clone();
  Var context = matmul(w, v);  // [1,2,3,2]
  r.context = context.value().clone();
  r.output = linear(merge_heads(context), Var(r.out_proj)).value().clone();  // [1,3,4]

  // The lesson's reference path: one head at a time, [B,T,d] each, stacked back on the head axis.
  r.context_loop = Tensor::empty({1, H, T, d});
  for (int64_t h = 0; h < H; ++h) {
    auto one_head = [&](const Var& heads) { return Var(select(select(heads, 0), h).value().clone().reshape({1, T, d})); };
    Var qh = one_head(q), kh = one_head(k), vh = one_head(v);
    Tensor out = matmul(causal_attention_weights(qh, kh, r.scale), vh).value();  // [1,3,2]
    std::copy(out.data(), out.data() + T * d, r.context_loop.data() + h * T * d);
  }
  for (int64_t i = 0; i < r.context.numel(); ++i)
    r.loop_difference = std::max(r.loop_difference, std::fabs(static_cast<double>(r.context[i]) - r.context_loop[i]));

  // The same weights again in double, from the same float32 parameters: a second implementation.
  for (int64_t h = 0; h < H; ++h) {
    std::vector<double> qh(static_cast<size_t>(T * d), 0.0), kh(qh);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < d; ++j)
        for (int64_t i = 0; i < D; ++i) {
          qh[t * d + j] += static_cast<double>(r.q_proj[(h * d + j) * D + i]) * x[t * D + i];
          kh[t * d + j] += static_cast<double>(r.k_proj[(h * d + j) * D + i]) * x[t * D + i];
        }
    const std::vector<double> wh = attention_weights_double(qh, kh, T, d);
    r.weights_double.insert(r.weights_double.end(), wh.begin(), wh.end());
  }
  return r;
}

ParameterCounts parameter_counts() {
  ParameterCounts r;
  for (int64_t heads : {1, 2, 4}) {
    ModelConfig config;
    config.n_embd = r.D;
    config.n_head = heads;
    config.n_layer = 1;
    config.block_size = r.T;
    HeadCountCost cost{.heads = heads, .head_width = config.head_width()};
    const ModelParameterNames names = parameter_names(config);
    const BlockOf<std::string>& block = names.blocks[0];
    for (const NamedShape& shape : expected_parameter_shapes(config))
      for (const std::string* name : {&block.q_proj, &block.k_proj, &block.v_proj, &block.out_proj})
        if (shape.first == *name) cost.attention_parameters += shape_numel(shape.second);
    cost.score_entries = heads * r.T * r.T;
    r.counts.push_back(cost);
  }
  return r;
}

IndivisibleWidth indivisible_width() {
  IndivisibleWidth r;
  NoGradGuard no_grad;
  try {
    split_heads(Var(counting({1, 3, r.D})), r.heads);
  } catch (const ShapeError& e) {
    r.refused = true;
    r.message = e.what();
  }
  return r;
}

CheckQuestions check_questions(const ParameterCounts& counts) {
  CheckQuestions r;
  NoGradGuard no_grad;
  Var one = split_heads(Var(counting({1, 3, 4})), 1);
  r.one_head_shape = one.shape();
  r.one_head_position1 = head_row(one.value(), 0, 1);
  for (const HeadCountCost& c : counts.counts)
    if (c.heads == 2) {
      r.default_head_width = c.head_width;
      r.default_parameters = c.attention_parameters;
    }
  const Tensor short_x = counting({1, 2, 4});
  Var correct = split_heads(Var(short_x), 2);
  const Tensor wrong = short_x.reshape({1, 2, 2, 2});  // the reshape without transpose(1, 2)
  r.correct_shape = correct.shape();
  r.wrong_shape = wrong.shape();
  r.correct_position1 = head_row(correct.value(), 0, 1);
  r.wrong_position1 = head_row(wrong, 0, 1);
  return r;
}

std::vector<double> shape_numbers(const Shape& shape) { return {shape.begin(), shape.end()}; }

}  // namespace

bool LessonCheck::agrees() const {
  if (lesson.size() != ours.size()) return false;
  for (size_t i = 0; i < lesson.size(); ++i)
    if (!(std::fabs(lesson[i] - ours[i]) <= tolerance)) return false;
  return true;
}

bool Lesson12::all_agree() const {
  return std::all_of(checks.begin(), checks.end(), [](const auto& c) { return c.second.agrees(); });
}

Lesson12 run_lesson12() {
  Lesson12 r;
  auto add = [&](const char* section, LessonCheck check) { r.checks.emplace_back(section, std::move(check)); };

  r.one_row = one_row_limit();
  add("one_row", exact("a asked by the first coordinate (0.8 = a x 1)", {0.8}, {r.one_row.a_first}));
  add("one_row", exact("a asked by the second coordinate (1.6 = 2(1 - a))", {0.2}, {r.one_row.a_second}));
  r.checks.back().second.tolerance = 1e-15;  // 1 - 0.8 in double
  add("one_row", {"two heads [0.8,0.2] and [0.2,0.8], concatenated (float32)", {0.8, 1.6},
                  {r.one_row.two_heads[0], r.one_row.two_heads[1]}, 1e-7});

  r.split = split_example();
  add("split", exact("split_heads shape [B,H,T,d]", {1, 2, 3, 2}, shape_numbers(r.split.heads.shape())));
  add("split", exact("head 0, position 1", {4, 5}, head_row(r.split.heads, 0, 1)));
  add("split", exact("head 1, position 1", {6, 7}, head_row(r.split.heads, 1, 1)));
  add("split", exact("merge_heads(split_heads(x)) equals x", {1}, {r.split.round_trip ? 1.0 : 0.0}));

  r.random = random_projections(r.split.x);
  const RandomProjections& p = r.random;
  auto row_f32 = [&](int64_t h) {  // query position 1 of head h: [w10, w11, w12]
    const float* w = p.weights.data() + (h * 3 + 1) * 3;
    return std::vector<double>{w[0], w[1], w[2]};
  };
  auto row_f64 = [&](int64_t h) {
    const double* w = p.weights_double.data() + (h * 3 + 1) * 3;
    return std::vector<double>{w[0], w[1], w[2]};
  };
  // The lesson prints 6 decimals of PyTorch's result; the double recomputation rounds to them
  // (half a unit, 5e-7); float32's softmax may land a unit of 1e-6 away (PyTorch's own float32
  // prints 0.999997 for head 1), so mini-gpt's float32 ops are held to 1.5e-6.
  add("random", {"head 0 at position 1 (double)", {0.002978, 0.997022, 0}, row_f64(0), 5e-7});
  add("random", {"head 1 at position 1 (double)", {0.999998, 0.000002, 0}, row_f64(1), 5e-7});
  add("random", {"head 0 at position 1 (float32 ops)", {0.002978, 0.997022, 0}, row_f32(0), 1.5e-6});
  add("random", {"head 1 at position 1 (float32 ops)", {0.999998, 0.000002, 0}, row_f32(1), 1.5e-6});
  add("random", exact("batched context shape [B,H,T,d]", {1, 2, 3, 2}, shape_numbers(p.context.shape())));
  add("random", exact("batched equals the head-by-head loop (max |difference|)", {0}, {p.loop_difference}));
  add("random", exact("output shape after merge and Wo", {1, 3, 4}, shape_numbers(p.output.shape())));

  r.parameters = parameter_counts();
  for (const HeadCountCost& c : r.parameters.counts) {
    const std::string heads = std::to_string(c.heads) + (c.heads == 1 ? " head" : " heads");
    add("parameters", exact("4D^2 attention parameters at D 64, " + heads, {4.0 * 64 * 64},
                            {static_cast<double>(c.attention_parameters)}));
    add("parameters", exact("[T,T] score tables at T 64, " + heads + " (H x T x T)",
                            {static_cast<double>(c.heads * 64 * 64)}, {static_cast<double>(c.score_entries)}));
  }

  r.indivisible = indivisible_width();
  add("indivisible", exact("D = 5 into 2 heads is refused", {1}, {r.indivisible.refused ? 1.0 : 0.0}));

  r.questions = check_questions(r.parameters);
  const CheckQuestions& q = r.questions;
  add("questions", exact("1. one head: shape", {1, 1, 3, 4}, shape_numbers(q.one_head_shape)));
  add("questions", exact("1. one head: head 0, position 1", {4, 5, 6, 7}, q.one_head_position1));
  add("questions", exact("1. D 64, 2 heads: head width", {32}, {static_cast<double>(q.default_head_width)}));
  add("questions", exact("1. D 64, 2 heads: the four projections' parameters", {16384},
                         {static_cast<double>(q.default_parameters)}));
  add("questions", exact("2. both shapes [1,2,2,2]", {1, 2, 2, 2, 1, 2, 2, 2},
                         [&] {
                           std::vector<double> s = shape_numbers(q.correct_shape);
                           for (int64_t n : q.wrong_shape) s.push_back(static_cast<double>(n));
                           return s;
                         }()));
  add("questions", exact("2. right split: head 0, position 1", {4, 5}, q.correct_position1));
  add("questions", exact("2. reshape without transpose: head 0, position 1", {2, 3}, q.wrong_position1));
  return r;
}

}  // namespace mg

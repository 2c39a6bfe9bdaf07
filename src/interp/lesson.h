// `mini-gpt lesson 12`: lesson 12's examples (multi-head attention), rerun in the lesson's
// order with mini-gpt's own ops (autograd/ops.h: split_heads, merge_heads, linear,
// causal_attention_weights, matmul) and its own parameter list, each number the lesson
// prints kept beside the one mini-gpt computes. The toy is the lesson's: x = 0..11 as
// [B,T,D] = [1,3,4], torch.manual_seed(42) and four nn.Linear(4, 4, bias=False), made here
// without PyTorch (interp/torch_init.h). Nothing reads a checkpoint: these numbers are the
// toy's, not the default model's. The writers are report/lesson_format.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace mg {

// One number, or a short vector of them, that the lesson prints, with mini-gpt's beside it.
struct LessonCheck {
  std::string what;            // what it is, in the lesson's words ("head 0 at position 1")
  std::vector<double> lesson;  // as the lesson prints it
  std::vector<double> ours;    // as mini-gpt computes it
  double tolerance = 0.0;      // |ours - lesson| allowed per entry: 0 for exact, else half a unit
                               // of the lesson's last printed digit (plus float32's rounding, said in WHAT)
  bool agrees() const;
};

// "一套读取比例，会卡在哪里？": one row of ratios [a, 1-a] over V = [[1,0],[0,2]] gives
// [a, 2(1-a)]; the target [0.8, 1.6] asks a = 0.8 of the first coordinate and a = 0.2 of
// the second. Two heads, [0.8,0.2] on the first column and [0.2,0.8] on the second, reach it.
struct OneRowLimit {
  std::vector<double> V{1, 0, 0, 2};    // [2,2]: the two value rows
  std::vector<double> target{0.8, 1.6};  // [2]
  double a_first = 0.0, a_second = 0.0;  // the a each coordinate asks for
  std::vector<double> with_a_first, with_a_second;  // [2] the row's output at each
  double nearest_a = 0.0;                 // a in [0,1] whose output is nearest the target
  std::vector<double> nearest;            // [2] that output
  double nearest_distance = 0.0;          // its Euclidean distance to the target
  Tensor head_weights;                    // [1,2,1,2] [B,H,query,key]: head 0 [0.8,0.2], head 1 [0.2,0.8]
  Tensor two_heads;                       // [1,1,2] merge_heads(weights @ split_heads(V)): the concatenation
};

// "两套比例，数组该怎样摆？": split_heads of 0..11 and back.
struct SplitExample {
  Tensor x;        // [1,3,4] = 0..11
  Tensor heads;    // [1,2,3,2] split_heads(x, 2)
  Tensor merged;   // [1,3,4] merge_heads(heads)
  bool round_trip = false;  // merged equals x, element for element
};

// "两个头会读到哪里": the fixed random parameters and the attention they give.
struct RandomProjections {
  uint64_t seed = 42;
  double bound = 0.0;                    // kaiming_uniform_'s bound for fan_in 4 (0.5)
  Tensor q_proj, k_proj, v_proj, out_proj;  // [4,4] each, [out,in], in the order the lesson makes them
  Tensor q, k, v;                        // [1,2,3,2] split_heads(linear(x, W), 2)
  float scale = 0.0f;                    // 1 / sqrt(d), d = 2
  Tensor weights;                        // [1,2,3,3] causal_attention_weights(q, k, scale), float32
  std::vector<double> weights_double;    // [2,3,3] the same from the same float32 weights in plain double loops
  Tensor context;                        // [1,2,3,2] weights @ v, all heads at once
  Tensor context_loop;                   // [1,2,3,2] the same one head at a time ([1,3,2] each), stacked
  double loop_difference = 0.0;          // max |context - context_loop|
  Tensor output;                         // [1,3,4] linear(merge_heads(context), out_proj)
};

// "头越多，参数一定越多吗？": the attention's parameters at D = 64 from mini-gpt's own
// parameter list, and the [T,T] score tables the heads keep.
struct HeadCountCost {
  int64_t heads = 0, head_width = 0;
  int64_t attention_parameters = 0;  // q, k, v and out projections of one block
  int64_t score_entries = 0;         // heads * T * T: the projected_weights one block keeps for one text of T
};
struct ParameterCounts {
  int64_t D = 64, T = 64;            // the default model's width and block_size
  std::vector<HeadCountCost> counts;  // 1, 2 and 4 heads
};

// "总宽度也要能整除头数": D = 5 split into 2 heads.
struct IndivisibleWidth {
  int64_t D = 5, heads = 2;
  bool refused = false;
  std::string message;  // split_heads' ShapeError
};

// "两道检查题".
struct CheckQuestions {
  Shape one_head_shape;                   // split_heads(0..11 as [1,3,4], 1)
  std::vector<double> one_head_position1;  // head 0, position 1
  int64_t default_head_width = 0, default_parameters = 0;  // D 64, 2 heads
  Shape correct_shape, wrong_shape;       // 0..7 as [1,2,4]: split_heads(x, 2), x.reshape(1,2,2,2)
  std::vector<double> correct_position1, wrong_position1;  // head 0, position 1 of each
};

struct Lesson12 {
  OneRowLimit one_row;
  SplitExample split;
  RandomProjections random;
  ParameterCounts parameters;
  IndivisibleWidth indivisible;
  CheckQuestions questions;
  // Every number the lesson prints, in the lesson's order, with ours: what the printout marks
  // and what the test asserts. Section names: one_row, split, random, parameters, indivisible, questions.
  std::vector<std::pair<std::string, LessonCheck>> checks;
  bool all_agree() const;
};

// Runs every example. Pure computation on the current backend; throws nothing on valid
// builds (an InternalError if an op misbehaves).
Lesson12 run_lesson12();

}  // namespace mg

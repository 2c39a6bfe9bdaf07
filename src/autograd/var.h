// Reverse-mode autograd over tensors. A Var is a handle to a Node: its value, its
// gradient, the Vars it was computed from and the backward that sends its gradient
// to them. Ops are free functions (autograd/ops.h) that compute the forward with a
// kernel and record the backward right beside it.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "tensor/tensor.h"

namespace mg {

struct Node;

class Var {
 public:
  Var() = default;
  // A leaf: a parameter (requires_grad) or a constant input.
  explicit Var(Tensor value, bool requires_grad = false);

  bool defined() const { return node_ != nullptr; }
  const Tensor& value() const;
  Tensor& value();
  const Shape& shape() const { return value().shape(); }
  int64_t dim(int axis) const { return value().dim(axis); }
  bool requires_grad() const;

  // The gradient, allocated as zeros on first use; ops accumulate into it (+=).
  Tensor& grad();
  bool has_grad() const;
  // Keeps the buffer and marks it zero. The zeros are written lazily: by grad(), or not
  // at all when the first backward to reach it overwrites it (grad_sink).
  void zero_grad();

  // For a backward that writes its whole share in one pass (a GEMM, a row sum): the
  // gradient buffer, and in `accumulate` whether to add into it (true) or overwrite it
  // (false: it holds no gradient yet, so no zero fill was spent on it). An overwriting
  // caller must write every element.
  float* grad_sink(bool& accumulate);
  // grad += g. A Var with no gradient buffer yet takes g's storage as its gradient instead
  // of copying it, so g must be a tensor nobody writes again (an op's dout, whose node is
  // done with it once its backward returns).
  void accumulate_grad(const Tensor& g);

  Node* node() const { return node_.get(); }

 private:
  friend Var make_result(Tensor, std::vector<Var>, std::function<void(const Tensor&)>);
  std::shared_ptr<Node> node_;
};

// Called with the output's gradient; adds each input's share into input.grad().
using BackwardFn = std::function<void(const Tensor& dout)>;

struct Node {
  Tensor value;
  Tensor grad;
  bool grad_is_zero = false;  // grad's buffer is held but stands for zeros not yet written
  bool requires_grad = false;
  std::vector<Var> inputs;  // what the backward sends gradient to
  BackwardFn backward;
};

// Wraps an op's output. Records inputs and backward only when gradients are enabled
// and some input needs one; otherwise the result is a plain constant and the
// backward (with everything it captured) is dropped at once.
Var make_result(Tensor value, std::vector<Var> inputs, BackwardFn backward);

// Seeds d(root) = 1 (root must hold one element) and sweeps the graph in reverse
// topological order, freeing it on the way: once a node's backward has run, every
// consumer of it already has, so it drops its gradient, inputs and backward (and with
// them the activations it saved) at once, and the next backward reuses that memory.
void backward(const Var& root);

// While alive, ops record nothing and keep no activations (inference).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};
bool grad_enabled();

}  // namespace mg

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
  void zero_grad();  // keeps the buffer, fills it with zeros

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
  bool requires_grad = false;
  std::vector<Var> inputs;  // what the backward sends gradient to
  BackwardFn backward;
};

// Wraps an op's output. Records inputs and backward only when gradients are enabled
// and some input needs one; otherwise the result is a plain constant and the
// backward (with everything it captured) is dropped at once.
Var make_result(Tensor value, std::vector<Var> inputs, BackwardFn backward);

// Seeds d(root) = 1 (root must hold one element), sweeps the graph in reverse
// topological order, then frees it: interior nodes drop their inputs and backward.
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

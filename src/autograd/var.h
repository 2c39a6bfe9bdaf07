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

// Where a backward writes one input's gradient [the input's shape], and how: add into it
// (accumulate: an earlier backward already wrote some) or overwrite it (it holds no
// gradient yet, and no zero fill was spent on it). Kernels take the flag as it is.
struct GradOut {
  float* data;
  int64_t numel;
  bool accumulate;
  // For a backward that can only add (a scatter, a part of the buffer): data, zero-filled
  // first when it was to be overwritten.
  float* for_adding() const;
};

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

  // The gradient, to read (an optimizer, a test): zeros when no backward wrote one.
  Tensor& grad();
  bool has_grad() const;
  // Drops the gradient (its buffer back to the pool): the next backward to reach this Var
  // writes it fresh, and an optimizer skips a parameter no backward reached.
  void zero_grad();

  // How a backward writes this Var's gradient: the one rule, written out in ops.h.
  // Const, since a Var is a handle: a backward's plain [x] capture can write through it.
  GradOut grad_out() const;

  Node* node() const { return node_.get(); }

 private:
  friend Var make_result(Tensor, std::vector<Var>, std::function<void(const Tensor&)>);
  std::shared_ptr<Node> node_;
};

// Called with the output's gradient; writes each input's share through input.grad_out().
using BackwardFn = std::function<void(const Tensor& dout)>;

struct Node {
  Tensor value;
  Tensor grad;  // undefined until a backward writes it
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

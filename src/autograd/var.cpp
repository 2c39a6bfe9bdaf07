#include "autograd/var.h"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "core/error.h"

namespace mg {
namespace {
thread_local bool g_grad_enabled = true;
}

Var::Var(Tensor value, bool requires_grad) : node_(std::make_shared<Node>()) {
  node_->value = std::move(value);
  node_->requires_grad = requires_grad;
}

const Tensor& Var::value() const {
  MG_CHECK(node_, "value() of an undefined Var");
  return node_->value;
}
Tensor& Var::value() {
  MG_CHECK(node_, "value() of an undefined Var");
  return node_->value;
}
bool Var::requires_grad() const { return node_ && node_->requires_grad; }

Tensor& Var::grad() {
  MG_CHECK(node_, "grad() of an undefined Var");
  if (!node_->grad.defined()) node_->grad = Tensor::zeros(node_->value.shape());
  return node_->grad;
}
bool Var::has_grad() const { return node_ && node_->grad.defined(); }
void Var::zero_grad() {
  if (node_) node_->grad = Tensor();
}

GradOut Var::grad_out() const {
  MG_CHECK(node_, "grad_out() of an undefined Var");
  const bool accumulate = node_->grad.defined();
  if (!accumulate) node_->grad = Tensor::empty(node_->value.shape());
  return {node_->grad.data(), node_->grad.numel(), accumulate};
}

float* GradOut::for_adding() const {
  if (!accumulate) std::fill(data, data + numel, 0.0f);
  return data;
}

Var make_result(Tensor value, std::vector<Var> inputs, BackwardFn backward) {
  Var out;
  out.node_ = std::make_shared<Node>();
  out.node_->value = std::move(value);
  if (!g_grad_enabled) return out;
  bool any = false;
  for (const Var& in : inputs) any = any || in.requires_grad();
  if (!any) return out;
  out.node_->requires_grad = true;
  out.node_->inputs = std::move(inputs);
  out.node_->backward = std::move(backward);
  return out;
}

void backward(const Var& root) {
  MG_CHECK(root.defined() && root.value().numel() == 1, "backward() needs a one-element root");
  if (!root.requires_grad()) return;

  // Iterative depth-first post-order: every node comes after all of its inputs. The
  // order holds handles, so a node outlives its consumers' release until its own turn.
  std::vector<Var> order;
  std::unordered_set<Node*> seen;
  std::vector<std::pair<Var, size_t>> stack{{root, 0}};
  seen.insert(root.node());
  while (!stack.empty()) {
    auto& [var, next] = stack.back();
    Node* node = var.node();
    if (next < node->inputs.size()) {
      const Var& in = node->inputs[next++];
      if (in.requires_grad() && seen.insert(in.node()).second) stack.push_back({in, 0});
    } else {
      order.push_back(std::move(var));
      stack.pop_back();
    }
  }

  Var seed = root;
  seed.grad().fill(1.0f);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* node = it->node();
    if (!node->backward) continue;  // a leaf: its gradient is the result
    if (node->grad.defined()) node->backward(node->grad);
    // Every consumer has run: free this interior node's share of the graph now.
    node->backward = nullptr;
    node->inputs.clear();
    node->grad = Tensor();
    *it = Var();
  }
}

NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }
bool grad_enabled() { return g_grad_enabled; }

}  // namespace mg

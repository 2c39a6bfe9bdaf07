// The ops that touch token ids: embedding (ids -> rows of a table) and cross_entropy
// (logits and target ids -> the mean loss). Ids come from user text, so an id outside
// the table is an InputError naming the id and where it sits.
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "kernels/cross_entropy.h"
#include "kernels/embedding.h"
#include "core/error.h"

namespace mg {
namespace {

// Throws unless every id is in [0, bound).
void check_ids(const char* op, std::span<const int32_t> ids, int64_t bound) {
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= bound)
      throw InputError(std::string(op) + ": id " + std::to_string(ids[i]) + " at index " + std::to_string(i) +
                       " is outside [0," + std::to_string(bound) + ")");
}

}  // namespace

Var embedding(const Var& table, std::span<const int32_t> ids, const Shape& ids_shape) {
  const Shape& st = table.shape();
  if (st.size() != 2) throw ShapeError("embedding: expected table [V,D], found " + shape_str(st));
  if (static_cast<int64_t>(ids.size()) != shape_numel(ids_shape))
    throw ShapeError("embedding: " + std::to_string(ids.size()) + " ids do not fill ids shape " + shape_str(ids_shape));
  check_ids("embedding", ids, st[0]);
  const int64_t n = static_cast<int64_t>(ids.size()), D = st[1];

  Shape out_shape = ids_shape;  // [...ids_shape, D]
  out_shape.push_back(D);
  Tensor out = Tensor::empty(out_shape);
  embedding_forward(out.data(), table.value().data(), ids.data(), n, D);

  if (!grad_enabled() || !table.requires_grad()) return make_result(out, {table}, nullptr);
  // The backward's own copy of the ids: the caller's span may be gone by then.
  return make_result(out, {table}, [table, saved_ids = IdBuffer(ids), n, D](const Tensor& dout) {
    // Each output row is a copy of table row ids[i], so its gradient adds back into that row.
    embedding_backward(table.grad_out().for_adding(), dout.data(), saved_ids.data(), n, D);
  });
}

Var cross_entropy(const Var& logits, std::span<const int32_t> targets) {
  const Shape& s = logits.shape();
  if (s.empty()) throw ShapeError("cross_entropy: expected logits [...,V], found " + shape_str(s));
  const int64_t V = s.back();
  const int64_t rows = V == 0 ? 0 : logits.value().numel() / V;
  if (static_cast<int64_t>(targets.size()) != rows)
    throw ShapeError("cross_entropy: logits " + shape_str(s) + " hold " + std::to_string(rows) + " rows but " +
                     std::to_string(targets.size()) + " targets were given");
  check_ids("cross_entropy", targets, V);

  Tensor probs = Tensor::empty(s);  // softmax(logits) [rows,V], kept for the backward
  const double loss = cross_entropy_forward(probs.data(), logits.value().data(), targets.data(), rows, V);
  Tensor out = Tensor::from({1}, {static_cast<float>(loss)});

  return make_result(out, {logits},
                     [logits, probs, saved_targets = IdBuffer(targets), rows, V](const Tensor& dout) {
                       cross_entropy_backward(logits.grad_out().for_adding(), probs.data(), saved_targets.data(), rows,
                                              V, dout[0]);
                     });
}

}  // namespace mg

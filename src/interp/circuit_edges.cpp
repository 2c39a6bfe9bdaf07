// Edge-level circuits by patching, their proof and EAP (interp/circuit_edges.h). The
// forward here is the model's, assembled per receiver: each reader's input is the sum of
// its senders' outputs, clean or corrupt edge by edge, so it cannot be Gpt::forward (one
// shared ln1 per block). It is built from the autograd ops, so that the same code runs the
// patched forwards (no tape) and EAP's one backward; the tests hold it to Gpt::forward.
#include "interp/circuit_edges.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <unordered_map>

#include "autograd/ops.h"
#include "core/error.h"
#include "core/random.h"
#include "interp/logit_choice.h"
#include "kernels/rope.h"

namespace mg {

const char* edge_input_name(EdgeInput input) {
  switch (input) {
    case EdgeInput::q: return "q";
    case EdgeInput::k: return "k";
    case EdgeInput::v: return "v";
    case EdgeInput::mlp: return "mlp";
    case EdgeInput::logits: return "logits";
  }
  return "?";
}

EdgeGraph edge_graph(const ModelConfig& c) {
  const int64_t L = c.n_layer, H = c.n_head;
  EdgeGraph g;
  g.senders.push_back({"embed", -1, -1});
  for (int64_t l = 0; l < L; ++l) {
    const std::string layer = "L" + std::to_string(l);
    for (int64_t h = 0; h < H; ++h) g.senders.push_back({layer + ".H" + std::to_string(h), l, h});
    g.senders.push_back({layer + ".mlp", l, -1});
  }
  // The senders a receiver reads: those written before it in the forward.
  auto add_receiver = [&](EdgeGraph::Receiver r, int64_t senders_before) {
    const int64_t index = static_cast<int64_t>(g.receivers.size());
    g.receivers.push_back(std::move(r));
    for (int64_t s = 0; s < senders_before; ++s) g.edges.push_back({s, index});
  };
  for (int64_t l = 0; l < L; ++l) {
    const int64_t first_of_layer = 1 + l * (H + 1);
    for (int64_t h = 0; h < H; ++h)
      for (EdgeInput input : {EdgeInput::q, EdgeInput::k, EdgeInput::v})
        add_receiver({g.senders[first_of_layer + h].name + "." + edge_input_name(input), l, h, input}, first_of_layer);
    add_receiver({"L" + std::to_string(l) + ".mlp", l, -1, EdgeInput::mlp}, first_of_layer + H);
  }
  add_receiver({"logits", -1, -1, EdgeInput::logits}, static_cast<int64_t>(g.senders.size()));
  return g;
}

namespace {

// ---- Two ops of this forward's own, on the tape like ops.h's ----------------------------

// x [B,T,D] -> [B,D]: row last[b] of each item. The backward adds each row back.
Var rows_at(const Var& x, const std::vector<int64_t>& last) {
  const int64_t B = x.dim(0), T = x.dim(1), D = x.dim(2);
  Tensor out = Tensor::empty({B, D});
  for (int64_t b = 0; b < B; ++b) std::memcpy(out.data() + b * D, x.value().data() + (b * T + last[b]) * D, sizeof(float) * D);
  return make_result(out, {x}, [x, last, B, T, D](const Tensor& dout) {
    float* dx = x.grad_out().for_adding();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < D; ++j) dx[(b * T + last[b]) * D + j] += dout.data()[b * D + j];
  });
}

// logits [B,V] -> [1]: the sum over items of logit(answer) - logit(against), M's sum.
Var difference_sum(const Var& logits, const std::vector<int32_t>& answer, const std::vector<int32_t>& against) {
  const int64_t B = logits.dim(0), V = logits.dim(1);
  double sum = 0.0;
  for (int64_t b = 0; b < B; ++b)
    sum += static_cast<double>(logits.value().data()[b * V + answer[b]]) - logits.value().data()[b * V + against[b]];
  return make_result(Tensor::full({1}, static_cast<float>(sum)), {logits}, [logits, answer, against, B, V](const Tensor& dout) {
    float* dx = logits.grad_out().for_adding();
    for (int64_t b = 0; b < B; ++b) {
      dx[b * V + answer[b]] += dout.data()[0];
      dx[b * V + against[b]] -= dout.data()[0];
    }
  });
}

// ---- The model's weights, cut per head, as constants (no gradient reaches the model) ------

struct HeadWeights {
  Var q, k, v;  // [d,D]: rows h*d .. h*d+d-1 of Wq, Wk, Wv
  Var o;        // [D,d]: columns h*d .. h*d+d-1 of Wo
};
struct LayerWeights {
  Var ln1_w, ln1_b, ln2_w, ln2_b, fc_w, fc_b, proj_w, proj_b;
  std::vector<HeadWeights> heads;
};

Var constant(const Var& parameter) { return Var(parameter.value(), false); }

Var rows_of(const Tensor& w, int64_t first, int64_t count) {  // w [R,C] -> rows first.. [count,C]
  const int64_t C = w.dim(1);
  Tensor out = Tensor::empty({count, C});
  std::memcpy(out.data(), w.data() + first * C, sizeof(float) * count * C);
  return Var(out, false);
}

Var columns_of(const Tensor& w, int64_t first, int64_t count) {  // w [R,C] -> columns first.. [R,count]
  const int64_t R = w.dim(0), C = w.dim(1);
  Tensor out = Tensor::empty({R, count});
  for (int64_t i = 0; i < R; ++i) std::memcpy(out.data() + i * count, w.data() + i * C + first, sizeof(float) * count);
  return Var(out, false);
}

// One kind's pairs as a batch, padded on the right with each item's last symbol.
struct Batch {
  int64_t B = 0, T = 0;
  std::vector<int32_t> clean, corrupt;  // [B*T]
  std::vector<int64_t> last;            // [B]
  std::vector<int32_t> answer, against;
};

Batch make_batch(const std::vector<CircuitPair>& pairs, int64_t block_size, int64_t V) {
  if (pairs.empty()) throw InputError("a circuit needs at least one clean and corrupt pair");
  Batch b;
  b.B = static_cast<int64_t>(pairs.size());
  for (const CircuitPair& p : pairs) {
    if (p.clean.empty() || p.clean.size() != p.corrupt.size())
      throw InputError("a circuit pair's clean and corrupt prompts must be non-empty and of equal length");
    if (static_cast<int64_t>(p.clean.size()) > block_size)
      throw InputError("a circuit pair has " + std::to_string(p.clean.size()) + " symbols, past block_size " +
                       std::to_string(block_size));
    if (p.answer == p.against) throw InputError("a circuit pair's answer is its competitor: give another symbol");
    for (int32_t s : {p.answer, p.against})
      if (s < 0 || s >= V) throw InputError("a circuit pair's symbol id " + std::to_string(s) + " is outside the vocabulary");
    b.T = std::max<int64_t>(b.T, static_cast<int64_t>(p.clean.size()));
  }
  for (const CircuitPair& p : pairs) {
    const int64_t n = static_cast<int64_t>(p.clean.size());
    for (const auto* ids : {&p.clean, &p.corrupt}) {
      std::vector<int32_t>& to = ids == &p.clean ? b.clean : b.corrupt;
      to.insert(to.end(), ids->begin(), ids->end());
      to.insert(to.end(), static_cast<size_t>(b.T - n), ids->back());
    }
    b.last.push_back(n - 1);
    b.answer.push_back(p.answer);
    b.against.push_back(p.against);
  }
  return b;
}

// What one run of the assembled forward holds: every sender's output [B,T,D], every head
// receiver's projection [B,1,T,d] (q and k rotated), and M per item.
struct RunState {
  std::vector<Tensor> out;        // [senders]
  std::vector<Tensor> projection; // [receivers], heads' inputs only
  std::vector<double> metric;     // [B]
};

class EdgeForward {
 public:
  EdgeForward(const Gpt& model, const EdgeGraph& graph, const Batch& batch) : model_(model), graph_(graph), batch_(batch) {
    const ModelConfig& c = model.config();
    H_ = c.n_head;
    d_ = c.head_width();
    last_layer_ = c.n_layer - 1;
    eps_ = static_cast<float>(c.norm_eps);
    if (c.position == PositionType::rope) rope_ = make_rope_table(c.block_size, d_, c.rope_base);
    const ModelWeights& w = model.weights();
    for (const BlockWeights& b : w.blocks) {
      LayerWeights lw{constant(b.ln1_weight), constant(b.ln1_bias), constant(b.ln2_weight), constant(b.ln2_bias),
                      constant(b.fc_weight),  constant(b.fc_bias),  constant(b.proj_weight), constant(b.proj_bias), {}};
      for (int64_t h = 0; h < H_; ++h)
        lw.heads.push_back({rows_of(b.q_proj.value(), h * d_, d_), rows_of(b.k_proj.value(), h * d_, d_),
                            rows_of(b.v_proj.value(), h * d_, d_), columns_of(b.out_proj.value(), h * d_, d_)});
      layers_.push_back(std::move(lw));
    }
    ln_f_w_ = constant(w.ln_f_weight);
    ln_f_b_ = constant(w.ln_f_bias);
    head_ = constant(w.head);
    into_.resize(graph.receivers.size());
    for (size_t e = 0; e < graph.edges.size(); ++e) into_[graph.edges[e].receiver].push_back(static_cast<int64_t>(e));
  }

  const std::vector<std::vector<int64_t>>& into() const { return into_; }

  // The sender "embed" on IDS: tok_emb (+ pos_emb) [B,T,D].
  Var embed(const std::vector<int32_t>& ids) const {
    const int64_t B = batch_.B, T = batch_.T;
    Var x = embedding(constant(model_.weights().tok_emb), ids, {B, T});
    if (model_.config().position == PositionType::learned) {
      std::vector<int32_t> positions(static_cast<size_t>(T));
      std::iota(positions.begin(), positions.end(), 0);
      x = add(x, embedding(constant(model_.weights().pos_emb), positions, {T}));
    }
    return x;
  }

  // A head receiver's projection of its input [B,T,D] -> [B,1,T,d].
  Var projection(const EdgeGraph::Receiver& r, const Var& input) const {
    const LayerWeights& lw = layers_[static_cast<size_t>(r.layer)];
    const HeadWeights& hw = lw.heads[static_cast<size_t>(r.head)];
    const Var& w = r.input == EdgeInput::q ? hw.q : r.input == EdgeInput::k ? hw.k : hw.v;
    Var p = split_heads(linear(layer_norm(input, lw.ln1_w, lw.ln1_b, eps_), w), 1);
    if (r.input != EdgeInput::v && rope_.positions > 0) p = rope(p, rope_);
    return p;
  }

  // A head's output from its three projections: causal softmax(q k^T / sqrt d) v, through Wo's columns.
  Var head_output(int64_t layer, int64_t head, const Var& q, const Var& k, const Var& v) const {
    const float scale = 1.0f / std::sqrt(static_cast<float>(d_));
    Var z = matmul(causal_attention_weights(q, k, scale), v);  // [B,1,T,d]
    return linear(merge_heads(z), layers_[static_cast<size_t>(layer)].heads[static_cast<size_t>(head)].o);
  }

  Var mlp_output(int64_t layer, const Var& input) const {
    const LayerWeights& lw = layers_[static_cast<size_t>(layer)];
    Var hidden = gelu(linear(layer_norm(input, lw.ln2_w, lw.ln2_b, eps_), lw.fc_w, lw.fc_b));
    return linear(hidden, lw.proj_w, lw.proj_b);
  }

  // The last layer's MLP is read by the logits alone, at each item's last position: its
  // output there, zeros elsewhere ([B,T,D]), for a 1/T of the work. No tape.
  Tensor last_rows_mlp(int64_t layer, const Var& input) const {
    const Tensor rows = mlp_output(layer, rows_at(input, batch_.last)).value();  // [B,D]
    const int64_t T = batch_.T, D = rows.dim(1);
    Tensor out = Tensor::zeros({batch_.B, T, D});
    for (int64_t b = 0; b < batch_.B; ++b)
      std::memcpy(out.data() + (b * T + batch_.last[b]) * D, rows.data() + b * D, sizeof(float) * D);
    return out;
  }

  // The logits' input [B,T,D] -> per item M, and their sum on the tape.
  Var metric(const Var& input, std::vector<double>& per_item) const {
    Var logits = linear(layer_norm(rows_at(input, batch_.last), ln_f_w_, ln_f_b_, eps_), head_);  // [B,V]
    const int64_t V = logits.dim(1);
    per_item.resize(static_cast<size_t>(batch_.B));
    for (int64_t b = 0; b < batch_.B; ++b) {
      const float* row = logits.value().data() + b * V;
      per_item[b] = static_cast<double>(row[batch_.answer[b]]) - row[batch_.against[b]];
      require_finite(per_item[b], "the logit difference of a circuit");
    }
    return difference_sum(logits, batch_.answer, batch_.against);
  }

  // Receiver R's input: each edge's sender output from STATE when PRESENT, else from CORRUPT.
  Tensor input(int64_t r, const RunState& state, const RunState& corrupt, const std::vector<char>& present) const {
    Tensor sum;
    for (int64_t e : into_[r]) {
      const int64_t s = graph_.edges[e].sender;
      const Tensor& from = present[e] ? state.out[s] : corrupt.out[s];
      if (!sum.numel()) {
        sum = from.clone();
        continue;
      }
      float* to = sum.data();
      const float* add_from = from.data();
      for (int64_t i = 0, n = sum.numel(); i < n; ++i) to[i] += add_from[i];
    }
    return sum;
  }

  // BASE with receivers from FIRST on recomputed where an input changed (FIRST itself always;
  // every one with ALL), under PRESENT; senders before FIRST's are BASE's. No tape.
  RunState run(const RunState& base, const RunState& corrupt, const std::vector<char>& present, int64_t first,
               bool all = false) const {
    RunState s = base;
    std::vector<char> dirty(graph_.senders.size(), 0);
    bool head_changed = false;
    for (int64_t r = first; r < static_cast<int64_t>(graph_.receivers.size()); ++r) {
      const EdgeGraph::Receiver& rec = graph_.receivers[r];
      bool needed = all || r == first;
      for (int64_t e : into_[r]) needed = needed || (present[e] && dirty[graph_.edges[e].sender]);
      if (needed) {
        const Var in(input(r, s, corrupt, present), false);
        if (rec.input == EdgeInput::mlp) {
          const int64_t sender = sender_of_mlp(rec.layer);
          s.out[sender] = rec.layer == last_layer_ ? last_rows_mlp(rec.layer, in) : mlp_output(rec.layer, in).value();
          dirty[sender] = 1;
        } else if (rec.input == EdgeInput::logits) {
          metric(in, s.metric);
        } else {
          s.projection[r] = projection(rec, in).value();
          head_changed = true;
        }
      }
      if (rec.input == EdgeInput::v && head_changed) {  // a head's last receiver: its output anew
        const int64_t sender = sender_of_head(rec.layer, rec.head);
        s.out[sender] = head_output(rec.layer, rec.head, Var(s.projection[r - 2]), Var(s.projection[r - 1]),
                                    Var(s.projection[r])).value();
        dirty[sender] = 1;
        head_changed = false;
      }
    }
    return s;
  }

  // A whole run on IDS under PRESENT (the corrupt outputs where an edge is absent).
  RunState full(const std::vector<int32_t>& ids, const RunState* corrupt, const std::vector<char>& present) const {
    RunState s;
    s.out.resize(graph_.senders.size());
    s.projection.resize(graph_.receivers.size());
    s.out[0] = embed(ids).value();
    return run(s, corrupt ? *corrupt : s, present, 0, true);
  }

  // EAP's gradients: dM/d(input_r) [B,T,D] for every receiver, on the clean run (every edge
  // present), from one forward and one backward.
  std::vector<Tensor> input_gradients(const std::vector<int32_t>& ids) const {
    std::vector<Var> out(graph_.senders.size());
    std::vector<Var> projections(graph_.receivers.size()), probes(graph_.receivers.size());
    out[0] = embed(ids);
    Var total;
    std::vector<double> per_item;
    for (int64_t r = 0; r < static_cast<int64_t>(graph_.receivers.size()); ++r) {
      const EdgeGraph::Receiver& rec = graph_.receivers[r];
      Var in;
      for (int64_t e : into_[r]) {
        const Var& from = out[graph_.edges[e].sender];
        in = in.defined() ? add(in, from) : from;
      }
      // A zero leaf added to the input: its gradient is dM/d(input_r), through everything downstream.
      probes[r] = Var(Tensor::zeros(in.shape()), true);
      in = add(in, probes[r]);
      if (rec.input == EdgeInput::mlp) out[sender_of_mlp(rec.layer)] = mlp_output(rec.layer, in);
      else if (rec.input == EdgeInput::logits) total = metric(in, per_item);
      else projections[r] = projection(rec, in);
      if (rec.input == EdgeInput::v)
        out[sender_of_head(rec.layer, rec.head)] =
            head_output(rec.layer, rec.head, projections[r - 2], projections[r - 1], projections[r]);
    }
    backward(total);
    std::vector<Tensor> grads;
    for (Var& p : probes) grads.push_back(p.has_grad() ? p.grad() : Tensor::zeros(p.shape()));
    return grads;
  }

  int64_t sender_of_head(int64_t layer, int64_t head) const { return 1 + layer * (H_ + 1) + head; }
  int64_t sender_of_mlp(int64_t layer) const { return 1 + layer * (H_ + 1) + H_; }

 private:
  const Gpt& model_;
  const EdgeGraph& graph_;
  const Batch& batch_;
  int64_t H_ = 1, d_ = 1, last_layer_ = 0;
  float eps_ = 1e-5f;
  RopeTable rope_;
  std::vector<LayerWeights> layers_;
  Var ln_f_w_, ln_f_b_, head_;
  std::vector<std::vector<int64_t>> into_;  // [receivers] the edges into each
};

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

// Average ranks (ties share their mean rank), 1-based.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[order[k]] = (static_cast<double>(i + j) / 2.0) + 1.0;
    i = j + 1;
  }
  return r;
}

// The search's state for one kind: the batch, its clean and corrupt runs, F of any mask.
class KindSearch {
 public:
  KindSearch(const Gpt& model, const EdgeGraph& graph, const Batch& batch)
      : graph_(graph), batch_(batch), forward_(model, graph, batch), all_(graph.edges.size(), 1) {
    corrupt_ = forward_.full(batch.corrupt, nullptr, all_);
    clean_ = forward_.full(batch.clean, &corrupt_, all_);
    gap_ = sum(clean_.metric) - sum(corrupt_.metric);
    if (gap_ == 0.0) throw InputError("the clean and corrupt prompts give the same summed logit difference: no gap to explain");
  }

  double faithfulness(const RunState& s) const { return (sum(s.metric) - sum(corrupt_.metric)) / gap_; }
  // Receiver of edge E: the first receiver whose input a change of E reaches.
  int64_t receiver(int64_t e) const { return graph_.edges[e].receiver; }

  // F with PRESENT, recomputed from FIRST on BASE.
  RunState run(const RunState& base, const std::vector<char>& present, int64_t first) {
    ++forwards;
    return forward_.run(base, corrupt_, present, first);
  }
  RunState from_scratch(const std::vector<char>& present) {
    ++forwards;
    return forward_.full(batch_.clean, &corrupt_, present);
  }

  const RunState& clean() const { return clean_; }
  const RunState& corrupt() const { return corrupt_; }
  const std::vector<char>& all() const { return all_; }
  double gap() const { return gap_; }
  const EdgeForward& forward() const { return forward_; }
  int64_t forwards = 0;

 private:
  const EdgeGraph& graph_;
  const Batch& batch_;
  EdgeForward forward_;
  std::vector<char> all_;
  RunState clean_, corrupt_;
  double gap_ = 0.0;
};

// The senders that still write into some present edge.
std::vector<char> feeding(const EdgeGraph& g, const std::vector<char>& present) {
  std::vector<char> f(g.senders.size(), 0);
  for (size_t e = 0; e < g.edges.size(); ++e)
    if (present[e]) f[g.edges[e].sender] = 1;
  return f;
}

// The receivers' sender: a receiver of a head or MLP belongs to that node.
int64_t node_of_receiver(const EdgeGraph& g, const EdgeGraph::Receiver& r) {
  for (size_t s = 0; s < g.senders.size(); ++s)
    if (g.senders[s].layer == r.layer && g.senders[s].head == r.head && r.input != EdgeInput::logits) return static_cast<int64_t>(s);
  return -1;
}

}  // namespace

double spearman_rho(const std::vector<double>& a, const std::vector<double>& b) {
  MG_CHECK(a.size() == b.size(), "spearman_rho: lists of unequal length");
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size()), mean = (n + 1.0) / 2.0;
  double cov = 0.0, va = 0.0, vb = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  return va == 0.0 || vb == 0.0 ? 0.0 : cov / std::sqrt(va * vb);
}

double kendall_tau_b(const std::vector<double>& a, const std::vector<double>& b) {
  MG_CHECK(a.size() == b.size(), "kendall_tau_b: lists of unequal length");
  double concordant = 0.0, discordant = 0.0, ties_a = 0.0, ties_b = 0.0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = i + 1; j < a.size(); ++j) {
      const double da = a[i] - a[j], db = b[i] - b[j];
      if (da == 0.0 && db == 0.0) continue;
      if (da == 0.0) ++ties_a;
      else if (db == 0.0) ++ties_b;
      else if ((da > 0) == (db > 0)) ++concordant;
      else ++discordant;
    }
  const double n0 = concordant + discordant;
  const double denominator = std::sqrt((n0 + ties_a) * (n0 + ties_b));
  return denominator == 0.0 ? 0.0 : (concordant - discordant) / denominator;
}

KindCircuit find_circuit(const Gpt& model, const std::vector<CircuitPair>& pairs, const CircuitOptions& options) {
  if (!(options.threshold >= 0.0) || !std::isfinite(options.threshold))
    throw InputError("the circuit's threshold must be a finite number >= 0");
  const ModelConfig& c = model.config();
  const EdgeGraph graph = edge_graph(c);
  const Batch batch = make_batch(pairs, c.block_size, c.vocab_size);
  // The patched forwards record no tape; EAP's one pass below does.
  MG_CHECK(grad_enabled(), "find_circuit: EAP needs the tape (called under a NoGradGuard)");
  std::optional<NoGradGuard> no_grad;
  no_grad.emplace();
  KindSearch search(model, graph, batch);
  const int64_t E = static_cast<int64_t>(graph.edges.size()), B = batch.B;

  KindCircuit out;
  out.items = B;
  out.clean = sum(search.clean().metric) / static_cast<double>(B);
  out.corrupt = sum(search.corrupt().metric) / static_cast<double>(B);
  out.edges.resize(static_cast<size_t>(E));
  for (int64_t e = 0; e < E; ++e) out.edges[e].edge = e;

  // The exact effect of each edge alone, from the clean run.
  const double full = search.faithfulness(search.clean());
  for (int64_t e = 0; e < E; ++e) {
    std::vector<char> present = search.all();
    present[e] = 0;
    out.edges[e].exact = full - search.faithfulness(search.run(search.clean(), present, search.receiver(e)));
  }

  // ACDC: receivers from the logits back, each one's senders latest first.
  std::vector<char> present = search.all();
  RunState current = search.clean();
  double f_current = full;
  const std::vector<std::vector<int64_t>>& into = search.forward().into();
  for (int64_t r = static_cast<int64_t>(graph.receivers.size()) - 1; r >= 0; --r) {
    const int64_t node = node_of_receiver(graph, graph.receivers[r]);
    const bool unused = node >= 0 && !feeding(graph, present)[node];
    for (auto it = into[r].rbegin(); it != into[r].rend(); ++it) {
      const int64_t e = *it;
      if (unused) {  // the node feeds nothing left: its inputs change nothing
        present[e] = 0;
        out.edges[e].acdc = 0.0;
        continue;
      }
      present[e] = 0;
      RunState trial = search.run(current, present, r);
      const double f_trial = search.faithfulness(trial);
      out.edges[e].acdc = f_current - f_trial;
      if (std::abs(f_current - f_trial) < options.threshold) {
        current = std::move(trial);
        f_current = f_trial;
      } else {
        present[e] = 1;
      }
    }
  }
  // The circuit's own run from scratch: its F, not the search's running one.
  const RunState circuit = search.from_scratch(present);
  out.faithfulness = search.faithfulness(circuit);
  for (int64_t e = 0; e < E; ++e) out.edges[e].kept = present[e] != 0;
  out.kept = std::count(present.begin(), present.end(), 1);

  // Minimality: each kept edge's own effect.
  out.smallest_own = 0.0;
  bool first_own = true;
  for (int64_t e = 0; e < E; ++e) {
    if (!present[e]) continue;
    std::vector<char> without = present;
    without[e] = 0;
    const double own = out.faithfulness - search.faithfulness(search.run(circuit, without, search.receiver(e)));
    out.edges[e].own = own;
    out.smallest_own = first_own ? own : std::min(out.smallest_own, own);
    first_own = false;
  }

  // Completeness: subsets of the circuit's nodes (each alone, then seeded random halves),
  // removed from the circuit and from the model.
  const std::vector<char> in_circuit = feeding(graph, present);
  std::vector<int64_t> nodes;
  for (size_t s = 1; s < graph.senders.size(); ++s)
    if (in_circuit[s]) nodes.push_back(static_cast<int64_t>(s));
  std::vector<std::vector<int64_t>> subsets;
  for (int64_t n : nodes) subsets.push_back({n});
  Rng rng(options.seed);
  for (int64_t i = 0; i < options.random_subsets && nodes.size() > 2; ++i) {
    std::vector<int64_t> half;
    for (int64_t n : nodes)
      if (rng.uniform() < 0.5) half.push_back(n);
    if (half.size() > 1 && half.size() < nodes.size()) subsets.push_back(half);
  }
  for (const std::vector<int64_t>& subset : subsets) {
    std::vector<char> circuit_less = present, model_less = search.all();
    CompletenessSubset k;
    for (int64_t n : subset) k.nodes.push_back(graph.senders[n].name);
    for (int64_t e = 0; e < E; ++e)
      if (std::find(subset.begin(), subset.end(), graph.edges[e].sender) != subset.end()) circuit_less[e] = model_less[e] = 0;
    k.circuit = search.faithfulness(search.from_scratch(circuit_less));
    k.model = search.faithfulness(search.from_scratch(model_less));
    out.incompleteness = std::max(out.incompleteness, std::abs(k.circuit - k.model));
    out.completeness.push_back(std::move(k));
  }

  // EAP: one forward and one backward on the clean batch.
  no_grad.reset();
  {
    const std::vector<Tensor> grads = search.forward().input_gradients(batch.clean);
    for (int64_t e = 0; e < E; ++e) {
      const EdgeGraph::Edge& edge = graph.edges[e];
      const Tensor& g = grads[edge.receiver];
      const float* clean_out = search.clean().out[edge.sender].data();
      const float* corrupt_out = search.corrupt().out[edge.sender].data();
      double dot = 0.0;
      for (int64_t i = 0, n = g.numel(); i < n; ++i)
        dot += (static_cast<double>(clean_out[i]) - corrupt_out[i]) * g.data()[i];
      out.edges[e].eap = dot / search.gap();
    }
  }
  std::vector<double> exact, eap;
  for (const CircuitEdgeResult& r : out.edges) {
    exact.push_back(std::abs(r.exact));
    eap.push_back(std::abs(r.eap));
  }
  out.spearman = spearman_rho(exact, eap);
  out.kendall = kendall_tau_b(exact, eap);
  out.forwards = search.forwards;
  return out;
}

double chain_faithfulness(const Gpt& model, const std::vector<CircuitPair>& pairs,
                          const std::vector<std::pair<int64_t, int64_t>>& heads) {
  const ModelConfig& c = model.config();
  const EdgeGraph graph = edge_graph(c);
  const Batch batch = make_batch(pairs, c.block_size, c.vocab_size);
  NoGradGuard no_grad;
  KindSearch search(model, graph, batch);
  auto in_chain = [&](int64_t layer, int64_t head) {
    return head < 0 || std::find(heads.begin(), heads.end(), std::pair{layer, head}) != heads.end();
  };
  std::vector<char> present(graph.edges.size(), 0);
  for (size_t e = 0; e < graph.edges.size(); ++e) {
    const EdgeGraph::Sender& s = graph.senders[graph.edges[e].sender];
    const EdgeGraph::Receiver& r = graph.receivers[graph.edges[e].receiver];
    present[e] = in_chain(s.layer, s.head) && (r.input == EdgeInput::logits || in_chain(r.layer, r.head));
  }
  return search.faithfulness(search.from_scratch(present));
}

std::vector<std::pair<std::string, std::vector<CircuitPair>>> probe_circuit_pairs(const Gpt& model, const Vocab& vocab,
                                                                                   const std::vector<ProbeItem>& probes,
                                                                                   Swap swap, int64_t& skipped) {
  const ModelConfig& c = model.config();
  const int64_t V = c.vocab_size;
  NoGradGuard no_grad;
  const CorruptionCandidates candidates(probes, swap);
  std::vector<std::pair<std::string, std::vector<CircuitPair>>> kinds;
  std::unordered_map<std::string, size_t> index;
  skipped = 0;
  for (const ProbeItem& item : probes) {
    const std::optional<CorruptPrompt> prompt = candidates.corrupt(item, vocab, c.block_size);
    const std::optional<std::vector<int32_t>> clean = prompt ? vocab.find_all(prompt->clean) : std::nullopt;
    const std::optional<int32_t> answer = vocab.find(item.answer);
    if (!prompt || !clean || !answer) {
      ++skipped;
      continue;
    }
    CircuitPair pair{*clean, *vocab.find_all(prompt->corrupt), *answer, 0};
    const int64_t T = static_cast<int64_t>(clean->size());
    const Tensor clean_logits = model.forward(pair.clean, 1, T).value();
    const Tensor corrupt_logits = model.forward(pair.corrupt, 1, T).value();
    const float* clean_row = clean_logits.data() + (T - 1) * V;
    const float* corrupt_row = corrupt_logits.data() + (T - 1) * V;
    // The competitor as --patch --probe picks it: the swapped value, or the corrupt run's choice.
    if (swap == Swap::value) pair.against = *vocab.find(prompt->replacements[0]);
    else {
      pair.against = best_symbol(corrupt_row, V);
      if (pair.against == pair.answer) pair.against = best_symbol(clean_row, V, pair.answer);
    }
    const double clean_d = static_cast<double>(clean_row[pair.answer]) - clean_row[pair.against];
    const double corrupt_d = static_cast<double>(corrupt_row[pair.answer]) - corrupt_row[pair.against];
    if (clean_d == corrupt_d) {
      ++skipped;
      continue;
    }
    const auto [it, fresh] = index.try_emplace(item.kind, kinds.size());
    if (fresh) kinds.push_back({item.kind, {}});
    kinds[it->second].second.push_back(std::move(pair));
  }
  return kinds;
}

EdgeCircuits find_probe_circuits(const Gpt& model, const Vocab& vocab, const std::vector<ProbeItem>& probes,
                                 const CircuitOptions& options, Swap swap) {
  EdgeCircuits out;
  out.graph = edge_graph(model.config());
  out.threshold = options.threshold;
  out.swap = swap;
  for (auto& [kind, pairs] : probe_circuit_pairs(model, vocab, probes, swap, out.skipped)) {
    KindCircuit k = find_circuit(model, pairs, options);
    k.kind = kind;
    out.kinds.push_back(std::move(k));
  }
  return out;
}

}  // namespace mg

// A head's QK and OV circuits in the symbol basis (see interp/qk_ov.h for what is exact
// and what approximated) and the OV copy score from its eigenvalues.
#include "interp/qk_ov.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "kernels/eigenvalues.h"
#include "nn/reference.h"

namespace mg {

double eigenvalue_sign_share(const std::vector<double>& m, int64_t n) {
  MG_CHECK(static_cast<int64_t>(m.size()) == n * n && n >= 1, "eigenvalue_sign_share: not n x n");
  std::vector<double> wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n));
  eigenvalues(wr.data(), wi.data(), m.data(), n);  // kernels/eigenvalues.h: LAPACK dgeev
  double real = 0.0, modulus = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    real += wr[i];
    modulus += std::hypot(wr[i], wi[i]);
  }
  return modulus > 0.0 ? real / modulus : 0.0;
}

HeadCircuits head_circuits(const Gpt& model, const Vocab& vocab, int64_t layer, int64_t head) {
  const ModelConfig& c = model.config();
  MG_CHECK(layer >= 0 && layer < c.n_layer && head >= 0 && head < c.n_head, "head_circuits: out of range");
  const int64_t V = c.vocab_size, D = c.n_embd, d = c.head_width();
  const ModelWeights& weights = model.weights();
  const BlockWeights& b = weights.blocks[static_cast<size_t>(layer)];
  const Tensor &E = weights.tok_emb.value(), &g = b.ln1_weight.value(), &beta = b.ln1_bias.value();
  const Tensor &Wq = b.q_proj.value(), &Wk = b.k_proj.value();
  const Tensor &Wv = b.v_proj.value(), &Wo = b.out_proj.value();
  const Tensor &gamma = weights.ln_f_weight.value(), &U = weights.head.value();

  HeadCircuits r;
  r.layer = layer;
  r.head = head;
  r.V = V;
  r.symbols = vocab.symbols();
  // q, k, v of every symbol's normalised embedding: [V,d] each.
  std::vector<double> q(V * d, 0.0), k(V * d, 0.0), v(V * d, 0.0), x(static_cast<size_t>(D));
  for (int64_t a = 0; a < V; ++a) {
    x = layer_norm_row(E.data() + a * D, D, g.data(), beta.data(), c.norm_eps);
    for (int64_t j = 0; j < d; ++j)
      for (int64_t i = 0; i < D; ++i) {
        const int64_t w = (head * d + j) * D + i;
        q[a * d + j] += Wq[w] * x[i];
        k[a * d + j] += Wk[w] * x[i];
        v[a * d + j] += Wv[w] * x[i];
      }
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  r.qk.assign(static_cast<size_t>(V * V), 0.0);
  for (int64_t a = 0; a < V; ++a)
    for (int64_t bb = 0; bb < V; ++bb)
      for (int64_t j = 0; j < d; ++j) r.qk[a * V + bb] += q[a * d + j] * k[bb * d + j] * scale;
  // B [d,V]: head output coordinate j -> logit of c, through Wo's columns, a centring
  // over D and ln_f.weight.
  std::vector<double> B(static_cast<size_t>(d * V), 0.0), col(static_cast<size_t>(D));
  for (int64_t j = 0; j < d; ++j) {
    double mean = 0.0;
    for (int64_t i = 0; i < D; ++i) mean += (col[i] = Wo[i * D + head * d + j]);
    mean /= static_cast<double>(D);
    for (int64_t i = 0; i < D; ++i) col[i] = (col[i] - mean) * gamma[i];
    for (int64_t cc = 0; cc < V; ++cc)
      for (int64_t i = 0; i < D; ++i) B[j * V + cc] += U[cc * D + i] * col[i];
  }
  r.ov.assign(static_cast<size_t>(V * V), 0.0);
  for (int64_t a = 0; a < V; ++a)
    for (int64_t j = 0; j < d; ++j)
      for (int64_t cc = 0; cc < V; ++cc) r.ov[a * V + cc] += v[a * d + j] * B[j * V + cc];
  std::vector<double> BA(static_cast<size_t>(d * d), 0.0);  // [d,d] = B [d,V] . A [V,d], A = v
  for (int64_t i = 0; i < d; ++i)
    for (int64_t a = 0; a < V; ++a)
      for (int64_t j = 0; j < d; ++j) BA[i * d + j] += B[i * V + a] * v[a * d + j];
  r.copy_score = eigenvalue_sign_share(BA, d);
  int64_t diagonal = 0;
  for (int64_t a = 0; a < V; ++a) {
    const double* row = r.ov.data() + a * V;
    if (std::max_element(row, row + V) - row == a) ++diagonal;
  }
  r.diagonal_top1 = static_cast<double>(diagonal) / static_cast<double>(V);
  return r;
}

std::vector<SymbolPair> top_pairs(const std::vector<double>& table, int64_t V, int64_t n) {
  std::vector<int64_t> order(static_cast<size_t>(V * V));
  std::iota(order.begin(), order.end(), 0);
  const int64_t count = std::min(n, V * V);
  std::partial_sort(order.begin(), order.begin() + count, order.end(),
                    [&](int64_t a, int64_t z) { return table[a] > table[z] || (table[a] == table[z] && a < z); });
  std::vector<SymbolPair> out;
  for (int64_t i = 0; i < count; ++i)
    out.push_back({static_cast<int32_t>(order[i] / V), static_cast<int32_t>(order[i] % V), table[order[i]]});
  return out;
}

}  // namespace mg

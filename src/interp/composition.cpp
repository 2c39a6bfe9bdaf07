// Q-, K- and V-composition scores from the weights alone (interp/composition.h). The
// [D,D] products go through kernels/ (matmul_2d); norms are summed in double.
#include "interp/composition.h"

#include <cmath>

#include "core/error.h"
#include "core/random.h"
#include "kernels/gemm.h"

namespace mg {
namespace {

// Row-major [rows, cols] float matrix.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> values;
  Matrix(int64_t r, int64_t c) : rows(r), cols(c), values(static_cast<size_t>(r * c), 0.0f) {}
  float& at(int64_t i, int64_t j) { return values[static_cast<size_t>(i * cols + j)]; }
};

Matrix product(const Matrix& a, const Matrix& b, bool transpose_b = false) {
  Matrix c(a.rows, transpose_b ? b.rows : b.cols);
  matmul_2d(a.values.data(), b.values.data(), c.values.data(), a.rows, c.cols, a.cols, {.trans_b = transpose_b});
  return c;
}

double norm(const Matrix& m) {
  double sum = 0.0;
  for (float v : m.values) sum += static_cast<double>(v) * v;
  return std::sqrt(sum);
}

// A reading weight [D,d] centred over D (OVER_ROWS: each column's mean removed), or a
// writing weight [d,D] centred over D (each row's mean removed).
void centre(Matrix& m, bool over_rows) {
  const int64_t lines = over_rows ? m.cols : m.rows, length = over_rows ? m.rows : m.cols;
  auto at = [&](int64_t line, int64_t i) -> float& { return over_rows ? m.at(i, line) : m.at(line, i); };
  for (int64_t line = 0; line < lines; ++line) {
    double mean = 0.0;
    for (int64_t i = 0; i < length; ++i) mean += at(line, i);
    mean /= static_cast<double>(length);
    for (int64_t i = 0; i < length; ++i) at(line, i) -= static_cast<float>(mean);
  }
}

// Head h's reading weight in TransformerLens's orientation, x [D] @ W [D,d]: rows h*d ..
// h*d+d-1 of the stored [D,D] (out, in) transposed, row i scaled by ln1's gamma_i, centred.
Matrix reading(const Tensor& w, const Tensor& gamma, int64_t h, int64_t d) {
  const int64_t D = w.dim(1);
  Matrix m(D, d);
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < d; ++j) m.at(i, j) = w[(h * d + j) * D + i] * gamma[i];
  centre(m, true);
  return m;
}

// Head h's writing weight, z [d] @ W_O [d,D]: columns h*d .. h*d+d-1 of Wo, transposed, centred.
Matrix writing(const Tensor& wo, int64_t h, int64_t d) {
  const int64_t D = wo.dim(0);
  Matrix m(d, D);
  for (int64_t j = 0; j < d; ++j)
    for (int64_t i = 0; i < D; ++i) m.at(j, i) = wo[i * D + h * d + j];
  centre(m, false);
  return m;
}

struct HeadMatrices {
  Matrix qk, ov;  // [D,D] each
  double qk_norm, ov_norm;
};

HeadMatrices head_matrices(const Matrix& wq, const Matrix& wk, const Matrix& wv, const Matrix& wo) {
  Matrix qk = product(wq, wk, true), ov = product(wv, wo);
  const double qn = norm(qk), on = norm(ov);
  return {std::move(qk), std::move(ov), qn, on};
}

// NUMERATOR / (A B), a score: 0 when a head's OV or QK is zero (a W_O of zeros writes
// nothing, so nothing composes with it; 0/0 would print -nan); Error when the weights
// overflow float32 in the products.
double composition_ratio(double numerator, double a, double b) {
  const double score = a == 0.0 || b == 0.0 ? 0.0 : numerator / (a * b);
  require_finite(score, "a composition score");
  return score;
}

// The three scores of OV(h1) against h2.
void score(const HeadMatrices& h1, const HeadMatrices& h2, double& q, double& k, double& v) {
  q = composition_ratio(norm(product(h1.ov, h2.qk)), h1.ov_norm, h2.qk_norm);
  k = composition_ratio(norm(product(h1.ov, h2.qk, true)), h1.ov_norm, h2.qk_norm);
  v = composition_ratio(norm(product(h1.ov, h2.ov)), h1.ov_norm, h2.ov_norm);
}

Matrix random_matrix(int64_t rows, int64_t cols, Rng& rng) {
  Matrix m(rows, cols);
  for (float& x : m.values) x = static_cast<float>(rng.normal());
  return m;
}

// A head of random weights of the model's shapes, centred as the real ones are (no gamma: a
// random scale per row changes nothing the centring and the normalised score care about).
HeadMatrices random_head(int64_t D, int64_t d, Rng& rng) {
  Matrix wq = random_matrix(D, d, rng), wk = random_matrix(D, d, rng), wv = random_matrix(D, d, rng),
         wo = random_matrix(d, D, rng);
  for (Matrix* reader : {&wq, &wk, &wv}) centre(*reader, true);
  centre(wo, false);
  return head_matrices(wq, wk, wv, wo);
}

}  // namespace

CompositionScores composition_scores(const Gpt& model, int64_t samples, uint64_t seed) {
  MG_CHECK(samples >= 1, "composition_scores: at least one random sample");
  const ModelConfig& c = model.config();
  const int64_t L = c.n_layer, H = c.n_head, D = c.n_embd, d = c.head_width();
  std::vector<HeadMatrices> heads;  // [L*H]
  for (int64_t l = 0; l < L; ++l) {
    const BlockWeights& b = model.weights().blocks[static_cast<size_t>(l)];
    const Tensor& gamma = b.ln1_weight.value();
    for (int64_t h = 0; h < H; ++h)
      heads.push_back(head_matrices(reading(b.q_proj.value(), gamma, h, d), reading(b.k_proj.value(), gamma, h, d),
                                    reading(b.v_proj.value(), gamma, h, d), writing(b.out_proj.value(), h, d)));
  }
  CompositionScores r;
  for (int64_t l1 = 0; l1 < L; ++l1)
    for (int64_t h1 = 0; h1 < H; ++h1)
      for (int64_t l2 = l1 + 1; l2 < L; ++l2)
        for (int64_t h2 = 0; h2 < H; ++h2) {
          CompositionPair p{l1, h1, l2, h2};
          score(heads[l1 * H + h1], heads[l2 * H + h2], p.q, p.k, p.v);
          r.pairs.push_back(p);
        }
  Rng rng(seed);
  for (int64_t s = 0; s < samples; ++s) {
    const HeadMatrices h1 = random_head(D, d, rng), h2 = random_head(D, d, rng);
    double q, k, v;
    score(h1, h2, q, k, v);
    r.baseline_q += q / static_cast<double>(samples);
    r.baseline_k += k / static_cast<double>(samples);
    r.baseline_v += v / static_cast<double>(samples);
  }
  r.samples = samples;
  r.seed = seed;
  return r;
}

}  // namespace mg

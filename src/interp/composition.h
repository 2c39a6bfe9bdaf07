// Composition scores (inspect-heads --composition; Elhage et al., "A Mathematical
// Framework for Transformer Circuits", 2021): how much a later head h2 reads, through its
// query, key or value, the subspace an earlier head h1 writes. With TransformerLens's
// row-vector matrices of a head, QK = W_Q W_K^T and OV = W_V W_O (each [D,D], rank d),
//   Q-composition(h1 -> h2) = ||OV(h1) QK(h2)||_F   / (||OV(h1)||_F ||QK(h2)||_F)
//   K-composition(h1 -> h2) = ||OV(h1) QK(h2)^T||_F / (||OV(h1)||_F ||QK(h2)||_F)
//   V-composition(h1 -> h2) = ||OV(h1) OV(h2)||_F   / (||OV(h1)||_F ||OV(h2)||_F)
// for every h1 in a layer before h2's. The weights are prepared as TransformerLens's
// from_pretrained prepares them (fold_ln, center_writing_weights): each block's ln1.weight
// is folded into the W_Q, W_K, W_V that read it (row i scaled by gamma_i), those reading
// weights are centred over D (LayerNorm removes the mean of whatever it reads), and W_O is
// centred over D (what a head writes has its mean removed by every later LayerNorm). ln1's
// bias only adds a constant to q, k and v (a bias, not part of QK or OV): not in the scores.
// A score alone says little: even unrelated rank-d subspaces overlap by chance. So each
// mode has a baseline, the mean score of random matrices of the same shapes (normal
// factors, centred alike), seeded; pairs far above it are the composition worth reading.
// A head whose OV or QK is zero (a W_O of zeros) composes with nothing: its scores are 0.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/gpt.h"

namespace mg {

struct CompositionPair {
  int64_t layer1 = 0, head1 = 0;  // the earlier head, the writer
  int64_t layer2 = 0, head2 = 0;  // the later head, the reader
  double q = 0.0, k = 0.0, v = 0.0;
};

struct CompositionScores {
  std::vector<CompositionPair> pairs;  // by layer1, head1, layer2, head2
  double baseline_q = 0.0, baseline_k = 0.0, baseline_v = 0.0;  // mean over `samples` random draws
  int64_t samples = 0;
  uint64_t seed = 0;
};

CompositionScores composition_scores(const Gpt& model, int64_t samples = 200, uint64_t seed = 1);

}  // namespace mg

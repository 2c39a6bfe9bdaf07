// inspect-heads --circuits: a head's two circuits in the symbol basis, V x V tables one
// can read because the vocabulary is small (79 symbols for the shipped corpus).
//
//   QK[a][b] = (x_a Wq_h^T) . (x_b Wk_h^T) / sqrt(d): how much a query holding symbol a
//              prefers a key holding symbol b (before the softmax);
//   OV[a][c] = head[c] . (ln_f.weight * centre(Wo_h (Wv_h x_a))): how much attending to a
//              key holding symbol a raises the logit of output symbol c;
//
// with x_a = LayerNorm(tok_emb[a]; blocks.L.ln1), the "direct path". What is exact and
// what approximated: for layer 0 with RoPE, x_a is exactly the row the head sees (the
// stream is just the embedding), and QK is exact for a key at the query's own position
// (RoPE rotates q and k by their positions, so at other distances the table changes;
// offset 0 is shown). With learned positions, pos_emb is left out before the LayerNorm.
// In later layers the earlier blocks' additions to the stream are left out. OV goes
// through ln_f as if it were linear: centred and scaled by ln_f.weight, not divided by
// the final stream's sigma (a positive factor per position, so the ranking of outputs
// in a row is unchanged); later blocks are left out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/vocab.h"
#include "nn/gpt.h"

namespace mg {

struct SymbolPair {
  int32_t row = 0, column = 0;  // QK: query, key symbol; OV: attended, output symbol
  double value = 0.0;
};

struct HeadCircuits {
  int64_t layer = 0, head = 0, V = 0;
  std::vector<std::string> symbols;  // [V] UTF-8
  std::vector<double> qk, ov;        // [V,V] row-major
  // Copy score of OV (Elhage et al. 2021, "A Mathematical Framework for Transformer
  // Circuits"): sum_i lambda_i / sum_i |lambda_i| over OV's eigenvalues, in [-1, 1]; 1
  // when every eigenvalue is positive (attending to a symbol raises that same symbol:
  // copying), about 0 for no relation. OV = A B with A [V,d], B [d,V] has the nonzero
  // eigenvalues of B A [d,d], which is what is decomposed.
  double copy_score = 0.0;
  // Share of symbols a whose own logit OV[a][a] is the largest in row a (a bright diagonal).
  double diagonal_top1 = 0.0;
};

HeadCircuits head_circuits(const Gpt& model, const Vocab& vocab, int64_t layer, int64_t head);

// The N largest entries of a [V,V] table (largest first; ties by row, then column).
std::vector<SymbolPair> top_pairs(const std::vector<double>& table, int64_t V, int64_t n);

// Sum of the real parts over the sum of the moduli of the eigenvalues of the n x n
// row-major matrix M (LAPACK dgeev); 0 for a zero matrix.
double eigenvalue_sign_share(const std::vector<double>& m, int64_t n);

}  // namespace mg

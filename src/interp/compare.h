// inspect-heads --compare A B: do two models (two seeds, two runs) grow the same heads?
// Every head of A is matched to one head of B by how alike their attention patterns are on
// the same texts: the cost of a pair is the Jensen-Shannon divergence of their rows
// (natural log, so in [0, ln 2]), averaged over every query row of every text, and the
// matching is the assignment of least total cost (the Hungarian method). A pair's
// similarity is 1 - JSD / ln 2: 1 for identical patterns, 0 for rows with disjoint support.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/gpt.h"

namespace mg {

// Mean over rows t of JSD(p_t, q_t) of two [T,T] causal patterns.
double pattern_divergence(const std::vector<float>& p, const std::vector<float>& q, int64_t T);

// The assignment of least total cost of an n x n row-major cost matrix: result[i] is the
// column given to row i.
std::vector<int64_t> min_cost_assignment(const std::vector<double>& cost, int64_t n);

struct HeadMatch {
  int64_t layer_a = 0, head_a = 0, layer_b = 0, head_b = 0;
  double divergence = 0.0, similarity = 0.0;
};

// A head the matching left without a partner (the model with more heads has some), and the
// head of the other model its patterns are nearest to (that head has a partner of its own).
struct UnmatchedHead {
  char model = 'a';  // 'a' or 'b': whose head it is
  int64_t layer = 0, head = 0, nearest_layer = 0, nearest_head = 0;
  double divergence = 0.0, similarity = 0.0;
};

struct HeadComparison {
  int64_t texts = 0;
  int64_t layers_a = 0, heads_a = 0, layers_b = 0, heads_b = 0;  // each model's n_layer and n_head
  std::vector<HeadMatch> matches;  // min(heads in A, heads in B) pairs, by A's layer then head
  std::vector<UnmatchedHead> unmatched;  // the other model's heads beyond them, by layer then head
  std::vector<double> divergence;  // [all heads of A * all heads of B] every pair's mean JSD
};

// TEXTS_A and TEXTS_B are the same texts encoded in each model's vocabulary (each text at
// most both block sizes). The models may have different head counts (one head against two,
// 4 layers against 2): the matching pairs min(n_a, n_b) heads at least total divergence
// (the square Hungarian on the matrix padded with zero-cost dummy heads), and lists the
// larger model's other heads as unmatched, each with its nearest head in the smaller.
HeadComparison compare_heads(const Gpt& a, const Gpt& b, const std::vector<std::vector<int32_t>>& texts_a,
                             const std::vector<std::vector<int32_t>>& texts_b);

}  // namespace mg

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

struct HeadComparison {
  int64_t texts = 0;
  std::vector<HeadMatch> matches;  // one per head of A, by layer then head
  std::vector<double> divergence;  // [heads_a * heads_b] every pair's mean JSD
};

// TEXTS_A and TEXTS_B are the same texts encoded in each model's vocabulary (each text at
// most both block sizes). Both models must have the same number of heads in all
// (n_layer * n_head): MG_CHECK, the caller validates.
HeadComparison compare_heads(const Gpt& a, const Gpt& b, const std::vector<std::vector<int32_t>>& texts_a,
                             const std::vector<std::vector<int32_t>>& texts_b);

}  // namespace mg

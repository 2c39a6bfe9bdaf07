// Matching two models' heads: pattern divergences over shared texts, then the Hungarian
// method (the potentials form, O(n^3)) for the assignment of least total divergence.
#include "interp/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "interp/patterns.h"

namespace mg {

double pattern_divergence(const std::vector<float>& p, const std::vector<float>& q, int64_t T) {
  MG_CHECK(static_cast<int64_t>(p.size()) == T * T && p.size() == q.size(), "pattern_divergence: not two [T,T]");
  double total = 0.0;
  for (int64_t t = 0; t < T; ++t) {
    double js = 0.0;
    for (int64_t s = 0; s <= t; ++s) {
      const double a = p[t * T + s], b = q[t * T + s], m = 0.5 * (a + b);
      if (a > 0) js += 0.5 * a * std::log(a / m);
      if (b > 0) js += 0.5 * b * std::log(b / m);
    }
    total += std::max(0.0, js);
  }
  return total / static_cast<double>(T);
}

std::vector<int64_t> min_cost_assignment(const std::vector<double>& cost, int64_t n) {
  MG_CHECK(static_cast<int64_t>(cost.size()) == n * n, "min_cost_assignment: not n x n");
  const double inf = std::numeric_limits<double>::infinity();
  // 1-based potentials u (rows), v (columns); match[j] = the row holding column j.
  std::vector<double> u(n + 1, 0.0), v(n + 1, 0.0);
  std::vector<int64_t> match(n + 1, 0), way(n + 1, 0);
  for (int64_t i = 1; i <= n; ++i) {
    match[0] = i;
    int64_t j0 = 0;
    std::vector<double> min_to(n + 1, inf);
    std::vector<bool> used(n + 1, false);
    do {
      used[j0] = true;
      const int64_t i0 = match[j0];
      double delta = inf;
      int64_t j1 = 0;
      for (int64_t j = 1; j <= n; ++j) {
        if (used[j]) continue;
        const double reduced = cost[(i0 - 1) * n + (j - 1)] - u[i0] - v[j];
        if (reduced < min_to[j]) {
          min_to[j] = reduced;
          way[j] = j0;
        }
        if (min_to[j] < delta) {
          delta = min_to[j];
          j1 = j;
        }
      }
      for (int64_t j = 0; j <= n; ++j) {
        if (used[j]) {
          u[match[j]] += delta;
          v[j] -= delta;
        } else {
          min_to[j] -= delta;
        }
      }
      j0 = j1;
    } while (match[j0] != 0);
    do {  // flip the augmenting path
      const int64_t j1 = way[j0];
      match[j0] = match[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  std::vector<int64_t> result(static_cast<size_t>(n), 0);
  for (int64_t j = 1; j <= n; ++j) result[match[j] - 1] = j - 1;
  return result;
}

HeadComparison compare_heads(const Gpt& a, const Gpt& b, const std::vector<std::vector<int32_t>>& texts_a,
                             const std::vector<std::vector<int32_t>>& texts_b) {
  const int64_t Ha = a.config().n_head, Hb = b.config().n_head;
  const int64_t na = a.config().n_layer * Ha, nb = b.config().n_layer * Hb;
  MG_CHECK(texts_a.size() == texts_b.size(), "compare_heads: texts differ");
  HeadComparison r;
  r.layers_a = a.config().n_layer;
  r.heads_a = Ha;
  r.layers_b = b.config().n_layer;
  r.heads_b = Hb;
  r.divergence.assign(static_cast<size_t>(na * nb), 0.0);
  for (size_t i = 0; i < texts_a.size(); ++i) {
    MG_CHECK(texts_a[i].size() == texts_b[i].size() && !texts_a[i].empty(), "compare_heads: texts differ");
    const int64_t T = static_cast<int64_t>(texts_a[i].size());
    const auto pa = head_patterns(a, texts_a[i]), pb = head_patterns(b, texts_b[i]);
    for (int64_t x = 0; x < na; ++x)
      for (int64_t y = 0; y < nb; ++y) r.divergence[x * nb + y] += pattern_divergence(pa[x], pb[y], T);
    ++r.texts;
  }
  for (double& d : r.divergence) d /= static_cast<double>(std::max<int64_t>(r.texts, 1));
  // Square the matrix with dummy heads of cost 0: a real head given a dummy is left unmatched.
  const int64_t n = std::max(na, nb);
  std::vector<double> square(static_cast<size_t>(n * n), 0.0);
  for (int64_t x = 0; x < na; ++x)
    for (int64_t y = 0; y < nb; ++y) square[x * n + y] = r.divergence[x * nb + y];
  const std::vector<int64_t> assignment = min_cost_assignment(square, n);
  auto similarity = [](double divergence) { return 1.0 - divergence / std::log(2.0); };
  std::vector<bool> b_matched(static_cast<size_t>(nb), false);
  for (int64_t x = 0; x < na; ++x) {
    const int64_t y = assignment[x];
    if (y < nb) {
      b_matched[y] = true;
      const double d = r.divergence[x * nb + y];
      r.matches.push_back({x / Ha, x % Ha, y / Hb, y % Hb, d, similarity(d)});
    }
  }
  auto nearest = [&](char model, int64_t index) {
    const bool of_a = model == 'a';
    const int64_t others = of_a ? nb : na;
    int64_t best = 0;
    auto cost = [&](int64_t other) { return of_a ? r.divergence[index * nb + other] : r.divergence[other * nb + index]; };
    for (int64_t o = 1; o < others; ++o)
      if (cost(o) < cost(best)) best = o;
    const int64_t H = of_a ? Ha : Hb, H_other = of_a ? Hb : Ha;
    r.unmatched.push_back({model, index / H, index % H, best / H_other, best % H_other, cost(best), similarity(cost(best))});
  };
  for (int64_t x = 0; x < na; ++x)
    if (assignment[x] >= nb) nearest('a', x);
  for (int64_t y = 0; y < nb; ++y)
    if (!b_matched[y]) nearest('b', y);
  return r;
}

}  // namespace mg

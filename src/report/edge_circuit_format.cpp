// inspect-heads --circuit's and --score-split's writers (report/edge_circuit_format.h).
#include "report/edge_circuit_format.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "report/text.h"

namespace mg {

using json = nlohmann::ordered_json;

std::string edge_name(const EdgeGraph& graph, int64_t edge) {
  const EdgeGraph::Edge& e = graph.edges[static_cast<size_t>(edge)];
  return graph.senders[e.sender].name + " -> " + graph.receivers[e.receiver].name;
}

std::string format_edge_circuits(const EdgeCircuits& c, int64_t top) {
  const int64_t E = static_cast<int64_t>(c.graph.edges.size());
  std::string out =
      "the circuit of each question kind, as edges found by path patching (ACDC, Conmy et al. 2023):\n"
      "  pairs: each probe item against its partner with the answer's " +
      std::string(c.swap == Swap::key ? "key" : "fact") + " swapped (--patch --probe --swap " + swap_name(c.swap) +
      ")\n"
      "  graph: " + std::to_string(E) +
      " edges, from the embeddings, each head's output and each MLP to each later head's q, k and v inputs, each\n"
      "         later MLP and the logits\n"
      "  ablation: resample; an edge outside the circuit carries its sender's output on the corrupt prompt\n"
      "  F: the share of the clean - corrupt logit difference a circuit keeps, summed over the kind's items\n" +
      format("  threshold: tau = %.4f; an edge goes when removing it moves F by less than tau\n", c.threshold) +
      "  proof: faithfulness F(circuit); incompleteness: the largest |F(circuit - K) - F(model - K)| over the\n"
      "         subsets K below; own: each kept edge's F(circuit) - F(circuit without it); EAP: gradient\n"
      "         estimates of each edge's exact effect F(model) - F(model without it), their rank agreement on |effect|\n\n";
  int width = 6;
  for (const KindCircuit& k : c.kinds) width = std::max(width, static_cast<int>(k.kind.size()));
  out += format("  %-*s items     clean   corrupt     edges  faithfulness  incompleteness  min own  EAP rho  EAP tau\n",
                width, "kind");
  for (const KindCircuit& k : c.kinds)
    out += format("  %-*s %5lld  %+8.3f  %+8.3f  %4lld/%-4lld  %12.3f  %14.3f  %+7.3f  %7.3f  %7.3f\n", width,
                  k.kind.c_str(), static_cast<long long>(k.items), k.clean, k.corrupt, static_cast<long long>(k.kept),
                  static_cast<long long>(E), k.faithfulness, k.incompleteness, k.smallest_own, k.spearman, k.kendall);
  if (c.skipped > 0) out += format("  (%lld probe items had no corrupt partner and were skipped)\n", static_cast<long long>(c.skipped));
  for (const KindCircuit& k : c.kinds) {
    out += format("\n%s: %lld of %lld edges, faithfulness %.3f\n", k.kind.c_str(), static_cast<long long>(k.kept),
                  static_cast<long long>(E), k.faithfulness);
    // F is a ratio over the gap: a swap the model hardly notices leaves nothing to explain
    // (the gap --patch warns under, interp/patching.h).
    if (std::abs(k.clean - k.corrupt) < kMinPatchingGap)
      out += format("  the swap moves the logit difference by %+.3f on average (clean %+.3f, corrupt %+.3f): the model hardly\n"
                    "  uses what was swapped, so this circuit explains next to nothing; its F is a ratio over that gap\n",
                    k.clean - k.corrupt, k.clean, k.corrupt);
    std::vector<const CircuitEdgeResult*> kept;
    for (const CircuitEdgeResult& r : k.edges)
      if (r.kept) kept.push_back(&r);
    std::stable_sort(kept.begin(), kept.end(), [](const auto* a, const auto* b) { return std::abs(*a->own) > std::abs(*b->own); });
    out += "  edge                           own   exact     EAP\n";
    for (size_t i = 0; i < kept.size() && static_cast<int64_t>(i) < top; ++i)
      out += format("  %-26s %+7.3f %+7.3f %+7.3f\n", edge_name(c.graph, kept[i]->edge).c_str(), *kept[i]->own,
                    kept[i]->exact, kept[i]->eap);
    if (static_cast<int64_t>(kept.size()) > top)
      out += format("  (%lld more: --top N, or --format json)\n", static_cast<long long>(kept.size()) - top);
    if (!k.completeness.empty()) {
      out += "  completeness, F with the nodes K removed:   circuit    model\n";
      for (const CompletenessSubset& s : k.completeness) {
        std::string nodes;
        for (const std::string& n : s.nodes) nodes += (nodes.empty() ? "" : ",") + n;
        if (nodes.size() > 40) nodes = nodes.substr(0, 37) + "...";
        out += format("    %-40s %8.3f %8.3f\n", nodes.c_str(), s.circuit, s.model);
      }
    }
  }
  return out;
}

json edge_circuits_json(const EdgeCircuits& c) {
  json senders = json::array(), receivers = json::array();
  for (const EdgeGraph::Sender& s : c.graph.senders) senders.push_back({{"name", s.name}, {"layer", s.layer}, {"head", s.head}});
  for (const EdgeGraph::Receiver& r : c.graph.receivers)
    receivers.push_back({{"name", r.name}, {"layer", r.layer}, {"head", r.head}, {"input", edge_input_name(r.input)}});
  json kinds = json::array();
  for (const KindCircuit& k : c.kinds) {
    json edges = json::array();
    for (const CircuitEdgeResult& r : k.edges) {
      const EdgeGraph::Edge& e = c.graph.edges[static_cast<size_t>(r.edge)];
      edges.push_back({{"sender", c.graph.senders[e.sender].name}, {"receiver", c.graph.receivers[e.receiver].name},
                       {"kept", r.kept}, {"acdc", round9(r.acdc)}, {"exact", round9(r.exact)}, {"eap", round9(r.eap)},
                       {"own", r.own ? json(round9(*r.own)) : json(nullptr)}});
    }
    json completeness = json::array();
    for (const CompletenessSubset& s : k.completeness)
      completeness.push_back({{"nodes", s.nodes}, {"circuit", round9(s.circuit)}, {"model", round9(s.model)}});
    kinds.push_back({{"kind", k.kind}, {"items", k.items}, {"clean", round9(k.clean)}, {"corrupt", round9(k.corrupt)},
                     {"kept", k.kept}, {"faithfulness", round9(k.faithfulness)},
                     {"incompleteness", round9(k.incompleteness)}, {"smallest_own", round9(k.smallest_own)},
                     {"eap_spearman", round9(k.spearman)}, {"eap_kendall", round9(k.kendall)},
                     {"forwards", k.forwards}, {"edges", std::move(edges)}, {"completeness", std::move(completeness)}});
  }
  return {{"method", "path patching, ACDC with |delta F| < threshold"},
          {"ablation", "resample (the corrupt prompt's own run)"},
          {"swap", swap_name(c.swap)},
          {"threshold", round9(c.threshold)},
          {"graph", {{"senders", std::move(senders)}, {"receivers", std::move(receivers)},
                     {"edges", static_cast<int64_t>(c.graph.edges.size())}}},
          {"skipped", c.skipped},
          {"kinds", std::move(kinds)}};
}

std::string format_score_split(const ScoreSplit& s, int64_t top) {
  const int64_t S = static_cast<int64_t>(s.sources.size());
  std::string text;
  for (const std::string& t : s.tokens) text += symbol_label(t);
  std::string out = format("L%lld.H%lld's attention score from position %lld (%s) on each key, split into query-side "
                           "source x key-side source\n",
                           static_cast<long long>(s.layer), static_cast<long long>(s.head),
                           static_cast<long long>(s.position), symbol_label(s.tokens[static_cast<size_t>(s.position)]).c_str());
  out += "  text: " + text + "\n";
  out += "  sources: ";
  for (int64_t i = 0; i < S; ++i) out += (i ? ", " : "") + s.sources[static_cast<size_t>(i)];
  out += "\n  ln1's scale frozen at each position (as --attribution freezes ln_f's); the parts sum to the score";
  out += format(" (largest gap %.2e)\n", s.largest_gap);
  if (s.rope) out += "  rope: the score minus the same sum with the rotation left out: what the offset adds\n";
  out += "\n  key  symbol  weight     score" + std::string(s.rope ? "     rope" : "") + "   largest parts (query source x key source)\n";
  for (const ScoreSplitKey& k : s.keys) {
    std::vector<int64_t> order(k.parts.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return std::abs(k.parts[a]) > std::abs(k.parts[b]); });
    std::string parts;
    for (int64_t i = 0; i < top && i < static_cast<int64_t>(order.size()); ++i) {
      const int64_t p = order[static_cast<size_t>(i)];
      parts += format("%s%s x %s %+.2f", i ? ", " : "", s.sources[p / S].c_str(), s.sources[p % S].c_str(), k.parts[p]);
    }
    const std::string label = symbol_label(s.tokens[static_cast<size_t>(k.position)]);
    out += format("  %3lld  %s%*s  %6.3f  %+8.3f", static_cast<long long>(k.position), label.c_str(),
                  std::max(0, 6 - display_width(label)), "", k.weight, k.score);
    if (s.rope) out += format("  %+7.3f", k.score - k.unrotated);
    out += "   " + parts + "\n";
  }
  return out;
}

json score_split_json(const ScoreSplit& s) {
  json keys = json::array();
  const size_t S = s.sources.size();
  for (const ScoreSplitKey& k : s.keys) {
    json grid = json::array();
    for (size_t q = 0; q < S; ++q) {
      json row = json::array();
      for (size_t c = 0; c < S; ++c) row.push_back(round9(k.parts[q * S + c]));
      grid.push_back(std::move(row));
    }
    keys.push_back({{"position", k.position}, {"symbol", symbol_label(s.tokens[static_cast<size_t>(k.position)])},
                    {"weight", round9(k.weight)}, {"score", round9(k.score)}, {"parts_sum", round9(k.parts_sum)},
                    {"unrotated", s.rope ? json(round9(k.unrotated)) : json(nullptr)}, {"parts", std::move(grid)}});
  }
  json tokens = json::array();
  for (const std::string& t : s.tokens) tokens.push_back(symbol_label(t));
  return {{"layer", s.layer}, {"head", s.head}, {"position", s.position}, {"tokens", std::move(tokens)},
          {"rope", s.rope}, {"sources", s.sources}, {"largest_gap", round9(s.largest_gap)}, {"keys", std::move(keys)}};
}

}  // namespace mg

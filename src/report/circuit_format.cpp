// Printing the circuit modes (report/circuit_format.h).
#include "report/circuit_format.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "report/text.h"

namespace mg {
namespace {

using json = nlohmann::ordered_json;

std::string joined(const std::vector<std::string>& tokens) {
  std::string text;
  for (const auto& t : tokens) text += symbol_label(t);
  return text;
}

std::string quoted(const std::string& symbol) { return "\"" + symbol_label(symbol) + "\""; }

}  // namespace

std::string format_attribution(const Attribution& a) {
  std::string out = "text: " + joined(a.tokens) + format(" (%zu symbols), position %lld ", a.tokens.size(),
                                                          static_cast<long long>(a.position)) +
                    quoted(a.tokens[a.position]) + "\n";
  out += format("answer %s (logit %.4f) against %s (logit %.4f): difference %.4f\n", quoted(a.answer_symbol).c_str(),
                a.logit, quoted(a.against_symbol).c_str(), a.against_logit, a.logit - a.against_logit);
  out += format("direct logit attribution: each part of the final residual stream through ln_f with its scale "
                "sigma = %.6f taken from the whole stream and frozen (as TransformerLens does), then the head\n\n",
                a.scale);
  out += "  part        to logit   to difference\n";
  for (const AttributionPart& p : a.parts)
    out += format("  %-10s %+10.4f %+10.4f\n", p.name.c_str(), p.logit, p.difference);
  out += format("  %-10s %+10.4f %+10.4f   (the forward: %+.4f, %+.4f)\n", "sum", a.parts_logit, a.parts_difference,
                a.logit, a.logit - a.against_logit);
  return out;
}

json attribution_json(const Attribution& a) {
  json out = {{"tokens", a.tokens}, {"position", a.position}, {"answer", a.answer_symbol},
              {"against", a.against_symbol}, {"logit", round9(a.logit)}, {"against_logit", round9(a.against_logit)},
              {"difference", round9(a.logit - a.against_logit)}, {"scale", round9(a.scale)}, {"parts", json::array()}};
  for (const AttributionPart& p : a.parts) {
    json part = {{"name", p.name}, {"layer", nullptr}, {"head", nullptr}, {"logit", round9(p.logit)},
                 {"difference", round9(p.difference)}};
    if (p.layer >= 0) part["layer"] = p.layer;
    if (p.head >= 0) part["head"] = p.head;
    out["parts"].push_back(part);
  }
  out["parts_logit"] = round9(a.parts_logit);
  out["parts_difference"] = round9(a.parts_difference);
  return out;
}

std::string format_probe_attribution(const ProbeAttribution& a) {
  std::string out = "direct logit attribution at each probe item's answer position (ln_f's scale frozen), the "
                    "answer against the model's best other symbol, mean per kind\n\n  part      ";
  for (const KindAttribution& k : a.kinds) out += format(" %12s", k.kind.c_str());
  out += "\n  items     ";
  for (const KindAttribution& k : a.kinds) out += format(" %12lld", static_cast<long long>(k.items));
  for (size_t i = 0; i < a.part_names.size(); ++i) {
    out += format("\n  %-10s", a.part_names[i].c_str());
    for (const KindAttribution& k : a.kinds) out += format(" %+12.4f", k.parts[i]);
  }
  out += "\n  difference";
  for (const KindAttribution& k : a.kinds) out += format(" %+12.4f", k.difference);
  out += format("\n\n%lld items skipped (a symbol outside the vocabulary); parts sum to the difference within %.1e\n",
                static_cast<long long>(a.skipped), a.largest_gap);
  return out;
}

json probe_attribution_json(const ProbeAttribution& a) {
  json out = {{"parts", a.part_names}, {"kinds", json::array()}, {"skipped", a.skipped},
              {"largest_gap", round9(a.largest_gap)}};
  for (const KindAttribution& k : a.kinds) {
    json parts = json::array();
    for (double p : k.parts) parts.push_back(round9(p));
    out["kinds"].push_back({{"kind", k.kind}, {"items", k.items}, {"difference", round9(k.difference)}, {"parts", parts}});
  }
  return out;
}

std::string format_logit_lens(const LogitLens& lens) {
  std::string out = "text: " + joined(lens.tokens) + format(", position %lld ", static_cast<long long>(lens.position)) +
                    quoted(lens.tokens[lens.position]) + ", answer " + quoted(lens.answer_symbol) + "\n";
  out += "logit lens: the residual stream at the position after each stage, through ln_f (its own scale) and the "
         "head\n\n  stage   rank   logit    top symbols\n";
  for (const LensStage& s : lens.stages) {
    out += format("  %-6s %5lld %8.3f   ", s.name.c_str(), static_cast<long long>(s.answer_rank), s.answer_logit);
    for (const LogitPush& t : s.top) out += format(" %s %.2f", quoted(t.symbol).c_str(), t.logit);
    out += "\n";
  }
  out += lens.first_stage < 0 ? "\nthe answer is never the first choice\n"
                              : "\nthe answer is first the first choice after " + lens.stages[lens.first_stage].name + "\n";
  return out;
}

json logit_lens_json(const LogitLens& lens) {
  json out = {{"tokens", lens.tokens}, {"position", lens.position}, {"answer", lens.answer_symbol},
              {"first_stage", lens.first_stage < 0 ? json(nullptr) : json(lens.stages[lens.first_stage].name)},
              {"stages", json::array()}};
  for (const LensStage& s : lens.stages) {
    json top = json::array();
    for (const LogitPush& t : s.top) top.push_back({{"symbol", t.symbol}, {"logit", round9(t.logit)}});
    out["stages"].push_back(
        {{"stage", s.name}, {"answer_rank", s.answer_rank}, {"answer_logit", round9(s.answer_logit)}, {"top", top}});
  }
  return out;
}

std::string format_composition(const CompositionScores& c, int64_t top) {
  std::string out = format("composition scores (Elhage et al. 2021), ln1 folded into W_Q, W_K, W_V, reading and "
                           "writing weights centred (TransformerLens's fold_ln, center_writing_weights)\n"
                           "random baseline (mean of %lld draws of random matrices of the same shapes, seed %llu): "
                           "Q %.4f  K %.4f  V %.4f\n\n",
                           static_cast<long long>(c.samples), static_cast<unsigned long long>(c.seed), c.baseline_q,
                           c.baseline_k, c.baseline_v);
  // Ranked by the largest ratio of a score to its mode's baseline.
  auto ratio = [&](const CompositionPair& p) {
    return std::max({p.q / c.baseline_q, p.k / c.baseline_k, p.v / c.baseline_v});
  };
  std::vector<size_t> order(c.pairs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ratio(c.pairs[a]) > ratio(c.pairs[b]); });
  out += "  writer  reader    Q        K        V       (x baseline: Q, K, V)\n";
  for (size_t i = 0; i < std::min<size_t>(order.size(), static_cast<size_t>(top)); ++i) {
    const CompositionPair& p = c.pairs[order[i]];
    out += format("  %-7s %-7s %.4f   %.4f   %.4f   (%.2f, %.2f, %.2f)\n", head_name(p.layer1, p.head1).c_str(),
                  head_name(p.layer2, p.head2).c_str(), p.q, p.k, p.v, p.q / c.baseline_q, p.k / c.baseline_k,
                  p.v / c.baseline_v);
  }
  if (order.size() > static_cast<size_t>(top))
    out += format("  (%zu more pairs: --top N, or --format json)\n", order.size() - static_cast<size_t>(top));
  return out;
}

json composition_json(const CompositionScores& c) {
  json out = {{"baseline", {{"q", round9(c.baseline_q)}, {"k", round9(c.baseline_k)}, {"v", round9(c.baseline_v)}}},
              {"samples", c.samples}, {"seed", c.seed}, {"pairs", json::array()}};
  for (const CompositionPair& p : c.pairs)
    out["pairs"].push_back({{"writer", {p.layer1, p.head1}}, {"reader", {p.layer2, p.head2}}, {"q", round9(p.q)},
                            {"k", round9(p.k)}, {"v", round9(p.v)}});
  return out;
}

std::string patching_gap_warning(const Patching& p) {
  return format("the clean and corrupt differences (%.4f, %.4f) are %.4f apart, under %.1f: too close to measure a "
                "share restored; each share below divides by that gap",
                p.clean, p.corrupt, std::abs(p.clean - p.corrupt), kMinPatchingGap);
}

std::string format_patching(const Patching& p, int64_t top) {
  std::string out = "clean:   " + joined(p.clean_tokens) + "\ncorrupt: " + joined(p.corrupt_tokens) + "\n";
  out += format("logit difference %s - %s at the last position: clean %.4f, corrupt %.4f\n",
                quoted(p.answer_symbol).c_str(), quoted(p.against_symbol).c_str(), p.clean, p.corrupt);
  if (patching_gap_too_small(p)) out += "warning: " + patching_gap_warning(p) + "\n";
  out += "restored = (patched - corrupt) / (clean - corrupt), the corrupt run with one activation from the clean run\n\n";
  struct Row {
    std::string name;
    double restored;
  };
  std::vector<Row> rows;
  for (int64_t l = 0; l < p.n_layer; ++l)
    for (int64_t h = 0; h < p.n_head; ++h)
      rows.push_back({head_name(l, h) + " (hook_z, all positions)", p.heads[l * p.n_head + h]});
  for (int64_t l = 0; l < p.n_layer; ++l)
    for (int64_t h = 0; h < p.n_head; ++h)
      for (int64_t t = 0; t < p.T; ++t)
        rows.push_back({head_name(l, h) + format(" (hook_z) at %lld ", static_cast<long long>(t)) + quoted(p.clean_tokens[t]),
                        p.head_positions[(l * p.n_head + h) * p.T + t]});
  for (int64_t l = 0; l < p.n_layer; ++l)
    for (int64_t t = 0; t < p.T; ++t)
      rows.push_back({format("L%lld resid_pre at %lld ", static_cast<long long>(l), static_cast<long long>(t)) +
                          quoted(p.clean_tokens[t]),
                      p.streams[l * p.T + t]});
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.restored > b.restored; });
  out += "  restored  activation\n";
  for (size_t i = 0; i < std::min<size_t>(rows.size(), static_cast<size_t>(top)); ++i)
    out += format("  %+8.4f  %s\n", rows[i].restored, rows[i].name.c_str());
  out += "\n  the whole stream entering each block:";
  for (int64_t l = 0; l < p.n_layer; ++l) out += format(" L%lld %+.4f", static_cast<long long>(l), p.whole_streams[l]);
  return out + "\n";
}

json patching_json(const Patching& p) {
  auto numbers = [](const std::vector<double>& v) {
    json a = json::array();
    for (double x : v) a.push_back(round9(x));
    return a;
  };
  json heads = json::array(), head_positions = json::array(), streams = json::array();
  for (int64_t l = 0; l < p.n_layer; ++l) {
    heads.push_back(numbers(std::vector<double>(p.heads.begin() + l * p.n_head, p.heads.begin() + (l + 1) * p.n_head)));
    json layer = json::array();
    for (int64_t h = 0; h < p.n_head; ++h) {
      const auto row = p.head_positions.begin() + (l * p.n_head + h) * p.T;
      layer.push_back(numbers(std::vector<double>(row, row + p.T)));
    }
    head_positions.push_back(layer);
    streams.push_back(numbers(std::vector<double>(p.streams.begin() + l * p.T, p.streams.begin() + (l + 1) * p.T)));
  }
  return {{"clean_tokens", p.clean_tokens}, {"corrupt_tokens", p.corrupt_tokens}, {"answer", p.answer_symbol},
          {"against", p.against_symbol}, {"clean", round9(p.clean)}, {"corrupt", round9(p.corrupt)},
          {"gap", round9(p.clean - p.corrupt)}, {"min_gap", kMinPatchingGap},
          {"warning", patching_gap_too_small(p) ? json(patching_gap_warning(p)) : json(nullptr)},
          {"heads", heads}, {"head_positions", head_positions}, {"streams", streams},
          {"whole_streams", numbers(p.whole_streams)}};
}

std::string format_probe_patching(const ProbePatching& p) {
  std::string out =
      p.swap == Swap::key
          ? "activation patching over the probe, --swap key: per item the fact's key (every symbol that tells it apart, "
            "k before the answer's source) replaced by another story's, so the question matches it on none; against "
            "the corrupt run's choice"
          : "activation patching over the probe, --swap value: per item the answer's fact replaced by another story's "
            "of the same kind, against that replacement";
  out += "; each head's hook_z from the clean run; restored per kind = sum(patched - corrupt) / sum(clean - corrupt)"
         "\n\n  head    ";
  for (const KindPatching& k : p.kinds) out += format(" %10s", k.kind.c_str());
  out += "\n  items   ";
  for (const KindPatching& k : p.kinds) out += format(" %10lld", static_cast<long long>(k.items));
  out += "\n  gap     ";  // the mean clean - corrupt difference: how much the corruption moved
  for (const KindPatching& k : p.kinds) out += format(" %+10.4f", k.items ? k.gap / static_cast<double>(k.items) : 0.0);
  if (p.swap == Swap::key) {
    out += "\n  key k   ";
    for (const KindPatching& k : p.kinds) {
      std::string offsets;
      for (int64_t o : k.key_offsets) offsets += (offsets.empty() ? "" : ",") + std::to_string(o);
      out += format(" %10s", offsets.empty() ? "-" : offsets.c_str());
    }
  }
  for (int64_t l = 0; l < p.n_layer; ++l)
    for (int64_t h = 0; h < p.n_head; ++h) {
      out += format("\n  %-8s", head_name(l, h).c_str());
      for (const KindPatching& k : p.kinds) out += format(" %+10.4f", k.heads[l * p.n_head + h]);
    }
  return out + format("\n\n%lld items skipped (no source in the prompt, no key, no replacement, or no change)\n",
                      static_cast<long long>(p.skipped));
}

json probe_patching_json(const ProbePatching& p) {
  json out = {{"swap", swap_name(p.swap)}, {"n_layer", p.n_layer}, {"n_head", p.n_head}, {"skipped", p.skipped},
              {"kinds", json::array()}};
  for (const KindPatching& k : p.kinds) {
    json heads = json::array();
    for (double h : k.heads) heads.push_back(round9(h));
    json kind = {{"kind", k.kind}, {"items", k.items}, {"gap", round9(k.items ? k.gap / static_cast<double>(k.items) : 0.0)}};
    if (p.swap == Swap::key) kind["key_offsets"] = k.key_offsets;
    kind["heads"] = heads;
    out["kinds"].push_back(kind);
  }
  return out;
}

}  // namespace mg

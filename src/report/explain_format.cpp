// inspect-heads --explain's writers.
#include "report/explain_format.h"

#include <algorithm>
#include <cmath>

#include "report/text.h"

namespace mg {

std::string chain_head_name(const ChainHead& h) { return head_name(h.layer, h.head); }

namespace {

std::string head_or_none(const std::optional<ChainHead>& h) { return h ? chain_head_name(*h) : "none"; }

// How much of the kind's answer the chain explains (interp/explain.h's chain faithfulness).
std::string chain_faithfulness_line(const KindChain& k) {
  if (!k.chain_faithfulness && !k.chain_key_faithfulness) return "";
  auto share = [](const std::optional<double>& f, const char* what) {
    if (!f) return format("nothing measurable of swapping %s (no pair moves the answer)", what);
    const double percent = std::abs(100.0 * *f) < 0.5 ? 0.0 : 100.0 * *f;  // no "-0%"
    return format("%.0f%% of what swapping %s changes (faithfulness %.3f)", percent, what, *f);
  };
  return "  the chain alone (the writer, " + std::string(k.carrier ? "the carrier" : "no carrier") +
         " and the MLPs; every other edge from the swapped prompt) keeps " + share(k.chain_faithfulness, "the answer") +
         " and " + share(k.chain_key_faithfulness, "its key") + "; --circuit finds the whole circuit\n";
}

}  // namespace

std::string format_explanation(const Explanation& e) {
  std::string out =
      "the chain each question kind is answered by, found on the probe:\n"
      "  writer: the head with the largest direct logit attribution at the answer (--attribution --probe);\n"
      "          restores: the share of the logit difference its clean output brings back with the answer's fact\n"
      "          swapped (--patch --probe --swap value)\n"
      "  carrier: an earlier head whose output the writer's queries (Q) or keys (K) read (--composition, above the\n"
      "          random baseline), among those whose clean output restores >= " +
      format("%.1f", kCarrierRestores) +
      " with the fact's key swapped (--swap key)\n"
      "  MLPs: the MLPs' part of the logit difference, all layers added\n\n";
  // The kind column fits the longest kind (which_colour), as wide as v5's "kind" at least.
  int width = 9;
  for (const KindChain& k : e.kinds) width = std::max(width, static_cast<int>(k.kind.size()));
  out += format("  %-*s items  accuracy  writer  attribution  restores  carrier  restores  composition (baseline)   MLPs"
                "      difference\n",
                width + 1, "kind");
  for (const KindChain& k : e.kinds) {
    std::string composition = k.carrier ? format("%c %.4f (%.4f)", k.composition, k.composition_score, k.baseline) : "-";
    out += format("  %-*s %6lld  %8.3f  %-6s  %+11.4f  %8.4f  %-7s  %8s  %-23s %+8.4f  %+10.4f\n", width, k.kind.c_str(),
                  static_cast<long long>(k.items), k.accuracy, head_or_none(k.writer).c_str(), k.writer_attribution,
                  k.writer_restores, head_or_none(k.carrier).c_str(),
                  k.carrier ? format("%.4f", k.carrier_restores).c_str() : "-", composition.c_str(), k.mlp_attribution,
                  k.difference);
  }
  out += "\n";
  for (const KindChain& k : e.kinds) {
    if (k.shortcut) {
      out += format("%s: learned by a shortcut: the %s alone (accuracy %.3f without distractors, %.3f with them, "
                    "under %.1f); the heads that answer it: writer %s",
                    k.kind.c_str(), k.cue.empty() ? "cue" : k.cue.c_str(), k.no_distractor_accuracy,
                    k.distractor_accuracy, kLearnedAccuracy, head_or_none(k.writer).c_str());
      out += k.carrier ? ", carrier " + chain_head_name(*k.carrier) + "\n" : ", no carrier\n";
      out += chain_faithfulness_line(k);
      continue;
    }
    if (!k.learned) {
      out += format("%s: not learned (accuracy %.3f, under %.1f); the best candidates found: writer %s", k.kind.c_str(),
                    k.accuracy, kLearnedAccuracy, head_or_none(k.writer).c_str());
      out += k.carrier ? ", carrier " + chain_head_name(*k.carrier) + "\n" : ", no carrier\n";
      out += chain_faithfulness_line(k);
      continue;
    }
    out += k.kind + ": ";
    if (k.carrier)
      out += chain_head_name(*k.carrier) + " carries the key onto the answer's source (restores " +
             format("%.2f", k.carrier_restores) + " with the key swapped); " + chain_head_name(*k.writer) + " reads it through its " +
             (k.composition == 'K' ? "keys" : "queries") + " (" +
             format("%c-composition %.3f, %.1fx the baseline", k.composition, k.composition_score,
                    k.composition_score / k.baseline) +
             ")";
    else
      out += "no earlier head both restores with the key swapped and is read by the writer; " +
             head_or_none(k.writer);
    out += format(" and writes the answer (%+.2f of the logit difference %+.2f; restores %.2f with the answer swapped); "
                  "the MLPs add %+.2f\n",
                  k.writer_attribution, k.difference, k.writer_restores, k.mlp_attribution);
    out += chain_faithfulness_line(k);
  }
  return out;
}

nlohmann::ordered_json explanation_json(const Explanation& e) {
  using nlohmann::ordered_json;
  ordered_json kinds = ordered_json::array();
  for (const KindChain& k : e.kinds) {
    ordered_json candidates = ordered_json::array();
    for (const KindChain::Candidate& c : k.candidates)
      candidates.push_back({{"head", chain_head_name(c.head)}, {"restores", round9(c.restores)}, {"q", round9(c.q)},
                            {"k", round9(c.k)}});
    kinds.push_back({{"kind", k.kind},
                     {"items", k.items},
                     {"accuracy", k.accuracy},  // as eval --probe --json prints it
                     {"learned", k.learned},
                     {"shortcut", k.shortcut},
                     {"cue", k.tagged ? ordered_json(k.cue) : ordered_json(nullptr)},
                     {"no_distractor_accuracy", k.tagged ? ordered_json(k.no_distractor_accuracy) : ordered_json(nullptr)},
                     {"distractor_accuracy", k.tagged ? ordered_json(k.distractor_accuracy) : ordered_json(nullptr)},
                     {"difference", round9(k.difference)},
                     {"writer", k.writer ? ordered_json(chain_head_name(*k.writer)) : ordered_json(nullptr)},
                     {"writer_attribution", round9(k.writer_attribution)},
                     {"writer_restores", round9(k.writer_restores)},
                     {"carrier", k.carrier ? ordered_json(chain_head_name(*k.carrier)) : ordered_json(nullptr)},
                     {"carrier_restores", k.carrier ? ordered_json(round9(k.carrier_restores)) : ordered_json(nullptr)},
                     {"composition", k.carrier ? ordered_json(std::string(1, k.composition)) : ordered_json(nullptr)},
                     {"composition_score", k.carrier ? ordered_json(round9(k.composition_score)) : ordered_json(nullptr)},
                     {"baseline", k.carrier ? ordered_json(round9(k.baseline)) : ordered_json(nullptr)},
                     {"mlp_attribution", round9(k.mlp_attribution)},
                     {"chain_faithfulness", k.chain_faithfulness ? ordered_json(round9(*k.chain_faithfulness)) : ordered_json(nullptr)},
                     {"chain_key_faithfulness",
                      k.chain_key_faithfulness ? ordered_json(round9(*k.chain_key_faithfulness)) : ordered_json(nullptr)},
                     {"candidates", candidates}});
  }
  return {{"learned_accuracy", kLearnedAccuracy},
          {"carrier_restores", kCarrierRestores},
          {"kinds", kinds},
          {"skipped", {{"attribution", e.skipped_attribution}, {"value", e.skipped_value}, {"key", e.skipped_key}}}};
}

}  // namespace mg

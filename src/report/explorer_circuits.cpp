// The explorer's circuit data (report/explorer_circuits.h).
#include "report/explorer_circuits.h"

#include "interp/circuit_edges.h"
#include "interp/explain.h"
#include "report/circuit_format.h"
#include "report/edge_circuit_format.h"
#include "report/explain_format.h"
#include "report/text.h"

namespace mg {
namespace {

using json = nlohmann::ordered_json;

json attribution_at(const Gpt& model, const Vocab& vocab, const std::vector<int32_t>& ids, int64_t position) {
  const Attribution a = attribute_logits(model, vocab, ids, {position, std::nullopt, std::nullopt});
  json parts = json::array();
  for (const AttributionPart& p : a.parts)
    parts.push_back({{"name", p.name},
                     {"part", attribution_part_key(p)},
                     {"layer", p.layer},
                     {"head", p.head},
                     {"difference", round9(p.difference)}});
  return {{"answer", symbol_label(a.answer_symbol)}, {"against", symbol_label(a.against_symbol)},
          {"difference", round9(a.logit - a.against_logit)}, {"parts", std::move(parts)}};
}

// The page's question as a probe item with a source: its corrupted partner is patched.
json patching_of(const Gpt& model, const Vocab& vocab, const std::vector<int32_t>& ids, const std::vector<ProbeItem>* probes) {
  // "reason" in English as the CLI's JSON had it; "reason_key" for a page to word it.
  if (!probes)
    return {{"available", false},
            {"reason", "no probe set: the question's corrupted partner comes from it"},
            {"reason_key", "no_probe"}};
  const int64_t block = model.config().block_size;
  const CorruptionCandidates candidates(*probes, Swap::value);
  for (const ProbeItem& item : *probes) {
    const std::optional<CorruptPrompt> prompt = candidates.corrupt(item, vocab, block);
    if (!prompt || vocab.find_all(prompt->clean) != ids) continue;
    const Patching p = patch_activations(model, vocab, prompt->clean, prompt->corrupt, vocab.find(item.answer),
                                         vocab.find(prompt->replacements[0]));
    const json full = patching_json(p);
    std::string corrupt;
    for (const auto& t : p.corrupt_tokens) corrupt += t;
    return {{"available", true}, {"corrupt", corrupt}, {"answer", symbol_label(p.answer_symbol)},
            {"against", symbol_label(p.against_symbol)}, {"clean", full["clean"]}, {"corrupt_difference", full["corrupt"]},
            {"gap", full["gap"]}, {"min_gap", full["min_gap"]}, {"warning", full["warning"]},
            {"heads", full["heads"]}, {"streams", full["streams"]}};
  }
  return {{"available", false},
          {"reason", "the text is not a probe question with a source (the fact its answer copies)"},
          {"reason_key", "not_probe_question"}};
}

}  // namespace

json circuit_explorer_json(const Gpt& model, const Vocab& vocab, const std::vector<int32_t>& ids,
                           const std::vector<ProbeItem>* probes, const std::vector<int64_t>& positions) {
  json at = json::object();
  for (int64_t p : positions) at[std::to_string(p)] = attribution_at(model, vocab, ids, p);
  json composition = composition_json(composition_scores(model));
  // Each kind's chain (inspect-heads --explain), when there is a probe to find it on.
  json chain = probes && !probes->empty() ? json(explanation_json(explain_chains(model, vocab, *probes))) : json(nullptr);
  // Each kind's circuit of edges (inspect-heads --circuit), at its default threshold.
  json edge_circuit = probes && !probes->empty()
                          ? json(edge_circuits_json(find_probe_circuits(model, vocab, *probes, CircuitOptions{})))
                          : json(nullptr);
  return {{"attribution", {{"positions", positions}, {"at", std::move(at)}}},
          {"patching", patching_of(model, vocab, ids, probes)},
          {"composition", std::move(composition)},
          {"chain", std::move(chain)},
          {"edge_circuit", std::move(edge_circuit)}};
}

}  // namespace mg

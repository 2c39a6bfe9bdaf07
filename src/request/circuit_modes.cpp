// The circuit modes (request/modes.h): --attribution, --logit-lens, --patch, --explain,
// --circuit and --score-split, each on a text or on the probe set.
#include <type_traits>

#include "core/error.h"
#include "interp/trace.h"
#include "report/circuit_format.h"
#include "report/explain_format.h"
#include "report/patching_svg.h"
#include "request/modes.h"
#include "request/subject.h"

namespace mg {
namespace {

// The probe modes build each item's own question: the single-text inputs are refused.
void refuse_with_probe(const char* mode, std::initializer_list<std::pair<const char*, bool>> inputs) {
  for (const auto& [name, set] : inputs)
    if (set)
      throw RequestError({ArgumentName{name}, " is not used by ", ArgumentName{mode}, " ", ArgumentName{"probe"},
                          " (each item brings its own)"});
}

// As --patch with texts: a one-symbol vocabulary leaves no competitor to patch toward.
void refuse_one_symbol(const Vocab& vocab) {
  if (vocab.size() < 2)
    throw InputError("the model's vocabulary has " + std::to_string(vocab.size()) +
                     " symbol: there is no other symbol to measure the answer's logit against");
}

}  // namespace

AnyAttribution compute_attribution(const InspectRequest& r, const Subject& s) {
  if (r.probe) {
    refuse_with_probe("attribution", {{"text", r.text.has_value()}, {"position", r.position.has_value()},
                                      {"answer", r.answer.has_value()}, {"against", r.against.has_value()}});
    return attribute_probe(*s.model, *s.vocab, readable_probe_set(*r.probe, *s.vocab));
  }
  if (!r.text)
    throw RequestError({ArgumentName{"attribution"}, " needs ", ArgumentName{"text"}, " TEXT",
                        CommandLineOnly{" (or --probe FILE)"}});
  const AttributionQuery query{r.position, symbol_argument(*s.vocab, "answer", r.answer),
                               symbol_argument(*s.vocab, "against", r.against)};
  return attribute_logits(*s.model, *s.vocab, argument_text("text", *r.text), "text", query);
}

ModeOutput write_attribution(const InspectRequest& r, const AnyAttribution& a) {
  const bool json = r.format == "json";
  if (const auto* probe = std::get_if<ProbeAttribution>(&a))
    return {{}, json ? probe_attribution_json(*probe).dump() + "\n" : format_probe_attribution(*probe)};
  const Attribution& one = std::get<Attribution>(a);
  return {{}, json ? attribution_json(one).dump() + "\n" : format_attribution(one)};
}

LogitLens compute_logit_lens(const InspectRequest& r, const Subject& s) {
  const std::u32string text = required_text(r, {CommandLineOnly{"--logit-lens"}, QueryOnly{"logit-lens"}});
  // --top symbols per stage, as asked (every symbol when it passes the vocabulary).
  return logit_lens(*s.model, *s.vocab, text, "text", r.position, symbol_argument(*s.vocab, "answer", r.answer), r.top);
}

AnyPatching compute_patching(const InspectRequest& r, const Subject& s) {
  if (r.probe) {
    refuse_with_probe("patch", {{"clean", r.clean.has_value()}, {"corrupt", r.corrupt.has_value()},
                                {"answer", r.answer.has_value()}, {"against", r.against.has_value()},
                                {"svg", r.svg.has_value()}});
    refuse_one_symbol(*s.vocab);
    const Swap swap = r.swap == "key" ? Swap::key : Swap::value;
    return patch_probe(*s.model, *s.vocab, readable_probe_set(*r.probe, *s.vocab), swap);
  }
  if (!r.clean || !r.corrupt)
    throw RequestError({ArgumentName{"patch"}, " needs ", ArgumentName{"clean"}, " TEXT and ", ArgumentName{"corrupt"},
                        " TEXT", CommandLineOnly{" (or --probe FILE)"}});
  if (r.swap)
    throw RequestError({ArgumentName{"swap"}, " builds each probe item's corruption (", ArgumentName{"patch"}, " ",
                        ArgumentName{"probe"}, " FILE); with ", ArgumentName{"clean"}, " and ", ArgumentName{"corrupt"},
                        " the corruption is the text given"});
  return patch_activations(*s.model, *s.vocab, argument_text("clean", *r.clean), argument_text("corrupt", *r.corrupt),
                           symbol_argument(*s.vocab, "answer", r.answer), symbol_argument(*s.vocab, "against", r.against));
}

ModeOutput write_patching(const InspectRequest& r, const AnyPatching& p) {
  const bool json = r.format == "json";
  if (const auto* probe = std::get_if<ProbePatching>(&p))
    return {{}, json ? probe_patching_json(*probe).dump() + "\n" : format_probe_patching(*probe)};
  const Patching& one = std::get<Patching>(p);
  ModeOutput out;
  if (r.svg) out.files.emplace_back(*r.svg, patching_svg(one));  // the picture first, as --svg elsewhere
  out.text = json ? patching_json(one).dump() + "\n" : format_patching(one, r.top);
  // The text says it in its "warning:" line; JSON, read by a program, says it in "warning"
  // and on stderr, where a person running it sees it.
  if (json && patching_gap_too_small(one)) out.warnings.push_back(patching_gap_warning(one));
  if (r.svg && !json) out.text += "heatmap written to " + *r.svg + "\n";
  return out;
}

Explanation compute_explanation(const InspectRequest& r, const Subject& s) {
  if (s.cache) return cached_explanation(*s.model, *s.vocab, *s.cache);
  const std::string probe_path = r.probe ? *r.probe : s.probe_path;
  if (probe_path.empty())
    throw RequestError({ArgumentName{"explain"}, " needs ", ArgumentName{"probe"},
                        " FILE (the model's config names no data.probe_path)"});
  return explain_chains(*s.model, *s.vocab, readable_probe_set(probe_path, *s.vocab));
}

EdgeCircuits compute_edge_circuits(const InspectRequest& r, const Subject& s) {
  refuse_one_symbol(*s.vocab);  // the patching pairs need a competitor, as --patch --probe's
  if (s.cache) return cached_edge_circuits(*s.model, *s.vocab, *s.cache);
  const std::string probe_path = r.probe ? *r.probe : s.probe_path;
  if (probe_path.empty())
    throw RequestError({ArgumentName{"circuit"}, " needs ", ArgumentName{"probe"},
                        " FILE (the model's config names no data.probe_path)"});
  CircuitOptions options;
  if (r.threshold) options.threshold = *r.threshold;
  return find_probe_circuits(*s.model, *s.vocab, readable_probe_set(probe_path, *s.vocab), options,
                             r.swap == "key" ? Swap::key : Swap::value);
}

void check_score_split(const InspectRequest& r) {
  parse_head_name(*r.score_split, "score_split");  // before the model is loaded
  required_text(r, {ArgumentName{"score_split"}});
}

ScoreSplit compute_score_split(const InspectRequest& r, const Subject& s) {
  const auto [layer, head] = parse_head_name(*r.score_split, "score_split");
  check_head_in_model(s.model->config(), layer, head, "score_split");  // named as given, not as --layer
  return split_scores(*s.model, *s.vocab, argument_text("text", *r.text), "text", layer, head, r.position);
}

}  // namespace mg

// inspect-heads' JSON per mode, shared by the command line and the server (inspect_json.h).
#include "report/inspect_json.h"

#include <algorithm>

#include "core/error.h"
#include "data/utf8.h"
#include "interp/composition.h"
#include "interp/logit_choice.h"
#include "report/circuit_format.h"
#include "report/patterns_format.h"
#include "report/roles_format.h"
#include "report/trace_format.h"

namespace mg {
namespace {

std::optional<int32_t> symbol_option(const Vocab& vocab, const std::string& option, const std::optional<std::string>& utf8) {
  if (!utf8) return std::nullopt;
  return symbol_id(vocab, option, *utf8);
}

std::u32string request_text(const InspectRequest& r, const char* needed_by) {
  if (!r.text_given) throw InputError(std::string(needed_by) + " needs --text TEXT");
  return decode_utf8(r.text, "--text");
}

std::string with_newline(const nlohmann::ordered_json& json) { return json.dump() + "\n"; }

}  // namespace

Inspection inspect_for(const InspectRequest& r, const InspectModel& m) {
  if (!r.text_given) throw InputError("inspect-heads needs --text TEXT (or a mode: --roles, --circuits, --compare, ...)");
  const ModelConfig& c = m.model.config();
  if (r.layer) check_index("--layer", *r.layer, c.n_layer, "the model has " + std::to_string(c.n_layer) + " layers");
  if (r.head) check_index("--head", *r.head, c.n_head, "the model has " + std::to_string(c.n_head) + " heads");
  const std::u32string text = decode_utf8(r.text, "--text");
  if (r.position && !text.empty())
    check_index("--position", *r.position, static_cast<int64_t>(text.size()),
                "the text has " + std::to_string(text.size()) + " symbols");
  return inspect_heads(m.model, m.vocab, text, "--text", {HeadSelection{r.layer, r.head}, true});
}

std::string patterns_json_text(const InspectRequest& r, const InspectModel& m, const RoleReport& roles) {
  return patterns_json_text(r, m, inspect_for(r, m), roles);
}

std::string patterns_json_text(const InspectRequest& r, const InspectModel& m, const Inspection& inspection,
                               const RoleReport& roles) {
  std::vector<HeadParameters> parameters;
  if (r.weights)
    for (const auto& h : inspection.heads) parameters.push_back(head_parameters(m.model, h.layer, h.head));
  return with_newline(inspection_json(inspection, r.position, r.weights ? &parameters : nullptr, &roles));
}

HeadTrace trace_for(const InspectRequest& r, const InspectModel& m) {
  if (!r.trace) throw InputError("--trace needs L.H, the head to trace");
  const std::u32string text = request_text(r, "--trace");
  if (!r.position) throw InputError("--trace needs --position P, the query position to trace");
  const auto [layer, head] = parse_head_name(*r.trace, "--trace");
  return trace_head(m.model, m.vocab, text, "--text", layer, head, *r.position, std::min<int64_t>(r.top, 10));
}

std::string trace_json_text(const InspectRequest& r, const InspectModel& m) { return with_newline(trace_json(trace_for(r, m))); }

Attribution attribution_for(const InspectRequest& r, const InspectModel& m) {
  if (!r.text_given) throw InputError("--attribution needs --text TEXT (or --probe FILE)");
  const AttributionQuery query{r.position, symbol_option(m.vocab, "--answer", r.answer),
                               symbol_option(m.vocab, "--against", r.against)};
  return attribute_logits(m.model, m.vocab, decode_utf8(r.text, "--text"), "--text", query);
}

std::string attribution_json_text(const InspectRequest& r, const InspectModel& m) {
  return with_newline(attribution_json(attribution_for(r, m)));
}

LogitLens logit_lens_for(const InspectRequest& r, const InspectModel& m) {
  const std::u32string text = request_text(r, "--logit-lens");
  // --top symbols per stage, as asked (every symbol when it passes the vocabulary).
  return logit_lens(m.model, m.vocab, text, "--text", r.position, symbol_option(m.vocab, "--answer", r.answer), r.top);
}

std::string logit_lens_json_text(const InspectRequest& r, const InspectModel& m) {
  return with_newline(logit_lens_json(logit_lens_for(r, m)));
}

Patching patching_for(const InspectRequest& r, const InspectModel& m) {
  if (!r.clean || !r.corrupt) throw InputError("--patch needs --clean TEXT and --corrupt TEXT (or --probe FILE)");
  return patch_activations(m.model, m.vocab, decode_utf8(*r.clean, "--clean"), decode_utf8(*r.corrupt, "--corrupt"),
                           symbol_option(m.vocab, "--answer", r.answer), symbol_option(m.vocab, "--against", r.against));
}

std::string patch_json_text(const InspectRequest& r, const InspectModel& m) { return patching_json_text(patching_for(r, m)); }

std::string patching_json_text(const Patching& p) { return with_newline(patching_json(p)); }

std::string composition_json_text(const InspectModel& m) { return with_newline(composition_json(composition_scores(m.model))); }

std::string roles_json_text(const RoleReport& roles) { return with_newline(role_report_json(roles)); }

}  // namespace mg

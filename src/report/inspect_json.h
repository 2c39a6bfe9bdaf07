// inspect-heads' JSON, one function per mode, from the options as the command line names
// them: `inspect-heads --format json` prints what these return and `mini-gpt serve`'s
// /api/MODE answers with it, so the two are the same bytes by construction. Each function
// validates its options (InputError, naming the option as the command line spells it),
// computes with interp's technique and writes with report's writer; none reads or writes a
// file (the caller loads the model, and the probe set when the mode reads one).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "data/vocab.h"
#include "interp/attribution.h"
#include "interp/logit_lens.h"
#include "interp/patching.h"
#include "interp/patterns.h"
#include "interp/roles.h"
#include "interp/trace.h"
#include "nn/gpt.h"

namespace mg {

// The options the single-text modes read (the command line's names without the dashes).
struct InspectRequest {
  std::string text;
  bool text_given = false;  // --text "" is a text (refused as empty), not an absent one
  std::optional<int64_t> layer, head, position;
  bool weights = false;
  std::optional<std::string> trace;  // "L.H"
  std::optional<std::string> answer, against, clean, corrupt;
  int64_t top = 10;
};

// The model a request reads.
struct InspectModel {
  const Gpt& model;
  const Vocab& vocab;
};

// The default view's heads (--layer, --head, --position checked against the model and text).
Inspection inspect_for(const InspectRequest& r, const InspectModel& m);
// The default view's JSON: every selected head's projected_weights and summary, with ROLES
// (the role scores over the texts the caller chose: interp/ablation.h's probe_role_report).
std::string patterns_json_text(const InspectRequest& r, const InspectModel& m, const RoleReport& roles);
// The same of an INSPECTION inspect_for(r, m) already computed.
std::string patterns_json_text(const InspectRequest& r, const InspectModel& m, const Inspection& inspection,
                               const RoleReport& roles);

// --trace L.H --position P --text T.
HeadTrace trace_for(const InspectRequest& r, const InspectModel& m);
std::string trace_json_text(const InspectRequest& r, const InspectModel& m);

// --attribution --text T [--position P] [--answer A] [--against B].
Attribution attribution_for(const InspectRequest& r, const InspectModel& m);
std::string attribution_json_text(const InspectRequest& r, const InspectModel& m);

// --logit-lens --text T [--position P] [--answer A] [--top N].
LogitLens logit_lens_for(const InspectRequest& r, const InspectModel& m);
std::string logit_lens_json_text(const InspectRequest& r, const InspectModel& m);

// --patch --clean C --corrupt X [--answer A] [--against B].
Patching patching_for(const InspectRequest& r, const InspectModel& m);
std::string patch_json_text(const InspectRequest& r, const InspectModel& m);
std::string patching_json_text(const Patching& p);  // of a Patching patching_for computed

// --composition.
std::string composition_json_text(const InspectModel& m);

// --roles: the report as the command line prints it.
std::string roles_json_text(const RoleReport& roles);

}  // namespace mg

// The modes' parts that take more than a line of the table (request/inspect_modes.cpp): each
// a check (refusals before any work), a compute (the technique, returning interp's structs)
// or a write (report's writers, into a ModeOutput).
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "interp/attribution.h"
#include "interp/circuit_edges.h"
#include "interp/explain.h"
#include "interp/formation.h"
#include "interp/logit_lens.h"
#include "interp/patching.h"
#include "interp/patterns.h"
#include "interp/qk_ov.h"
#include "interp/roles.h"
#include "interp/score_split.h"
#include "interp/trace.h"
#include "report/compare_format.h"
#include "request/inspect_modes.h"

namespace mg {

// The text an argument carries, decoded (ArgumentError naming it when it is not UTF-8).
std::u32string argument_text(const std::string& name, const std::string& utf8);
// The request's --text, RequestError "MODE needs --text TEXT" when not given.
std::u32string required_text(const InspectRequest& r, const std::vector<RequestError::Part>& mode);
// UTF8 as one symbol of the vocabulary, named by NAME; none when not given.
std::optional<int32_t> symbol_argument(const Vocab& vocab, const std::string& name, const std::optional<std::string>& utf8);

// The default view.
struct Patterns {
  Inspection inspection;
  std::vector<HeadParameters> parameters;  // with --weights
  std::optional<RoleReport> roles;         // with --format json
};
void check_patterns(const InspectRequest& r);
Patterns compute_patterns(const InspectRequest& r, const Subject& s);
ModeOutput write_patterns(const InspectRequest& r, const Patterns& p);

// --html FILE.
struct Explorer {
  nlohmann::ordered_json data;
  std::string probe_name;  // "" without a probe set
  int64_t replay_steps = 0;  // with --replay: the kept evaluations on the slider
};
void check_explorer(const InspectRequest& r);
Explorer compute_explorer(const InspectRequest& r, const Subject& s);
ModeOutput write_explorer(const InspectRequest& r, const Explorer& e);

// --trace L.H.
void check_trace(const InspectRequest& r);
HeadTrace compute_trace(const InspectRequest& r, const Subject& s);

// --roles.
RoleReport compute_roles(const InspectRequest& r, const Subject& s);

// --circuits.
HeadCircuits compute_circuits(const InspectRequest& r, const Subject& s);
ModeOutput write_circuits(const InspectRequest& r, const HeadCircuits& c);

// --compare A B.
ComparisonReport compute_comparison(const InspectRequest& r, const Subject& s);

// --attribution, on a text or the probe set.
using AnyAttribution = std::variant<Attribution, ProbeAttribution>;
AnyAttribution compute_attribution(const InspectRequest& r, const Subject& s);
ModeOutput write_attribution(const InspectRequest& r, const AnyAttribution& a);

// --logit-lens.
LogitLens compute_logit_lens(const InspectRequest& r, const Subject& s);

// --patch, on two texts or the probe set.
using AnyPatching = std::variant<Patching, ProbePatching>;
AnyPatching compute_patching(const InspectRequest& r, const Subject& s);
ModeOutput write_patching(const InspectRequest& r, const AnyPatching& p);

// --explain.
Explanation compute_explanation(const InspectRequest& r, const Subject& s);

// --circuit, on the probe set.
EdgeCircuits compute_edge_circuits(const InspectRequest& r, const Subject& s);

// --score-split L.H.
void check_score_split(const InspectRequest& r);
ScoreSplit compute_score_split(const InspectRequest& r, const Subject& s);

// --timeline --run DIR: the run's formation events (request/timeline.h).
struct Timeline {
  std::vector<FormationEvent> events;
  std::string run_dir;  // as given, as the writers name it
};

}  // namespace mg

// The training run's head logging (cli/head_logging.h): role scores per evaluation and
// the explorer at the end, both from the inspection code the run itself does not include.
#include "cli/head_logging.h"

#include "interp/roles.h"
#include "report/explorer.h"
#include "report/roles_format.h"

namespace mg {
namespace {

// Every evaluation scores each head's role on the probe prompts, so metrics.jsonl shows
// when a head became what it is.
nlohmann::json head_role_fields(const EvaluationInputs& in) {
  if (in.probes.empty()) return nullptr;
  RoleOptions options;
  options.texts = probe_texts(in.vocab, in.probes, in.model.config().block_size);
  options.texts_description = "the probe prompts";
  options.probes = &in.probes;
  nlohmann::json head_roles = nlohmann::json::array();  // [{layer, head, scores...}]
  for (const HeadRoleScores& head : score_head_roles(in.model, in.vocab, options).heads) {
    nlohmann::json scores = head_roles_json(head);
    // Ablation is inspect-heads' and eval's, not every evaluation's: a probe scoring per head.
    scores.erase("accuracy_drop");
    scores.erase("accuracy_drop_by_kind");
    scores.erase("direct_logit");  // nor direct logit attribution
    scores.erase("direct_logit_by_kind");
    scores["layer"] = head.layer;
    scores["head"] = head.head;
    head_roles.push_back(std::move(scores));
  }
  nlohmann::json fields = nlohmann::json::object();
  fields["head_roles"] = std::move(head_roles);
  return fields;
}

}  // namespace

HeadLogging head_logging() { return HeadLogging{head_role_fields, write_run_explorer}; }

}  // namespace mg

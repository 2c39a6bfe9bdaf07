// The training run's head logging (cli/head_logging.h): role scores per evaluation and
// the explorer at the end, both from the inspection code the run itself does not include.
#include "cli/head_logging.h"

#include "interp/roles.h"
#include "io/atomic_file.h"
#include "report/roles_format.h"
#include "request/subject.h"

namespace mg {
namespace {

// Every evaluation scores each head's role on the probe prompts, so metrics.jsonl shows
// when a head became what it is.
nlohmann::json head_role_fields(const EvaluationInputs& in) {
  if (in.probes.empty()) return nullptr;
  RoleOptions options;
  options.texts = probe_texts(in.vocab, in.probes, in.model.config().block_size);
  options.texts_description = training_probe_description();
  options.probes = &in.probes;
  nlohmann::json head_roles = nlohmann::json::array();  // [{layer, head, scores...}]
  for (const HeadRoleScores& head : score_head_roles(in.model, in.vocab, options).heads) {
    // Ablation and direct logit attribution are inspect-heads' and eval's, not every
    // evaluation's: a probe scoring per head. (nlohmann::json: the keys sorted.)
    nlohmann::json scores = head_pattern_scores_json(head);
    scores["layer"] = head.layer;
    scores["head"] = head.head;
    head_roles.push_back(std::move(scores));
  }
  nlohmann::json fields = nlohmann::json::object();
  fields["head_roles"] = std::move(head_roles);
  return fields;
}

// heads.html: the request layer makes the page, written here as every output of cli.
std::optional<std::filesystem::path> write_run_explorer(const std::filesystem::path& run_dir,
                                                        const std::function<void()>& before_writing) {
  const std::optional<RunExplorerPage> page = run_explorer_page(run_dir, before_writing);
  if (!page) return std::nullopt;
  write_text_atomically(page->path, page->html);
  return page->path;
}

}  // namespace

HeadLogging head_logging() { return HeadLogging{head_role_fields, write_run_explorer}; }

}  // namespace mg

// What `train` records about the attention heads, handed to the training run from the
// layer above (cli/train_command.cpp) so that the run itself knows nothing of heads: each
// evaluation's head-role scores for metrics.jsonl (its evaluation callback) and, once the
// run is over, the head explorer heads.html.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>

#include "jobs/train.h"

namespace mg {

struct HeadLogging {
  // "head_roles": one object per head, layer, head and the pattern scores of inspect-heads
  // --roles on the probe prompts, without the ablation (a probe scoring per head); null
  // without a probe set.
  EvaluationCallback on_evaluation;
  // After the run: heads.html in RUN_DIR (jobs/head_html.h's write_run_explorer); the path
  // written, or nothing when the run has no probe set.
  std::function<std::optional<std::filesystem::path>(const std::filesystem::path& run_dir)> after_run;
};

HeadLogging head_logging();

}  // namespace mg

// What `train` records about the attention heads, handed to the training run by
// cli/train_command.cpp so that the run itself knows nothing of heads: each evaluation's
// head-role scores for metrics.jsonl (its evaluation callback) and, once the run is over,
// the head explorer heads.html. This is where training meets interpretation, and the only
// such place: train/ never includes interp/ or report/, nor they train/
// (scripts/check_layers.py); cli/ alone includes both.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>

#include "train/train.h"

namespace mg {

struct HeadLogging {
  // "head_roles": one object per head, layer, head and the pattern scores of inspect-heads
  // --roles on the probe prompts, without the ablation (a probe scoring per head); null
  // without a probe set.
  EvaluationCallback on_evaluation;
  // After the run: heads.html in RUN_DIR (request/subject.h's run_explorer_page); the path
  // written, or nothing when the run has no probe set or none of its prompts is in the
  // vocabulary. BEFORE_WRITING is called once it is sure a page will be made.
  std::function<std::optional<std::filesystem::path>(const std::filesystem::path& run_dir,
                                                     const std::function<void()>& before_writing)>
      after_run;
};

HeadLogging head_logging();

}  // namespace mg
